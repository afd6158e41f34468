"""Peak memory of a refresh and of one decision as ONE session grows: 10k, 100k, 1M lines (issue 27).

For each agent format and size, a temporary folder gets one session of that many lines (written
by the qualification's session writers, a round at a time: a user turn, the agent's reply and a
`pytest` call that fails every third round), a checkout, and a state folder that enables the
scope. Then two new processes run, each under a small Python parent that reports its children's
peak RSS (`RUSAGE_CHILDREN` `ru_maxrss`: the largest of the CLI process and its parser workers):

    obelisk-session-evidence index refresh --format json   (a new index, built from nothing)
    obelisk-session-evidence run --situation S --format json   (one decision against that index)

Each peak is printed beside its ratio to the smallest size's. Nothing is asserted. Usage:

    nice .venv/bin/python -m bench.session_peak_memory [--lines 10000,100000,1000000]
        [--sources claude,codex] [--workdir DIR]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from bench._report import Table
from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY, situation
from obelisk_session_evidence.contracts.config import Enablement, EnablementConfig
from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.native.parsers import default_roots
from obelisk_session_evidence.qualify.session_writers import FAILING_COMMAND
from obelisk_session_evidence.qualify.session_writers._base import Spec, Step, Writer, dumps
from obelisk_session_evidence.qualify.session_writers._claude import ClaudeWriter
from obelisk_session_evidence.qualify.session_writers._codex import CodexWriter
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private

DEFAULT_LINES: Final = (10_000, 100_000, 1_000_000)
WRITERS: Final[dict[SourceKind, type[Writer]]] = {"claude": ClaudeWriter, "codex": CodexWriter}
TIMEOUT_S: Final = 3 * 3600
TARGET_MIB: Final = 150.0
_MEASURE: Final = r"""
import json, resource, subprocess, sys, time
started = time.perf_counter()
answer = subprocess.run(sys.argv[1:], capture_output=True, check=False)
print(json.dumps({
    "returncode": answer.returncode,
    "peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    "seconds": time.perf_counter() - started,
    "stderr": answer.stderr.decode("utf-8", "replace")[-400:],
    "stdout": answer.stdout.decode("utf-8", "replace")[-4000:],
}))
"""
"""The measuring parent: started with `-I` (a bare interpreter, about 10 MB), so the figure is its
children's and not the bench's own (Linux carries `ru_maxrss` over from a parent through fork)."""


@dataclass(frozen=True, slots=True)
class Measured:
    """One child process's outcome: its peak RSS, its wall time and what it printed."""

    peak_mib: float
    seconds: float
    stdout: str


def write_session(home: Path, repo: Path, source: SourceKind, lines: int) -> Path:
    """One session of at least `lines` lines, streamed to disk a round at a time (never held whole)."""
    started = datetime.now(UTC) - timedelta(days=2)
    spec = Spec(
        source=source,
        index=0,
        session_id="5e551011-0000-4000-a000-000000000001",
        cwd=str(repo),
        repo_root=str(repo),
        branch="main",
        commit="0" * 40,
        started=started,
        is_bait=False,
    )
    writer = WRITERS[source](home, spec)
    path = _session_path(home, spec, source)
    path.parent.mkdir(parents=True, exist_ok=True)
    written, n = 0, 0
    with open(path, "w", encoding="utf-8") as handle:
        while written < lines:
            writer.user(n, f"Run the auth tests again (round {n}).", meta=False)
            writer.assistant(n + 1, f"Re-running the auth tests, round {n}.")
            failing = n % 3 == 0
            writer.call(n + 2, Step("call", tool="shell", target=FAILING_COMMAND, exit_code=int(failing)), f"c{n:09d}")
            handle.write("".join(dumps(record) + "\n" for record in writer.records))
            written += len(writer.records)
            writer.records.clear()
            n += 3
    return path


def _session_path(home: Path, spec: Spec, source: SourceKind) -> Path:
    """Where the agent keeps this session (the writers' own `finish` layout)."""
    if source == "claude":
        folder = re.sub(r"[^A-Za-z0-9]", "-", spec.cwd)
        return home / ".claude" / "projects" / folder / f"{spec.session_id}.jsonl"
    stamp = spec.started
    name = f"rollout-{stamp:%Y-%m-%dT%H-%M-%S}-{spec.session_id}.jsonl"
    return home / ".codex" / "sessions" / f"{stamp:%Y/%m/%d}" / name


def prepare(work: Path, source: SourceKind, lines: int) -> tuple[StatePaths, Path, int]:
    """A checkout, one session of `lines` lines and a state folder enabling the scope over it."""
    repo = work / "work" / "alpha"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    home = work / "home"
    session = write_session(home, repo, source, lines)
    state = StatePaths(work / "state")
    enablement = Enablement(
        surface="replan-history",
        agent_id=FIXTURE_AGENT,
        project_id=FIXTURE_PROJECT,
        repository_id=FIXTURE_REPOSITORY,
        repo_roots=[str(repo)],
        sources=[source],
        source_roots={source: str(default_roots(home)[source])},
        enabled_at=datetime.now(UTC) - timedelta(days=30),
    )
    write_private(state.config_file, EnablementConfig(enablements=[enablement]).model_dump_json().encode())
    document = work / "situation.json"
    document.write_text(json.dumps(situation(situation_id="peak-memory", commands=[FAILING_COMMAND])))
    return state, document, session.stat().st_size


def measure(command: list[str], state: StatePaths) -> Measured:
    """Run `command` under the measuring parent; its children's peak RSS."""
    environ = {key: value for key, value in os.environ.items() if not key.startswith("PREFECT_")}
    environ["OBELISK_SESSION_EVIDENCE_HOME"] = str(state.root)
    answer = subprocess.run(
        [sys.executable, "-I", "-c", _MEASURE, *command],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
        timeout=TIMEOUT_S,
    )
    result = json.loads(answer.stdout)
    if result["returncode"] not in (0, 2):
        raise RuntimeError(f"{command[1:3]} exited {result['returncode']}: {result['stderr'][-200:]}")
    return Measured(result["peak_kib"] / 1024, result["seconds"], result["stdout"])


def _summary(refresh: Measured, decision: Measured) -> tuple[int, str]:
    """What the two processes said, in counts (never content): messages indexed, the verdict."""
    try:
        report, answer = json.loads(refresh.stdout), json.loads(decision.stdout)
        return int(report["messages_written"]), str(answer["comparison"]["verdict"])
    except (ValueError, KeyError, TypeError):
        return -1, "unparsed output"


def size_label(lines: int) -> str:
    """`10k`, `100k`, `1M`."""
    if lines >= 1_000_000 and lines % 1_000_000 == 0:
        return f"{lines // 1_000_000}M"
    return f"{lines // 1000}k" if lines >= 1000 and lines % 1000 == 0 else str(lines)


def peak_table(
    sizes: Sequence[int], sources: Sequence[SourceKind] = tuple(WRITERS), *, workdir: Path | None = None, log=print
) -> tuple[Table, dict[str, float]]:
    """3d: per format and size, the peak RSS of a refresh from nothing and of one decision, and the
    figures (`session_refresh_peak_mib_<size>_<source>`, `session_1m_refresh_peak_mib`: the worst format)."""
    table = Table(
        "3d. Peak memory as one session grows (new process each, new index)",
        (
            "format",
            "lines",
            "MB",
            "messages",
            "refresh peak MiB",
            "÷ smallest",
            "refresh s",
            "run peak MiB",
            "÷ smallest",
            "verdict",
        ),
    )
    figures: dict[str, float] = {}
    cli = str(Path(sys.executable).parent / "obelisk-session-evidence")
    for source in sources:
        smallest: tuple[float, float] | None = None
        for lines in sorted(sizes):
            with tempfile.TemporaryDirectory(prefix="ose-bench-peak-", dir=workdir) as folder:
                state, document, size = prepare(Path(folder), source, lines)
                log(f"{source} session of {lines:,} lines ({size / 1e6:.0f} MB): refresh, then one decision")
                refresh = measure([cli, "index", "refresh", "--format", "json"], state)
                decision = measure([cli, "run", "--situation", str(document), "--format", "json"], state)
            smallest = smallest or (refresh.peak_mib, decision.peak_mib)
            messages, verdict = _summary(refresh, decision)
            table.add(
                source,
                f"{lines:,}",
                f"{size / 1e6:.1f}",
                f"{messages:,}",
                f"{refresh.peak_mib:.0f}",
                f"{refresh.peak_mib / smallest[0]:.2f}",
                f"{refresh.seconds:.1f}",
                f"{decision.peak_mib:.0f}",
                f"{decision.peak_mib / smallest[1]:.2f}",
                verdict,
            )
            label = size_label(lines)
            figures[f"session_refresh_peak_mib_{label}_{source}"] = refresh.peak_mib
            figures[f"session_run_peak_mib_{label}_{source}"] = decision.peak_mib
            if lines == 1_000_000:
                figures["session_1m_refresh_peak_mib"] = max(
                    refresh.peak_mib, figures.get("session_1m_refresh_peak_mib", 0.0)
                )
    table.notes += [
        f"Target: a refresh of one 1M-line session peaks at <= {TARGET_MIB:.0f} MB. Peak RSS is the largest of"
        " the CLI process and its parser workers (`RUSAGE_CHILDREN` of a bare parent); `÷ smallest` is against"
        " the smallest size of the same format.",
        "A session file is parsed at most `PARSE_CHUNK_BYTES` (16 MiB) at a time, each chunk's rows written"
        " before the next is read: past one chunk, the refresh's peak no longer grows with the session.",
        "`run`: one decision of a situation that repeats the session's failing command, against that index"
        " (its automatic refresh finds nothing changed).",
    ]
    return table, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default=",".join(str(n) for n in DEFAULT_LINES))
    parser.add_argument("--sources", default=",".join(WRITERS))
    parser.add_argument("--workdir", type=Path, default=None, help="where the sessions go (default: a temp dir)")
    arguments = parser.parse_args()
    wanted = arguments.sources.split(",")
    sources = [source for source in WRITERS if source in wanted]
    sizes = [int(n) for n in arguments.lines.split(",")]

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    table, _ = peak_table(sizes, sources, workdir=arguments.workdir, log=log)
    print(table.markdown())


if __name__ == "__main__":
    main()
