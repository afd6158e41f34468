"""The cold-run bench measures what it says: an admitted and a not-admitted run, paired with the
bare interpreter, both encoders agreeing. No timing is asserted."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_cold_run_bench_writes_paired_series_for_both_paths(tmp_path: Path) -> None:
    out = tmp_path / "cold_run.json"
    environ = {name: value for name, value in os.environ.items() if not name.startswith(("PREFECT_", "OBELISK_"))}
    completed = subprocess.run(
        [sys.executable, "-m", "bench.cold_run", "--pairs", "1", "--importtime", "--top", "3", "--out", str(out)],
        cwd=ROOT,
        env={**environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    report = json.loads(out.read_text())
    series = {row["situation"]: row for row in report["series"]}
    assert series["admitted"]["decisions"] == ["admitted/repeats_prior_failure"]
    assert series["not_admitted"]["decisions"] == ["cross_project_denied/not_compared"]
    floor = series.pop("stack_floor")
    assert floor["pairs"] == 1 and floor["run_wall_ms_median"] > 0 and floor["met"] is None
    for row in series.values():
        assert row["pairs"] == 1 and row["bare_wall_ms_median"] > 0 and row["run_wall_ms_median"] > 0
        assert isinstance(row["met"], bool) and row["target_ratio"] in (8.0, 5.0)
    assert all(len(rows) == 3 for rows in report["top_imports"].values())
    assert report["encoders"]["equal"] is True and report["encoders"]["tokens"] > 0
