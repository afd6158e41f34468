"""The public output folder of a batch: where each file goes, reading records back, the summary.

    DIR/decisions/<item>.json   the item's replan_evidence_decision_v0
    DIR/records/<item>.json     reprocess_stalled_item_v0: key, status, reason code, latency
    DIR/summary.json            reprocess_stalled_summary_v0 over the whole manifest

`<item>` is the hex of the item's spool digest. Nothing here holds situation text or snippets.
DIR is the user's: it is created owner-only when absent and never changed when it exists.
"""

import fcntl
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from obelisk_session_evidence.contracts.batch import BatchItemRecord, BatchManifest, BatchSummary, LatencySummary
from obelisk_session_evidence.contracts.errors import EvidenceError, InvalidInput
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import check_folder_or_absent, check_regular_or_absent, private_dir

SETTLED_RETRIEVALS: Final = frozenset({"retrieved", "not_admitted"})
"""Retrieval outcomes a re-run would repeat; anything else is a provider fault worth retrying."""


def prepare_out_dir(out_dir: Path) -> None:
    """Check the layout before any item runs, creating nothing: the folders are folders or absent
    (the first write makes them 0700) and `summary.json` is a regular file or absent;
    `PrivateTargetRefused` otherwise."""
    for folder in (out_dir, out_dir / "decisions", out_dir / "records"):
        check_folder_or_absent(folder)
    check_regular_or_absent(summary_path(out_dir))


_TEMP_FILE = re.compile(r"^\.(?:[0-9a-f]{64}|summary)\.json\.[a-z0-9_]{8}$")
"""A file `write_private` was writing when its process died (`.<name>.<mkstemp suffix>`)."""


@contextmanager
def claim_out_dir(paths: StatePaths, out_dir: Path) -> Iterator[int]:
    """Hold the output folder for one batch (a lock under the state folder, keyed by the folder's
    path), and remove what a killed batch left half-written there: no other batch is writing it,
    so its temp files are orphans. Yields how many were removed. `InvalidInput` when another
    batch holds the folder."""
    key = hashlib.sha256(str(out_dir.expanduser().resolve()).encode()).hexdigest()[:32]
    lock_file = private_dir(paths.root / "batch-locks") / f"{key}.lock"
    descriptor = os.open(lock_file, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InvalidInput(
                f"--out {out_dir}: another batch is writing there; wait for it or pick another folder"
            ) from None
        yield _remove_orphans(out_dir.expanduser())
    finally:
        os.close(descriptor)  # closing releases the lock


def _remove_orphans(out_dir: Path) -> int:
    removed = 0
    for folder in (out_dir, out_dir / "decisions", out_dir / "records"):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if _TEMP_FILE.match(entry.name) and entry.is_file(follow_symlinks=False):
                Path(entry.path).unlink(missing_ok=True)
                removed += 1
    return removed


def decision_path(out_dir: Path, item_ref: str) -> Path:
    """Where an item's public decision is written."""
    return out_dir / "decisions" / (item_ref.removeprefix("sha256:") + ".json")


def record_path(out_dir: Path, item_ref: str) -> Path:
    """Where an item's record is written."""
    return out_dir / "records" / (item_ref.removeprefix("sha256:") + ".json")


def summary_path(out_dir: Path) -> Path:
    """Where the batch summary is written."""
    return out_dir / "summary.json"


def read_record(out_dir: Path, item_ref: str) -> BatchItemRecord | None:
    """The item's record, or None when absent or unreadable (then it is decided again)."""
    try:
        return load_contract(BatchItemRecord, record_path(out_dir, item_ref).read_bytes())
    except (OSError, EvidenceError):
        return None


def read_summary(out_dir: Path) -> BatchSummary:
    """The summary the last run wrote."""
    return load_contract(BatchSummary, summary_path(out_dir).read_bytes())


def read_records(out_dir: Path, item_refs: Sequence[str]) -> list[BatchItemRecord]:
    """The records present for these items, in item order."""
    return [record for record in (read_record(out_dir, ref) for ref in item_refs) if record]


def count_records(out_dir: Path, item_refs: Iterable[str], *, since: float = 0.0) -> int:
    """How many of these items have a record written at or after `since` (a Unix time); cheap
    enough to poll for a progress bar."""
    return len(_fresh_records(out_dir, {_record_name(ref): ref for ref in item_refs}, since))


class RecordProgress:
    """Items done and failed so far in one run, read from the records as they appear (each read
    once), so it works whichever process or Dask worker wrote them."""

    def __init__(self, out_dir: Path, item_refs: Iterable[str], *, since: float) -> None:
        self.out_dir = out_dir
        self.since = since
        self.waiting = {_record_name(ref): ref for ref in item_refs}
        self.done = 0
        self.failed = 0

    def poll(self) -> tuple[int, int]:
        """`(done, failed)` after reading the records written since the last poll."""
        for name in _fresh_records(self.out_dir, self.waiting, self.since):
            record = read_record(self.out_dir, self.waiting.pop(name))
            self.done += 1
            self.failed += record is None or record.status == "failed"
        return self.done, self.failed


def _record_name(item_ref: str) -> str:
    return record_path(Path(), item_ref).name


def _fresh_records(out_dir: Path, names: Iterable[str], since: float) -> list[str]:
    try:
        present = {entry.name for entry in os.scandir(out_dir / "records") if entry.stat().st_mtime >= since}
    except OSError:
        return []
    return [name for name in names if name in present]


def decisions_in(out_dir: Path) -> dict[str, dict[str, Any]]:
    """Every public decision in the output folder, by item digest (for comparisons and tests)."""
    return {
        "sha256:" + path.stem: json.loads(path.read_bytes()) for path in sorted((out_dir / "decisions").glob("*.json"))
    }


@dataclass(frozen=True, slots=True)
class RunStats:
    """What one run did: how many items it processed and skipped, and its wall time."""

    processed: int
    skipped: int
    wall_seconds: float


def summary_of(
    manifest_ref: str,
    manifest: BatchManifest,
    records: Sequence[BatchItemRecord],
    *,
    run: RunStats | None = None,
) -> BatchSummary:
    """Counts by trigger, admission, verdict and outcome; latency; failures by reason code."""
    decided = [r for r in records if r.status == "decided"]
    failed = [r for r in records if r.status == "failed"]
    return BatchSummary(
        manifest_ref=manifest_ref,
        input_count=manifest.input_count,
        items=len(manifest.item_refs),
        decided=len(decided),
        failed=len(failed),
        missing=len(manifest.item_refs) - len(records),
        processed_this_run=run.processed if run else 0,
        skipped_this_run=run.skipped if run else 0,
        by_trigger=_counts(r.trigger or "none" for r in decided),
        by_admission=_counts(r.admission_code for r in decided),
        by_verdict=_counts(r.verdict for r in decided),
        by_outcome=_counts(outcome for r in decided for outcome in r.outcomes),
        by_retrieval=_counts(r.retrieval_code for r in decided),
        by_agent=_counts(r.agent_digest for r in records),
        failures_by_reason=_counts(r.reason_code for r in failed),
        by_freshness=_counts(r.freshness for r in decided),
        provider_faults_by_reason=_counts(
            r.retrieval_code for r in decided if r.retrieval_code not in SETTLED_RETRIEVALS
        ),
        latency=_latency([r.latency_ms for r in records]),
        wall_seconds=round(run.wall_seconds, 3) if run else None,
        items_per_second=round(run.processed / run.wall_seconds, 3) if run and run.wall_seconds > 0 else None,
    )


_Code = TypeVar("_Code", bound=str)


def _counts(values: Iterable[_Code | None]) -> dict[_Code, int]:
    counter = Counter(value for value in values if value is not None)
    return dict(sorted(counter.items()))


def _latency(values: list[float]) -> LatencySummary | None:
    if not values:
        return None
    ordered = sorted(values)
    return LatencySummary(p50_ms=_nearest_rank(ordered, 50), p95_ms=_nearest_rank(ordered, 95), max_ms=ordered[-1])


def _nearest_rank(ordered: list[float], percent: int) -> float:
    rank = max(1, -(-percent * len(ordered) // 100))  # ceil in integers: no float rounding
    return ordered[rank - 1]
