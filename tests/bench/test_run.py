"""The bench driver renders every section (`--smoke`: tiny corpora, seconds). No timing is asserted."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SECTION_HEADERS = (
    "### Targets (issue 17) and the figures reached",
    "### 1. Cold-path decision, end to end",
    "### 1b. Cold-path decision per stage",
    "### 1c. Cold `run` process against the bare interpreter",
    "### 2. Against what a user would use instead",
    "### 3a. Indexing: full build",
    "### 3b. Indexing: refresh when little or nothing changed",
    "### 3c. Indexing: peak memory for one large session file",
    "### 3d. Peak memory as one session grows",
    "### 4. Context: private result size per admitted query",
    "### 5. Batch:",
    "### 6. Tokenizer and comparator",
    "### 8. Replay in process",
)


def test_run_smoke_writes_every_section(tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    environ = {name: value for name, value in os.environ.items() if not name.startswith("PREFECT_")}
    completed = subprocess.run(
        [sys.executable, "-m", "bench.run", "--smoke", "--out", str(out), "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT,
        env={**environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    report = out.read_text(encoding="utf-8")
    positions = [report.find(header) for header in SECTION_HEADERS]
    assert all(position >= 0 for position in positions), [
        h for h, p in zip(SECTION_HEADERS, positions, strict=False) if p < 0
    ]
    assert positions == sorted(positions)
    assert "| section | failed:" not in report
    assert "- **machine**:" in report and "- **packages**: prefect" in report
    results = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert results["profile"] == "smoke" and results["schema"].startswith("obelisk-session-evidence-bench-results/")
    assert len(results["targets"]) == 11 and results["figures"]["decisions_2k"] == 8
    assert results["figures"]["replay_calls"] == 100 and results["figures"]["replay_calls_per_cpu_s"] > 0
    # Public output: every figure is a number (or null), so no snippet, term or command can ride along.
    assert all(value is None or type(value) in (int, float) for value in results["figures"].values())
    for target in results["targets"]:
        assert target["met"] in (True, False, None)
        assert (target["met"] is None) == (target["value"] is None) == (target["not_measured"] is not None)
