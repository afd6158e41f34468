"""What `enable`, `status`, `disable` and `index drop` print with `--format json` (RFC §8).

These are owner-local read-backs: they carry the configuration the owner wrote (ids, folders,
triggers), the provider's version and health, and index freshness, revision and counts. They never
carry session content.
"""

from typing import Annotated, Final, Literal, get_args

from pydantic import Field, StringConstraints

from obelisk_session_evidence.contracts.base import PROVIDER_ID, ContractModel, Freshness, OpaqueId, Trigger
from obelisk_session_evidence.contracts.config import AbsolutePath, Enablement, ProviderKind
from obelisk_session_evidence.contracts.decision import ReasonCode
from obelisk_session_evidence.contracts.index_status import IndexRootStatus
from obelisk_session_evidence.contracts.reason_codes import (
    IndexHealthCode,
    ProviderHealthCode,
    SkippedSourceCode,
    StatusCode,
)
from obelisk_session_evidence.contracts.sources import SourceKind

ProviderState = Literal["available", "unavailable", "unknown"]
ConfigState = Literal["config_loaded", "config_absent", "config_invalid"]
BroadenedScope = Literal["cross_agent", "cross_project", "cross_repository", "foreign_archive"]
DENIED_SCOPES: Final[tuple[BroadenedScope, ...]] = get_args(BroadenedScope)
"""Scopes v0 never grants, whatever the flags, environment or configuration file say."""
Version = Annotated[str, StringConstraints(min_length=1, max_length=80)]
Detail = Annotated[str, StringConstraints(max_length=400)]


class ProviderHealth(ContractModel):
    """Whether the configured backend can answer, as probed now."""

    kind: ProviderKind
    """The backend the enablement names."""
    state: ProviderState
    """`available`, `unavailable`, or `unknown` when it cannot be probed (never guessed)."""
    provider_version: Version | None
    """The backend's version string when known."""
    reason_code: ProviderHealthCode
    """`provider_available`, or why not (e.g. `provider_unavailable`, `provider_status_unknown`)."""


class IndexHealth(ContractModel):
    """The history index behind the backend: freshness over this scope's roots, revision, counts."""

    freshness: Freshness
    """`fresh`, `stale`, `incomplete`, or `unknown` (never `fresh` without evidence)."""
    index_revision: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None
    """The index revision when the backend reports one."""
    counts: dict[ReasonCode, Annotated[int, Field(ge=0)]] = {}
    """What the whole index holds (`files`, `sessions`, `messages`, ...: every scope shares one
    native index); empty when unknown."""
    usable: bool
    """True when lookups can answer from the index as it is: it is fresh, or stale and brought up
    to date by the next lookup, or (Obelisk) refreshed by every query."""
    reason_code: IndexHealthCode
    """`index_fresh`, or how it is not (`index_stale`, `index_absent`, `index_not_refreshed`,
    `index_incomplete`, `index_freshness_per_lookup`, `index_status_unknown`)."""
    incomplete_roots: list[IndexRootStatus] = []
    """This scope's session folders that make the index incomplete: missing, unreadable, or
    holding files that failed to parse."""
    location: AbsolutePath | None = None
    """Where the index lives when another program keeps it (Obelisk: its `obelisk.sqlite`)."""
    detail: Detail | None = None
    """What to do about it, e.g. the Obelisk command that builds an absent index."""


class AllowedScope(ContractModel):
    """Exactly what one enablement lets admission read."""

    agent_id: OpaqueId
    """Only this agent's own sessions."""
    project_id: OpaqueId
    """Only this LoopX project."""
    repository_id: OpaqueId
    """Only sessions that ran in this repository."""
    sources: list[SourceKind]
    """The session sources bound to the agent."""
    triggers: list[Trigger]
    """The admitted triggers."""


class DeniedScope(ContractModel):
    """A scope that stays denied, and the code any attempt to configure it gets."""

    scope: BroadenedScope
    """The broader scope."""
    reason_code: Literal["scope_broadening_not_qualified"] = "scope_broadening_not_qualified"
    """Why it is denied."""


class ScopeStatus(ContractModel):
    """One enablement as configured, with its provider and index health."""

    enablement: Enablement
    """The configuration as recorded."""
    allowed_scope: AllowedScope
    """What admission may read for it."""
    denied_triggers: list[Trigger]
    """Triggers that stay off for this scope."""
    provider: ProviderHealth
    """The backend's health."""
    index: IndexHealth
    """The index's freshness, revision and counts."""
    healthy: bool
    """True when the provider is available and the index usable."""
    reason_code: StatusCode
    """`healthy`, or the first reason it is not."""


class LifecycleStatus(ContractModel):
    """`status`: configuration, provider, index freshness and the allowed and denied scope."""

    schema_version: Literal["obelisk_session_evidence_status_v0"] = "obelisk_session_evidence_status_v0"
    """This contract's schema id."""
    provider_id: Literal["obelisk-session-evidence"] = PROVIDER_ID
    """This extension's id."""
    version: Version
    """This extension's version."""
    project_id: OpaqueId
    """The project asked about."""
    agent_id: OpaqueId | None
    """The agent asked about; None for every agent of the project."""
    config_state: ConfigState
    """How reading the configuration went."""
    config_detail: Detail | None = None
    """For an invalid file: the field and problem (never its value) and the next step."""
    enabled: bool
    """True when at least one enablement matches."""
    healthy: bool
    """True when enabled and every matching scope is healthy (exit 0)."""
    reason_code: StatusCode
    """`healthy`, or why not: `config_invalid`, `not_enabled`, or the first scope's reason."""
    scopes: list[ScopeStatus]
    """The matching enablements."""
    denied_scopes: list[DeniedScope]
    """Broader scopes that stay denied."""
    spooled_situations: Annotated[int, Field(ge=0)] = 0
    """Unexpired situations held in the private spool (every scope's: they hold query terms)."""
    spool_retention_hours: Annotated[int, Field(ge=1)] = 24
    """How long a spooled situation is kept after it was last spooled (config.json)."""


class SkippedSource(ContractModel):
    """A source `enable` did not bind, and why."""

    source: SourceKind
    """The agent's session source."""
    folder: Annotated[str, StringConstraints(min_length=1, max_length=4096)]
    """The session folder looked for."""
    reason_code: SkippedSourceCode = "folder_missing"
    """Why it was skipped: no session folder there."""


EnableChange = Literal["created", "updated", "unchanged"]
"""What `enable` did to the configuration."""


class EnableOutcome(ContractModel):
    """`enable`: the recorded enablement and the provider's current health."""

    schema_version: Literal["obelisk_session_evidence_enable_v0"] = "obelisk_session_evidence_enable_v0"
    """This contract's schema id."""
    change: EnableChange
    """`unchanged` when the same scope was already enabled with the same settings."""
    enablement: Enablement
    """The enablement as recorded."""
    provider: ProviderHealth
    """The backend's health when it was recorded (an unavailable one is recorded too)."""
    skipped_sources: list[SkippedSource] = []
    """Sources left out because their session folder does not exist (only without `--source`)."""
    reason_code: Literal["enabled"] = "enabled"
    """Always `enabled`; failures exit 2 with an error line instead."""


class DisableOutcome(ContractModel):
    """`disable`: which scopes stopped being admitted; nothing on disk besides the config changed."""

    schema_version: Literal["obelisk_session_evidence_disable_v0"] = "obelisk_session_evidence_disable_v0"
    """This contract's schema id."""
    project_id: OpaqueId
    """The project disabled."""
    agent_id: OpaqueId | None
    """The agent disabled; None for every agent of the project."""
    removed: list[AllowedScope]
    """The scopes removed from the configuration."""
    remaining_enablements: Annotated[int, Field(ge=0)]
    """Enablements left in the configuration (other scopes)."""
    reason_code: Literal["disabled", "not_enabled"]
    """`not_enabled` when nothing matched (nothing changed; admission is off either way)."""


class IndexDropOutcome(ContractModel):
    """`index drop --yes`: what was removed from the native index folder, and only from there."""

    schema_version: Literal["obelisk_session_evidence_index_drop_v0"] = "obelisk_session_evidence_index_drop_v0"
    """This contract's schema id."""
    index_dir: AbsolutePath
    """The state directory's index folder."""
    removed_files: Annotated[int, Field(ge=0)]
    """Files (and symbolic links, never their targets) removed."""
    removed_bytes: Annotated[int, Field(ge=0)]
    """Bytes those files held."""
    reason_code: Literal["index_dropped", "index_absent"]
    """`index_absent` when there was nothing to remove."""
