"""The enablement configuration: which agent, project and repository may be read, and how."""

from collections.abc import Sequence
from typing import Annotated, Final, Literal, Self

from pydantic import AwareDatetime, Field, StringConstraints, model_validator

from obelisk_session_evidence.contracts.base import TRIGGERS, ContractModel, OpaqueId, Trigger
from obelisk_session_evidence.contracts.reason_codes import ConfigLoadCode
from obelisk_session_evidence.contracts.sources import SOURCE_KINDS, SourceKind

ProviderKind = Literal["native", "obelisk"]
AbsolutePath = Annotated[str, StringConstraints(pattern=r"^/", max_length=4096)]


AUTOMATIC_TRIGGERS: Final[tuple[Trigger, ...]] = (
    "replan_repetition",
    "hypothesis_history_gap",
    "resume_or_handoff_gap",
)
"""RFC §9 Stage 2: admitted only after measured evidence (a replay that met its targets) or when
an operator names them."""
STAGE_1_TRIGGERS: Final[tuple[Trigger, ...]] = ("operator_requested_history",)
"""RFC §9 Stage 1: what `enable` admits when no trigger is named."""
MAX_HISTORY_WINDOW_DAYS: Final = 36_500
DEFAULT_HISTORY_WINDOW_DAYS: Final[int | None] = None
"""No window by default: see docs/history-window.md for the replay figures it was chosen on."""
TriggerGrant = Literal["operator", "stage_1", "replay_qualified"]
"""Why a scope admits its triggers: the operator named them (`--trigger`, or a configuration
written before the gate existed), Stage 1 by default, or a replay of the scope's own history met
its targets."""


class ReplayQualification(ContractModel):
    """The scope's last `replay` figures, as recorded for the promotion gate. Counts and rates only."""

    measured_at: AwareDatetime
    calls: int
    """Shell calls replayed."""
    dead_ends: int
    alarms_right: float | None
    """The verdict's true alarms ÷ judged alarms."""
    dead_ends_caught: float | None
    """Dead ends the verdict alarmed at ÷ dead ends."""
    naive_alarms_right: float | None
    """The naive rule's alarms right on the same calls."""
    targets_met: bool


class Enablement(ContractModel):
    """One explicit opt-in: one agent, one project, one repository, nothing broader."""

    surface: Literal["replan-history"]
    """The only surface v0 serves."""
    agent_id: OpaqueId
    """The agent whose own sessions may be read."""
    project_id: OpaqueId
    """The LoopX project."""
    repository_id: OpaqueId
    """The repository identity sessions must resolve to."""
    repo_roots: Annotated[list[AbsolutePath], Field(max_length=64)] = []
    """Checkouts (and worktree parents) of the repository, matched as path prefixes."""
    historical_repo_roots: Annotated[list[AbsolutePath], Field(max_length=64)] = []
    """The subset of `repo_roots` declared historical: worktrees that no longer exist."""
    sources: Annotated[list[SourceKind], Field(min_length=1, max_length=len(SOURCE_KINDS))] = list(SOURCE_KINDS)
    """The session sources bound to this agent."""
    source_roots: dict[SourceKind, AbsolutePath] = {}
    """Non-default session folders per source."""
    sources_found: list[SourceKind] | None = None
    """The sources whose session folder existed when the scope was enabled (None: enabled by a
    version that did not record it). A source outside it whose folder is still missing is not
    used (it never held history); one inside it whose folder disappears makes the index
    `incomplete` (an unmounted home or a rename looks the same as a deletion)."""
    provider: ProviderKind = "native"
    """Which backend answers lookups."""
    obelisk_bin: AbsolutePath | None = None
    """The Obelisk binary, when not on PATH."""
    obelisk_home: AbsolutePath | None = None
    """The folder holding the operator's Obelisk index (`obelisk.sqlite`); recorded by `enable
    --provider obelisk` (default: `$OBELISK_HOME`, else `~/.obelisk` of the user enabling)."""
    triggers: Annotated[list[Trigger], Field(min_length=1, max_length=4)] = list(TRIGGERS)
    """Triggers admitted for this scope; the others stay off."""
    trigger_grant: TriggerGrant = "operator"
    """Why these triggers are admitted (`TriggerGrant`)."""
    replay: ReplayQualification | None = None
    """The last replay of this scope's history, when one ran."""
    history_window_days: Annotated[int, Field(ge=1, le=MAX_HISTORY_WINDOW_DAYS)] | None = DEFAULT_HISTORY_WINDOW_DAYS
    """History older than this many days (before now; before the cut in a replay) is left out of
    lookups by the native provider; None: all of it."""
    enabled_at: AwareDatetime
    """When the enablement was recorded."""

    @model_validator(mode="after")
    def _historical_roots_are_repo_roots(self) -> Self:
        if not set(self.historical_repo_roots) <= set(self.repo_roots):
            raise ValueError("historical_repo_roots must also be listed in repo_roots")
        if not set(self.source_roots) <= set(self.sources):
            raise ValueError("source_roots names a source that is not in sources")
        if not set(self.sources_found or ()) <= set(self.sources):
            raise ValueError("sources_found names a source that is not in sources")
        return self

    @property
    def scope_key(self) -> tuple[str, str, str]:
        """(agent, project, repository): what one enablement grants, and nothing broader."""
        return (self.agent_id, self.project_id, self.repository_id)


class EnablementConfig(ContractModel):
    """The whole configuration file. Unknown keys (e.g. a broadening flag) reject it whole."""

    schema_version: Literal["obelisk_session_evidence_config_v0"] = "obelisk_session_evidence_config_v0"
    """This file's schema id."""
    enablements: Annotated[list[Enablement], Field(max_length=256)] = []
    """Enabled scopes; disabling removes one."""
    spool_retention_hours: Annotated[int, Field(ge=1, le=8760)] = 24
    """How long a spooled situation or batch manifest is kept after it was last spooled (it holds
    query terms: commands, hypotheses, blockers); expired ones are removed on the spool's next use."""

    @model_validator(mode="after")
    def _scopes_are_separate(self) -> Self:
        """A hand edit that would let one scope read another's sessions rejects the file whole."""
        keys = [enablement.scope_key for enablement in self.enablements]
        if len(set(keys)) != len(keys):
            raise ValueError("the same agent/project/repository scope is enabled twice")
        shared = shared_session_scopes(self.enablements)
        if shared is not None:
            raise ValueError(
                f"enablements {shared[0]} and {shared[1]} would read the same sessions"
                " for different scopes (scope broadening is not qualified in v0)"
            )
        return self


def shared_session_scopes(enablements: Sequence[Enablement]) -> tuple[int, int] | None:
    """The first pair of different scopes whose session folders and repository roots overlap.

    Rows are attributed to a scope by session folder (source and root) and by working directory
    under a repository root; when two scopes overlap on both, the same session would answer both,
    which is cross-agent, cross-project or cross-repository reading. A source without an explicit
    root reads its default folder, so two such sources overlap; an enablement without repository
    roots is taken to overlap every other (it does not bound where its sessions ran).
    """
    for first in range(len(enablements)):
        for second in range(first + 1, len(enablements)):
            one, other = enablements[first], enablements[second]
            if one.scope_key == other.scope_key:
                continue
            if share_session_folder(one, other) and _share_repository_root(one, other):
                return first, second
    return None


def share_session_folder(one: Enablement, other: Enablement) -> bool:
    """True when both may read one session folder (a default root counts as shared)."""
    for source in set(one.sources) & set(other.sources):
        mine, theirs = one.source_roots.get(source), other.source_roots.get(source)
        if mine is None or theirs is None or paths_overlap(mine, theirs):
            return True
    return False


def _share_repository_root(one: Enablement, other: Enablement) -> bool:
    if not one.repo_roots or not other.repo_roots:
        return True
    return any(paths_overlap(a, b) for a in one.repo_roots for b in other.repo_roots)


def paths_overlap(one: str, other: str) -> bool:
    """True when one absolute path equals or lies inside the other (compared as text)."""
    a, b = one.rstrip("/") + "/", other.rstrip("/") + "/"
    return a.startswith(b) or b.startswith(a)


class AdmissionPolicy(ContractModel):
    """What admission reads: the configuration, or why it could not be read."""

    config: EnablementConfig | None
    """The configuration; None when absent or invalid (admission is then off)."""
    load_reason_code: ConfigLoadCode
    """How loading went."""
