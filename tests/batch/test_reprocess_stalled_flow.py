"""The `reprocess-stalled` flow under the session's Prefect test server, threads and Dask."""

import os
from pathlib import Path

import pytest

from obelisk_session_evidence.batch.manifest import load_manifest, spool_batch
from obelisk_session_evidence.batch.outputs import decisions_in, read_record
from obelisk_session_evidence.batch.run import run_batch_directly
from obelisk_session_evidence.state.paths import state_paths
from tests.batch import standin
from tests.operators.rest import PrefectRest
from tests.privacy import (
    canary_places_in_database,
    canary_places_in_files,
    drain_prefect_workers,
    prefect_database_path,
)

pytestmark = pytest.mark.prefect


def _api() -> PrefectRest:
    """The harness's REST API, once the client's queued events (task runs among them) are in."""
    from prefect.settings import PREFECT_API_URL

    drain_prefect_workers()
    return PrefectRest(PREFECT_API_URL.value())


def _run(manifest_ref, **options):
    from obelisk_session_evidence.flows.reprocess_stalled import run_reprocess_stalled_flow

    return run_reprocess_stalled_flow(manifest_ref, paths=state_paths(), **options)


def test_flow_records_every_item_and_never_stops_on_a_bad_one(prefect_harness, enabled, standin_backend, tmp_path):
    manifest_ref = spool_batch(enabled, standin.stalled_items(), out_dir=tmp_path / "out")
    summary = _run(manifest_ref)
    assert (summary.decided, summary.failed, summary.missing) == (6, 1, 0)
    assert summary.failures_by_reason == {"invalid_input": 1}
    assert summary.provider_faults_by_reason == {"provider_crashed": 1}
    run = _api().latest_flow_run("reprocess-stalled")
    assert (run["name"], run["state_type"], run["parameters"]) == (
        f"reprocess-stalled/7 items/{manifest_ref.removeprefix('sha256:')[:12]}",
        "FAILED",
        {"manifest_ref": manifest_ref, "state_ref": None},
    )
    assert run["state"]["message"] == "1 of 7 items failed (invalid_input 1); 6 decided"


def test_a_batch_where_every_item_is_decided_ends_completed(prefect_harness, enabled, standin_backend, tmp_path):
    manifest_ref = spool_batch(enabled, standin.stalled_items(2, invalid=False), out_dir=tmp_path / "out")
    summary = _run(manifest_ref)
    assert (summary.decided, summary.failed) == (4, 0)
    run = _api().latest_flow_run("reprocess-stalled")
    assert (run["state_type"], run["name"]) == ("COMPLETED", f"reprocess-stalled/4 items/{manifest_ref[7:19]}")


def test_flow_task_runs_tags_and_artifacts_are_operator_readable(prefect_harness, enabled, standin_backend, tmp_path):
    manifest_ref = spool_batch(enabled, standin.stalled_items(), out_dir=tmp_path / "out")
    _run(manifest_ref)
    api = _api()
    run = api.latest_flow_run("reprocess-stalled")
    task_runs = api.task_runs(run["id"])
    names = sorted(task["name"] for task in task_runs)
    assert names == [
        "item-1/stalled-0",
        "item-2/stalled-1",
        "item-3/stalled-2",
        "item-4/stalled-3",
        "item-5/other-agent",
        "item-6/crash-1",
        "item-7/invalid-1",
        "plan-batch",
        "summarize-batch",
    ]
    failed = [task for task in task_runs if task["state_type"] == "FAILED"]
    assert [(task["name"], task["state"]["message"]) for task in failed] == [
        ("item-7/invalid-1", "item at line 7 failed: invalid_input (<root>: unknown field (1))")
    ]
    assert not [log for log in api.logs(run["id"]) if "Traceback" in log["message"]]
    assert {"batch", "trigger:replan_repetition", "verdict:novel", "agent:037082b8"} <= set(run["tags"])
    artifacts = {artifact["key"]: artifact for artifact in api.artifacts(run["id"])}
    assert set(artifacts) == {"reprocess-stalled-summary", "reprocess-stalled-items"}
    assert "| Failure (no decision) | items |" in artifacts["reprocess-stalled-summary"]["data"]


def test_flow_rerun_skips_settled_items(prefect_harness, enabled, standin_backend, tmp_path):
    manifest_ref = spool_batch(enabled, standin.stalled_items(), out_dir=tmp_path / "out")
    _run(manifest_ref)
    summary = _run(manifest_ref)
    assert (summary.processed_this_run, summary.skipped_this_run) == (2, 5)


def test_flow_decisions_equal_the_direct_batch(prefect_harness, enabled, standin_backend, tmp_path):
    items = standin.stalled_items()
    direct = spool_batch(enabled, items, out_dir=tmp_path / "direct")
    flowed = spool_batch(enabled, items, out_dir=tmp_path / "flow")
    run_batch_directly(enabled, direct)
    _run(flowed, concurrency=3)
    assert decisions_in(tmp_path / "flow") == decisions_in(tmp_path / "direct")


def test_flow_on_a_local_dask_cluster_decides_as_the_thread_runner(prefect_harness, enabled, standin_backend, tmp_path):
    pytest.importorskip("prefect_dask", reason="needs the dask extra (pip install '.[dask]')")
    import dask

    items = standin.stalled_items(3)
    threads = spool_batch(enabled, items, out_dir=tmp_path / "threads")
    dasked = spool_batch(enabled, items, out_dir=tmp_path / "dask")
    _run(threads, task_runner="thread", concurrency=2)
    # Dask workers are fresh processes: the stand-in provider is installed there by a preload.
    settings = {
        "distributed.worker.preload": ["tests.batch.standin_preload"],
        "distributed.comm.timeouts.connect": "120s",  # workers import Prefect; CI can be slow
    }
    with dask.config.set(settings):
        summary = _run(dasked, task_runner="dask", concurrency=2)
    assert (summary.decided, summary.failed, summary.missing) == (5, 1, 0)
    by_dask, by_threads = decisions_in(tmp_path / "dask"), decisions_in(tmp_path / "threads")
    assert _outline(by_dask) == _outline(by_threads)  # a readable diff first
    assert by_dask == by_threads
    manifest = load_manifest(enabled, dasked)
    assert all(read_record(tmp_path / "dask", ref) for ref in manifest.item_refs)


def _outline(decisions):
    return {
        ref: (
            d["situation_id"],
            d["retrieval"]["reason_code"],
            d["comparison"]["verdict"],
            (d["receipt"] or {}).get("provider_version"),
        )
        for ref, d in decisions.items()
    }


def test_flow_leaves_no_canary_in_prefect_storage_or_outputs(prefect_harness, enabled, standin_backend, tmp_path):
    out = tmp_path / "out"
    manifest_ref = spool_batch(enabled, standin.stalled_items(), out_dir=out)
    _run(manifest_ref)
    _run(manifest_ref)
    drain_prefect_workers()
    database = prefect_database_path()
    prefect_home = Path(os.environ["PREFECT_HOME"])
    # The REST answers come from this database; tests/operators scans them on a standing server.
    assert canary_places_in_database(standin.CANARY, database) == []
    assert canary_places_in_files(standin.CANARY, database.parent, prefect_home, out) == []
