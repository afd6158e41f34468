"""Plan a batch of stalled work items: what is left to decide, each item keyed before it runs.

Idempotency: an item is skipped when its record says `decided` under the same key and is
`skippable`. The key is known before the pipeline runs: the situation digest, the index revision
read up front from the configured provider (`index_revision`), the configuration file's digest, the
package version and the provider override. An unknown index revision is never skipped, nor is a
decision whose provider failed (it failed open and may answer next time), nor a failed item.
"""

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from obelisk_session_evidence.batch.manifest import load_manifest
from obelisk_session_evidence.batch.outputs import decision_path, read_record
from obelisk_session_evidence.compose import backend_for, provider_factory_for, tokenizer_cache
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, ProviderKind
from obelisk_session_evidence.contracts.digests import canonical_digest
from obelisk_session_evidence.contracts.errors import EvidenceError, InvalidInput
from obelisk_session_evidence.contracts.json_input import MAX_DOCUMENT_BYTES, load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation, public_situation_id
from obelisk_session_evidence.lifecycle.policy import load_policy
from obelisk_session_evidence.providers.factory import ProviderFactory
from obelisk_session_evidence.providers.version import PACKAGE_VERSION
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.salt import digest_salt
from obelisk_session_evidence.state.spool import read_spooled
from obelisk_session_evidence.tokenizer import load_ranks

NO_LOOKUP: Final = "no-lookup"
"""The revision of an item no enablement matches: no index is read, so none can change it."""
UNKNOWN_REVISION: Final = "unknown"
INVALID_ITEM: Final = "invalid-item"


@dataclass(frozen=True, slots=True)
class BatchRef:
    """What every per-item task receives: where the state is and which manifest (no content)."""

    state_root: str
    manifest_ref: str
    config_digest: str

    @property
    def paths(self) -> StatePaths:
        return StatePaths(Path(self.state_root))


@dataclass(frozen=True, slots=True)
class PlannedItem:
    """One item still to decide, with the idempotency key computed before it runs."""

    item_ref: str
    key: str
    index_revision_digest: str
    revision_known: bool
    line: int
    """The item's line in the batch input."""
    situation_id: str | None
    """The situation's id when the item has a well-formed one (public by contract)."""

    @property
    def run_name(self) -> str:
        """The item's content-free task-run name: `item-<line>/<situation id>`."""
        return f"item-{self.line}/{self.situation_id}" if self.situation_id else f"item-{self.line}"


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """The manifest split into what is left to decide and what an earlier run already decided."""

    batch: BatchRef
    pending: tuple[PlannedItem, ...]
    skipped: tuple[str, ...]


def config_digest(paths: StatePaths) -> str:
    """Digest of the configuration file's bytes (`absent` when there is none)."""
    try:
        return "sha256:" + hashlib.sha256(paths.config_file.read_bytes()).hexdigest()
    except FileNotFoundError:
        return canonical_digest("config-absent")


def index_revision(factory: ProviderFactory, enablement: Enablement, kind: ProviderKind) -> str | None:
    """The index revision the provider for this enablement would answer from; None when unknown
    (any fault, or a backend that knows it only per lookup, as Obelisk)."""
    try:
        revision = factory(enablement, kind).index_revision()
    except Exception:
        return None
    if not isinstance(revision, str) or not revision or revision == UNKNOWN_REVISION:
        return None
    return revision


def item_key(item_ref: str, index_revision_digest: str, *, config: str, provider_kind: str | None) -> str:
    """The idempotency key of one item: what its decision depends on besides code."""
    return canonical_digest(
        {
            "item": item_ref,
            "index_revision": index_revision_digest,
            "config": config,
            "provider_kind": provider_kind,
            "version": PACKAGE_VERSION,
        }
    )


def plan_batch(
    paths: StatePaths,
    manifest_ref: str,
    *,
    provider_factory: ProviderFactory | None = None,
) -> BatchPlan:
    """Compute every item's key up front and keep the ones no earlier run settled."""
    factory = provider_factory_for(paths, provider_factory)
    manifest = load_manifest(paths, manifest_ref)
    config = config_digest(paths)
    policy = load_policy(paths)
    revisions: dict[tuple[Any, ...], str | None] = {}
    pending: list[PlannedItem] = []
    skipped: list[str] = []
    out_dir = Path(manifest.out_dir)
    for item_ref, line in manifest.line_of().items():
        refused = manifest.invalid.get(item_ref)
        raw = None if refused else _spooled_item(paths, item_ref)
        situation = _valid_situation(raw)
        revision = _revision_for(policy, situation, manifest.provider_kind, revisions, factory)
        revision_digest = canonical_digest(revision if revision is not None else UNKNOWN_REVISION)
        key = item_key(item_ref, revision_digest, config=config, provider_kind=manifest.provider_kind)
        if revision is not None and _already_decided(out_dir, item_ref, key):
            skipped.append(item_ref)
        else:
            situation_id = (
                situation.situation_id if situation else refused.situation_id if refused else public_situation_id(raw)
            )
            pending.append(PlannedItem(item_ref, key, revision_digest, revision is not None, line, situation_id))
    prepare_shared_state(paths)
    batch = BatchRef(str(paths.root), manifest_ref, config)
    return BatchPlan(batch=batch, pending=tuple(pending), skipped=tuple(skipped))


def _spooled_item(paths: StatePaths, item_ref: str) -> bytes | None:
    try:
        return read_spooled(paths, "situations", item_ref, max_bytes=MAX_DOCUMENT_BYTES)
    except InvalidInput:
        return None


def _valid_situation(raw: bytes | None) -> ReplanSituation | None:
    if raw is None:
        return None
    try:
        return load_contract(ReplanSituation, raw)
    except EvidenceError:
        return None


def _revision_for(
    policy: AdmissionPolicy,
    situation: ReplanSituation | None,
    provider_kind: ProviderKind | None,
    cache: dict[tuple[Any, ...], str | None],
    factory: ProviderFactory,
) -> str | None:
    """The item's index revision, read once per scope; invalid items get a fixed marker."""
    if situation is None:
        return INVALID_ITEM
    backend = backend_for(policy, situation, provider_kind)
    if backend is None:
        return NO_LOOKUP
    enablement, kind = backend
    scope = (enablement.scope_key, kind)
    if scope not in cache:
        cache[scope] = index_revision(factory, enablement, kind)
    return cache[scope]


def _already_decided(out_dir: Path, item_ref: str, key: str) -> bool:
    record = read_record(out_dir, item_ref)
    return (
        record is not None
        and record.status == "decided"
        and record.skippable
        and record.key == key
        and decision_path(out_dir, item_ref).exists()
    )


def prepare_shared_state(paths: StatePaths) -> None:
    """Create the digest salt and the tokenizer's rank table before items run concurrently.

    Both are created on first use; concurrent first users would each pay for it (the rank table
    costs about 0.2 s to build), so the plan creates them once, and each process's context checks
    again under a lock.
    """
    digest_salt(paths)
    load_ranks(tokenizer_cache(paths))
