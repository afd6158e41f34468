"""Peak memory of a refresh, and of a lookup's automatic refresh, on one session line of 200 MB.

Each figure comes from its own process (`ru_maxrss`), next to the same process's peak after its
imports, so the line's cost is the difference. Usage:

    PYTHONPATH=$PWD .venv/bin/python -m bench.oversize_record_peak --workdir DIR [--line-mb 200]
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

_CHILD = r"""
import json, resource, sys
from datetime import UTC, datetime
from pathlib import Path
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider

mode, workdir = sys.argv[1], Path(sys.argv[2])
root, index_dir = workdir / "claude", workdir / f"index-{mode}"
imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if mode == "refresh":
    report = refresh_index(index_file(index_dir), {"claude": [root]})
    outcome = f"skipped_records={report.skipped_records} freshness={report.freshness}"
else:
    enablement = Enablement(
        surface="replan-history", agent_id="agent", project_id="project", repository_id="repo",
        repo_roots=[str(workdir / "repo")], sources=["claude"], source_roots={"claude": str(root)},
        enabled_at=datetime(2026, 11, 1, tzinfo=UTC),
    )
    provider = NativeIndexProvider(index_dir, enablement, refresh_budget_s=600.0)
    request = HistoricalEvidenceRequest.model_validate({
        "request_id": "req-peak", "situation_id": "sit-peak", "trigger": "replan_repetition",
        "scope": {"agent_id": "agent", "project_id": "project", "repository_id": "repo"},
        "evidence_types": ["prior_failure", "decision", "tool_outcome"], "query_terms": ["pytest"],
        "limits": {"max_sessions": 3, "max_items": 5, "max_snippet_chars": 400, "max_total_chars": 2000},
    })
    result = provider.search(request).result
    outcome = f"items={len(result.items)} freshness={result.freshness}"
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"mode": mode, "after_imports_mb": imported / 1024, "peak_mb": peak / 1024, "outcome": outcome}))
"""


def write_session(root: Path, line_mb: int) -> Path:
    """A Claude session: one short line, one line of `line_mb` MB, one short line."""
    folder = root / "-work-repo"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "huge.jsonl"

    def record(text: str, number: int) -> str:
        return json.dumps(
            {
                "type": "user",
                "uuid": f"u{number}",
                "sessionId": "huge",
                "cwd": "/work/repo",
                "timestamp": "2026-03-01T10:00:00.000Z",
                "message": {"role": "user", "content": text},
            }
        )

    with open(path, "w", encoding="utf-8") as handle:
        handle.write(record("pytest before the huge line", 1) + "\n")
        head, tail = record("\x00", 2).split("\\u0000")
        handle.write(head)
        chunk = "y" * (1 << 20)
        for _ in range(line_mb):
            handle.write(chunk)
        handle.write(tail + "\n")
        handle.write(record("pytest after the huge line", 3) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--line-mb", type=int, default=200)
    arguments = parser.parse_args()
    (arguments.workdir / "repo").mkdir(parents=True, exist_ok=True)
    write_session(arguments.workdir / "claude", arguments.line_mb)
    for mode in ("refresh", "lookup"):
        completed = subprocess.run(
            [sys.executable, "-c", _CHILD, mode, str(arguments.workdir)], capture_output=True, text=True, check=False
        )
        if completed.returncode != 0:
            sys.exit(f"{mode}: the measuring process failed:\n{completed.stderr[-2000:]}")
        figures = json.loads(completed.stdout)
        print(
            f"{mode}: peak {figures['peak_mb']:.0f} MB (after imports {figures['after_imports_mb']:.0f} MB;"
            f" line of {arguments.line_mb} MB) {figures['outcome']}"
        )


if __name__ == "__main__":
    main()
