"""`replay` as the Prefect flow `replay-history`: the same figures as in process, split by scope
and by part of a scope, and nothing of the history in Prefect's database, storage or logs."""

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.replay import merged, replay_history, replay_one_scope, scopes_to_replay
from obelisk_session_evidence.state.paths import StatePaths, state_paths
from tests.privacy import (
    canary_places_in_database,
    canary_places_in_files,
    drain_prefect_workers,
    prefect_database_path,
)
from tests.replay.history import CANARY, History, enable

TEST = "pytest tests/test_auth.py"
BUILD = f"make build-{CANARY}"


@pytest.fixture
def history(tmp_path: Path) -> StatePaths:
    """Three sessions: a test failing across sessions, a build failing then passing within one."""
    root = tmp_path / "claude"
    sessions = History(root)
    sessions.session("one").bash(TEST, f"FAILED {CANARY}", exit_code=1).bash("ls", "src").write()
    (
        sessions.session("two")
        .bash(TEST, "FAILED test_login", exit_code=1)
        .bash(BUILD, f"make: *** [{CANARY}] Error 2", exit_code=2)
        .bash(BUILD, "built")
        .write()
    )
    sessions.session("three").bash(BUILD, "built").bash(TEST, "FAILED test_login", exit_code=1).write()
    paths = state_paths()
    enable(paths, root)
    return paths


def _without_times(document: dict) -> dict:
    """A report without what differs between two runs of the same history (wall times, the date)."""
    document = json.loads(json.dumps(document))
    document.pop("generated_at")
    for figures in [document["total"], *(scope["figures"] for scope in document["scopes"])]:
        figures.pop("decide_ms_p95")
    for scope in document["scopes"]:
        scope.pop("seconds")
        scope.pop("calls_per_second")
    return document


def test_parts_of_a_timeline_merge_into_the_whole_replay(history):
    """Each part decides only its calls, reading the earlier ones for the naive rule: merged, the
    parts give the whole scope's figures and listed calls."""
    (enablement,) = scopes_to_replay(history, project_id=None, agent_id=None)
    whole = replay_one_scope(history, enablement)
    calls = whole.report.tool_calls
    parts = [replay_one_scope(history, enablement, part=range(start, min(start + 2, calls))) for start in (0, 2, 4, 6)]
    assert [len(part.judged) for part in parts] == [2, 2, 2, 1]
    together = merged(parts)
    assert [replace(call, decide_ms=0.0) for call in together.judged] == [
        replace(call, decide_ms=0.0) for call in whole.judged
    ]
    assert _without_times(replay_history([together]).model_dump(mode="json")) == _without_times(
        replay_history([whole]).model_dump(mode="json")
    )
    assert whole.report.figures.dead_ends == 2  # the test's re-runs, across sessions


def test_a_dask_address_without_the_dask_runner_is_refused(history):
    result = CliRunner().invoke(main, ["replay", "--dask-address", "tcp://127.0.0.1:1", "--format", "json"])
    assert result.exit_code == 2 and json.loads(result.stdout)["reason_code"] == "invalid_input"


def test_the_flow_refuses_the_obelisk_adapter_before_starting_prefect(history, monkeypatch):
    """Typed, at once: no temporary API is started for a replay that cannot run."""
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    result = CliRunner().invoke(main, ["replay", "--prefect", "--provider", "obelisk", "--format", "json"])
    assert result.exit_code == 2 and json.loads(result.stdout)["reason_code"] == "unsupported_option"
    assert "temporary Prefect API" not in result.stderr


def _scan(canary: str) -> list[str]:
    drain_prefect_workers()
    database = prefect_database_path()
    return canary_places_in_database(canary, database) + canary_places_in_files(
        canary, database.parent, Path(os.environ["PREFECT_HOME"])
    )


@pytest.mark.prefect
def test_the_flow_replays_as_in_process_and_leaves_no_canary_in_prefect(prefect_harness, history, tmp_path):
    """Split into parts of two calls (four tasks), the flow reports what the in-process replay does;
    the owner's listing comes back whole through the private spool, which is emptied; Prefect's
    database, storage and logs hold nothing of the history."""
    from prefect.settings import PREFECT_API_URL

    from tests.operators.rest import PrefectRest

    private = tmp_path / "mine.json"
    flowed = CliRunner().invoke(
        main, ["replay", "--prefect", "--calls-per-task", "2", "--format", "json", "--private-out", str(private)]
    )
    assert flowed.exit_code == 0, flowed.output
    here = CliRunner().invoke(main, ["replay", "--format", "json"])
    assert _without_times(json.loads(flowed.stdout)) == _without_times(json.loads(here.stdout))
    assert CANARY not in flowed.output
    listed = json.loads(private.read_text())
    # The build's false alarm (failed, then built), and the test re-run after a build that missed
    # its dead end (a build writes what tests read: a change since the failure).
    assert sorted((call["command"], call["verdict"]) for call in listed) == [
        (BUILD, "repeats_prior_failure"),
        (TEST, "repeats_prior_failure_changed_since"),
    ]
    assert not any((history.spool_dir / "replays").iterdir())
    drain_prefect_workers()
    rest = PrefectRest(PREFECT_API_URL.value())
    run = rest.latest_flow_run("replay-history")
    assert run["state_type"] == "COMPLETED"
    names = sorted(task["name"] for task in rest.task_runs(run["id"]))
    assert names == ["prepare-replay-scope", *(f"replay-part-{a}-{b}" for a, b in ((0, 2), (2, 4), (4, 6), (6, 7)))]
    assert _scan(CANARY) == []


@pytest.mark.prefect
def test_the_flow_on_a_local_dask_cluster_replays_as_in_process(prefect_harness, history):
    """Dask workers are other processes: they find the scope from the state folder's root alone."""
    pytest.importorskip("prefect_dask", reason="needs the dask extra (pip install '.[dask]')")
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "120s"}):  # workers import Prefect
        dasked = CliRunner().invoke(
            main, ["replay", "--task-runner", "dask", "--concurrency", "2", "--calls-per-task", "3", "--format", "json"]
        )
    assert dasked.exit_code == 0, dasked.output
    here = CliRunner().invoke(main, ["replay", "--format", "json"])
    assert _without_times(json.loads(dasked.stdout)) == _without_times(json.loads(here.stdout))
