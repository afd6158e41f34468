"""Batch under faults: invalid items are never spooled, a manifest past the 4 MiB document cap
still loads (and a batch too large says so when spooled), the summary counts freshness, and a
killed batch's half-written files are reclaimed by the next run of that output folder."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from obelisk_session_evidence.batch.manifest import load_manifest, spool_batch
from obelisk_session_evidence.batch.outputs import claim_out_dir, read_record, record_path
from obelisk_session_evidence.batch.run import run_batch_directly
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.contracts.json_input import MAX_DOCUMENT_BYTES
from obelisk_session_evidence.state.spool import spooled_path
from tests.batch import standin

pytestmark = pytest.mark.reliability  # issue 27 item 5: make test-reliability runs them
ROOT = Path(__file__).resolve().parents[2]


def _spooled_situations(paths) -> set[str]:
    folder = paths.spool_dir / "situations"
    return {path.name for path in folder.iterdir()} if folder.exists() else set()


def test_invalid_items_are_never_spooled_and_are_recorded_with_what_was_wrong(enabled, tmp_path):
    huge = b'{"situation_id": "huge-1", "pad": "' + b"x" * (MAX_DOCUMENT_BYTES + 1) + b'"}'
    items = [*standin.stalled_items(1, crash=False), huge]
    manifest_ref = spool_batch(enabled, items, out_dir=tmp_path / "out")
    manifest = load_manifest(enabled, manifest_ref)
    assert set(manifest.invalid) == set(manifest.item_refs[-2:])  # the unknown-key item and the huge one
    for reference in manifest.invalid:
        assert not spooled_path(enabled, "situations", reference).exists()
    assert len(_spooled_situations(enabled)) == len(manifest.item_refs) - 2
    run_batch_directly(enabled, manifest_ref, provider_factory=standin.factory())
    failed = {
        record.situation_id: record.invalid_fields
        for record in (read_record(tmp_path / "out", ref) for ref in manifest.item_refs)
        if record.status == "failed"
    }
    assert failed == {
        "invalid-1": ["<root>: unknown field (1)"],
        None: [f"document larger than {MAX_DOCUMENT_BYTES} bytes"],
    }


def test_a_manifest_past_the_document_cap_loads(enabled, tmp_path):
    items = [json.dumps({"n": n}).encode() for n in range(30_000)]  # invalid: cheap to spool
    manifest_ref = spool_batch(enabled, items, out_dir=tmp_path / "out")
    size = spooled_path(enabled, "manifests", manifest_ref).stat().st_size
    assert size > MAX_DOCUMENT_BYTES
    assert len(load_manifest(enabled, manifest_ref).item_refs) == 30_000


def test_a_batch_over_the_item_limit_is_refused_when_spooled_saying_why(enabled, tmp_path):
    items = [json.dumps({"n": n}).encode() for n in range(4)]
    with pytest.raises(InvalidInput, match="more than 3 distinct items; split it"):
        spool_batch(enabled, items, out_dir=tmp_path / "out", max_items=3)
    spool_batch(enabled, items[:3], out_dir=tmp_path / "out", max_items=3)  # at the limit: spooled


def test_the_summary_counts_decided_items_by_index_freshness(enabled, tmp_path):
    manifest_ref = spool_batch(enabled, standin.stalled_items(3), out_dir=tmp_path / "out")
    summary = run_batch_directly(enabled, manifest_ref, provider_factory=standin.factory())
    looked_up = sum(summary.by_retrieval.get(code, 0) for code in ("retrieved", "provider_crashed"))
    assert summary.by_freshness == {
        "fresh": summary.by_retrieval["retrieved"],
        "unknown": looked_up - summary.by_retrieval["retrieved"],
    }


def test_a_killed_batchs_half_written_files_are_removed_by_the_next_claim(enabled, tmp_path):
    out = tmp_path / "out"
    manifest_ref = spool_batch(enabled, standin.stalled_items(1), out_dir=out)
    item = load_manifest(enabled, manifest_ref).item_refs[0]
    record = record_path(out, item)
    record.parent.mkdir(parents=True)
    orphan = record.parent / f".{record.name}.ab_12cd3"  # what write_private leaves when killed
    orphan.write_bytes(b"{")
    kept = record.parent / "notes.txt"
    kept.write_text("the user's")
    with claim_out_dir(enabled, out) as removed:
        assert removed == 1
    assert not orphan.exists() and kept.exists()


def test_a_second_batch_on_the_same_folder_is_refused_while_the_first_holds_it(enabled, tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(enabled.root), str(out)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(InvalidInput, match="another batch is writing there"), claim_out_dir(enabled, out):
            pass
    finally:
        holder.kill()
        holder.wait()
    with claim_out_dir(enabled, out) as removed:  # a killed holder's lock goes with it
        assert removed == 0


HOLD = """
import sys, time
from pathlib import Path
from obelisk_session_evidence.batch.outputs import claim_out_dir
from obelisk_session_evidence.state.paths import StatePaths
with claim_out_dir(StatePaths(Path(sys.argv[1])), Path(sys.argv[2])):
    print("held", flush=True)
    time.sleep(600)
"""
