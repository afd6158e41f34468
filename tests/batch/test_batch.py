"""The batch library without Prefect: input, spool, idempotency, resumption, bad items, outputs."""

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from obelisk_session_evidence.batch.manifest import (
    load_manifest,
    read_stalled_items,
    read_stalled_lines,
    spool_batch,
)
from obelisk_session_evidence.batch.outputs import (
    _nearest_rank,
    count_records,
    decisions_in,
    read_record,
    record_path,
)
from obelisk_session_evidence.batch.plan import index_revision, plan_batch
from obelisk_session_evidence.batch.run import decide_item, run_batch_directly
from obelisk_session_evidence.compose import backend_folders, decide
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.providers.factory import default_provider_factory
from obelisk_session_evidence.state.spool import spooled_path
from tests.batch import standin
from tests.privacy import canary_places_in_files

ROOT = Path(__file__).resolve().parents[2]


def _spool(paths, tmp_path, items=None, **kwargs):
    out = tmp_path / "out"
    return spool_batch(paths, items or standin.stalled_items(), out_dir=out, **kwargs), out


def _run(paths, manifest_ref, revision=standin.REVISION, **options):
    """The batch, answered by the stand-in, whose index is at `standin.REVISION` unless told."""
    return run_batch_directly(paths, manifest_ref, provider_factory=standin.factory(revision), **options)


def _plan(paths, manifest_ref, revision=standin.REVISION):
    return plan_batch(paths, manifest_ref, provider_factory=standin.factory(revision))


def test_read_stalled_items_jsonl_skips_blank_lines(tmp_path):
    source = tmp_path / "stalled.jsonl"
    source.write_bytes(b'{"a": 1}\n\n  \n{"b": 2}\n')
    assert read_stalled_items(source) == [b'{"a": 1}', b'{"b": 2}']


def test_read_stalled_items_folder_reads_json_and_jsonl_in_name_order(tmp_path):
    (tmp_path / "b.jsonl").write_bytes(b'{"b": 1}\n{"b": 2}\n')
    (tmp_path / "a.json").write_bytes(b'{\n  "a": 1\n}\n')
    (tmp_path / "notes.txt").write_bytes(b"ignored")
    (tmp_path / ".hidden.json").write_bytes(b"ignored")
    assert read_stalled_items(tmp_path) == [b'{\n  "a": 1\n}\n', b'{"b": 1}', b'{"b": 2}']


@pytest.mark.parametrize(
    ("setup", "detail"),
    [
        (lambda p: None, "cannot read {source}: No such file or directory"),
        (lambda p: p.write_bytes(b"\n\n"), "the batch input holds no items"),
    ],
)
def test_read_stalled_items_rejects_missing_or_empty_input(tmp_path, setup, detail):
    source = tmp_path / "stalled.jsonl"
    setup(source)
    with pytest.raises(InvalidInput) as raised:
        read_stalled_items(source)
    assert raised.value.detail == detail.format(source=source)


def test_read_stalled_lines_numbers_items_by_input_line_across_a_folder(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(b'{"a": 1}\n\n{"a": 2}\n')
    (tmp_path / "b.json").write_bytes(b'{\n  "b": 1\n}\n')
    (tmp_path / "c.jsonl").write_bytes(b'{"c": 1}')
    assert [line for line, _ in read_stalled_lines(tmp_path)] == [1, 3, 4, 7]


def test_an_unreadable_item_file_names_the_path_and_the_os_reason(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(b"{}\n")
    locked = tmp_path / "b.jsonl"
    locked.symlink_to(tmp_path / "b-gone.jsonl")
    (tmp_path / "b-gone.jsonl").write_bytes(b"{}")
    (tmp_path / "b-gone.jsonl").unlink()
    with pytest.raises(InvalidInput) as raised:
        read_stalled_items(locked)
    assert raised.value.detail == f"cannot read {locked}: No such file or directory"


def test_spool_batch_dedupes_keeps_order_and_is_private(paths, tmp_path):
    items = standin.stalled_items()
    manifest_ref, out = _spool(paths, tmp_path, items + items[:2])
    manifest = load_manifest(paths, manifest_ref)
    assert manifest.input_count == len(items) + 2
    assert len(manifest.item_refs) == len(items)
    assert manifest.out_dir == str(out.resolve())
    assert stat.S_IMODE(spooled_path(paths, "manifests", manifest_ref).stat().st_mode) == 0o600


def test_load_manifest_rejects_a_tampered_manifest(paths, tmp_path):
    manifest_ref, _ = _spool(paths, tmp_path)
    path = spooled_path(paths, "manifests", manifest_ref)
    os.chmod(path, 0o600)
    path.write_bytes(path.read_bytes().replace(b'"input_count":7', b'"input_count":8'))
    with pytest.raises(InvalidInput):
        load_manifest(paths, manifest_ref)


def test_run_batch_directly_records_every_item_and_bad_ones_by_reason(enabled, tmp_path):
    manifest_ref, out = _spool(enabled, tmp_path)
    summary = _run(enabled, manifest_ref)
    assert (summary.items, summary.decided, summary.failed, summary.missing) == (7, 6, 1, 0)
    assert summary.failures_by_reason == {"invalid_input": 1}
    assert summary.provider_faults_by_reason == {"provider_crashed": 1}
    assert summary.by_admission == {"admitted": 5, "cross_agent_denied": 1}
    assert summary.by_retrieval == {"not_admitted": 1, "provider_crashed": 1, "retrieved": 4}
    assert sum(summary.by_verdict.values()) == 6 and summary.by_trigger == {"replan_repetition": 6}
    assert summary.latency is not None and summary.latency.p50_ms <= summary.latency.p95_ms
    assert json.loads((out / "summary.json").read_bytes()) == json.loads(summary.model_dump_json())
    assert len(decisions_in(out)) == 6


def test_a_failed_item_record_names_its_line_and_situation_id(enabled, tmp_path):
    items = standin.stalled_items(2)
    manifest_ref, out = _spool(enabled, tmp_path, items, lines=[3 * n + 1 for n in range(len(items))])
    _run(enabled, manifest_ref)
    records = [read_record(out, ref) for ref in load_manifest(enabled, manifest_ref).item_refs]
    failed = [r for r in records if r.status == "failed"]
    assert [(r.line, r.situation_id, r.reason_code) for r in failed] == [(13, "invalid-1", "invalid_input")]
    assert [r.line for r in records] == [1, 4, 7, 10, 13]


def test_an_invalid_item_record_names_the_field_paths_of_what_was_invalid_never_a_value(enabled, tmp_path):
    missing_scope = {key: value for key, value in standin.canary_situation("no-scope").items() if key != "scope"}
    items = [*standin.stalled_items(1, crash=False), json.dumps(missing_scope).encode()]
    manifest_ref, out = _spool(enabled, tmp_path, items)
    _run(enabled, manifest_ref)
    records = [read_record(out, ref) for ref in load_manifest(enabled, manifest_ref).item_refs]
    assert {r.situation_id: r.invalid_fields for r in records if r.status == "failed"} == {
        "invalid-1": ["<root>: unknown field (1)"],
        "no-scope": ["scope: Field required"],
    }
    assert all(r.invalid_fields == [] for r in records if r.status == "decided")
    assert canary_places_in_files(standin.CANARY, out) == []


def test_run_batch_directly_with_threads_gives_the_same_records(enabled, tmp_path):
    one, out_one = _spool(enabled, tmp_path / "one")
    many, out_many = _spool(enabled, tmp_path / "many")
    _run(enabled, one)
    _run(enabled, many, concurrency=4)
    assert decisions_in(out_one) == decisions_in(out_many)


def test_run_batch_directly_decisions_equal_the_direct_pipeline(enabled, tmp_path):
    items = standin.stalled_items(crash=False, invalid=False)
    manifest_ref, out = _spool(enabled, tmp_path, items)
    _run(enabled, manifest_ref)
    manifest = load_manifest(enabled, manifest_ref)
    expected = {
        ref: json.loads(
            decide(
                load_contract(ReplanSituation, raw), paths=enabled, provider_factory=standin.factory()
            ).decision.model_dump_json()
        )
        for ref, raw in zip(manifest.item_refs, items, strict=False)
    }
    assert decisions_in(out) == expected


def test_rerun_skips_items_decided_for_the_same_key(enabled, tmp_path):
    manifest_ref, out = _spool(enabled, tmp_path)
    _run(enabled, manifest_ref)
    before = {path.name: path.stat().st_mtime_ns for path in (out / "decisions").iterdir()}
    summary = _run(enabled, manifest_ref)
    # The invalid item and the provider crash are retried; the five settled decisions are not.
    assert (summary.processed_this_run, summary.skipped_this_run) == (2, 5)
    after = {path.name: path.stat().st_mtime_ns for path in (out / "decisions").iterdir()}
    assert sum(before[name] == after[name] for name in before) == 5


def test_unknown_index_revision_is_never_skipped(enabled, tmp_path):
    manifest_ref, _ = _spool(enabled, tmp_path, standin.stalled_items(crash=False, invalid=False))
    _run(enabled, manifest_ref, revision=None)
    plan = _plan(enabled, manifest_ref, revision=None)
    # Only the agent that is not enabled is skippable: no index is read for it.
    assert [item.revision_known for item in plan.pending] == [False] * 4
    assert len(plan.skipped) == 1


def test_new_index_revision_redecides_every_admitted_item(enabled, tmp_path):
    manifest_ref, _ = _spool(enabled, tmp_path, standin.stalled_items(crash=False, invalid=False))
    _run(enabled, manifest_ref)
    plan = _plan(enabled, manifest_ref, revision="rev-standin-2")
    assert (len(plan.pending), len(plan.skipped)) == (4, 1)


def test_config_change_redecides_every_item(enabled, tmp_path):
    manifest_ref, _ = _spool(enabled, tmp_path, standin.stalled_items(crash=False, invalid=False))
    _run(enabled, manifest_ref)
    enabled.config_file.unlink()
    plan = _plan(enabled, manifest_ref)
    assert (len(plan.pending), len(plan.skipped)) == (5, 0)


def test_index_moving_during_the_run_records_the_revision_used(enabled, tmp_path):
    manifest_ref, out = _spool(enabled, tmp_path, standin.stalled_items(1, crash=False, invalid=False))
    # Planned at revision 1, answered from a newer index.
    plan = _plan(enabled, manifest_ref)
    for item in plan.pending:
        decide_item(plan.batch, item, provider_factory=standin.factory("rev-standin-2"))
    assert len(_plan(enabled, manifest_ref, revision="rev-standin-2").skipped) == 2
    assert len(_plan(enabled, manifest_ref).pending) == 1


def test_plan_batch_keys_invalid_and_unenabled_items_without_reading_an_index(paths, tmp_path):
    manifest_ref, _ = _spool(paths, tmp_path)
    seen = []
    plan = plan_batch(paths, manifest_ref, provider_factory=lambda *args: seen.append(args))
    assert seen == [] and len(plan.pending) == 7


def test_resume_after_a_partial_run_completes_the_rest_once(enabled, tmp_path):
    manifest_ref, out = _spool(enabled, tmp_path, standin.stalled_items(6, crash=False, invalid=False))
    first = _run(enabled, manifest_ref, stop_after=3)
    assert (first.decided, first.missing) == (3, 4)
    second = _run(enabled, manifest_ref)
    assert (second.processed_this_run, second.skipped_this_run) == (4, 3)
    assert (second.decided, second.missing) == (7, 0)
    assert len(list((out / "decisions").glob("*.json"))) == 7


_HELD_BATCH = """
import sys, threading
from obelisk_session_evidence.batch.run import run_batch_directly
from obelisk_session_evidence.state.paths import state_paths
from tests.batch import standin

searched = []

class HeldAfterThree(standin.StandinIndexProvider):
    def search(self, request):
        searched.append(1)
        if len(searched) > 3:
            threading.Event().wait()  # held mid-batch until the test kills it
        return super().search(request)

run_batch_directly(state_paths(), sys.argv[1], provider_factory=lambda enablement, kind: HeldAfterThree())
"""


def test_batch_killed_half_way_resumes_with_no_duplicate_and_no_lost_item(enabled, tmp_path):
    manifest_ref, out = _spool(enabled, tmp_path, standin.stalled_items(12, crash=False, invalid=False))
    manifest = load_manifest(enabled, manifest_ref)
    process = subprocess.Popen(
        [sys.executable, "-c", _HELD_BATCH, manifest_ref], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    deadline = time.monotonic() + 120
    while count_records(out, manifest.item_refs) < 3 and time.monotonic() < deadline:
        assert process.poll() is None
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed_at = count_records(out, manifest.item_refs)
    assert 3 <= killed_at < 13
    summary = _run(enabled, manifest_ref)
    assert (summary.decided, summary.failed, summary.missing) == (13, 0, 0)
    assert summary.skipped_this_run == killed_at
    assert sorted(decisions_in(out)) == sorted(manifest.item_refs)
    for ref in manifest.item_refs:
        assert read_record(out, ref).status == "decided"
        assert record_path(out, ref).exists()


def test_public_outputs_hold_no_canary(enabled, tmp_path):
    manifest_ref, out = _spool(enabled, tmp_path)
    _run(enabled, manifest_ref)
    _run(enabled, manifest_ref)
    assert canary_places_in_files(standin.CANARY, out) == []
    # Control: the private spool does hold it, so the scan can see it.
    assert canary_places_in_files(standin.CANARY, enabled.spool_dir) != []


def test_index_revision_is_the_providers_and_unknown_on_a_fault(enabled):
    from obelisk_session_evidence.contracts.config import EnablementConfig

    enablement = EnablementConfig.model_validate_json(enabled.config_file.read_bytes()).enablements[0]
    real = default_provider_factory(backend_folders(enabled))
    # No native index yet, and Obelisk reports its revision only with a lookup: never skipped.
    assert index_revision(real, enablement, "native") is None
    assert index_revision(real, enablement, "obelisk") is None
    assert index_revision(standin.factory(), enablement, "native") == standin.REVISION

    def broken(enablement, kind):
        raise RuntimeError("no index")

    assert index_revision(broken, enablement, "native") is None


@pytest.mark.parametrize(
    ("values", "percent", "expected"),
    [
        ([1.0], 50, 1.0),
        ([1.0, 2.0], 50, 1.0),
        ([1.0, 2.0, 3.0], 50, 2.0),
        ([float(n) for n in range(1, 21)], 95, 19.0),
        ([float(n) for n in range(1, 101)], 95, 95.0),
        ([float(n) for n in range(1, 101)], 50, 50.0),
    ],
)
def test_nearest_rank_percentiles(values, percent, expected):
    assert _nearest_rank(values, percent) == expected
