"""The `qualify` flow under the shared Prefect test server, on a one-case-per-family sample."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.prefect


def test_qualify_flow_writes_the_report(prefect_harness, tmp_path: Path) -> None:
    from flows.qualify import qualify_flow

    summary = qualify_flow(str(tmp_path / "q"), seed=0, backend="standin", per_family=1)
    assert Path(summary.report_path).is_file()
    assert (tmp_path / "q" / "results.json").is_file()


def test_qualify_flow_tasks_are_hardened() -> None:
    from flows.qualify import calibrate_task, run_arms_task, write_report_task

    for task in (run_arms_task, calibrate_task, write_report_task):
        assert task.persist_result is False and task.log_prints is False
        assert task.cache_policy.__class__.__name__ == "_None"
