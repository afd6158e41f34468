"""`replan_situation_v0`: the typed input of one Replan cold-path decision."""

import json
from typing import Annotated, Final, Literal

from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError
from pydantic.config import JsonDict

from obelisk_session_evidence.contracts.base import ContractModel, EvidenceType, OpaqueId
from obelisk_session_evidence.contracts.observations import RecentObservation, TypedProgressObservation
from obelisk_session_evidence.contracts.outcomes import OutcomeId
from obelisk_session_evidence.contracts.sources import SOURCE_KINDS

MAX_ROUTE_COMMANDS: Final = 32
MAX_ROUTE_FILES: Final = 64
MAX_RECENT_OBSERVATIONS: Final = 64
MAX_PROGRESS_WINDOW: Final = 64
"""Most typed claims an obligation's `progress_window` may carry."""

MAX_COMMAND_CHARS: Final = 64 * 1024
"""Longest proposed command accepted: real heredoc commits and inline scripts run this long."""
CommandText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_COMMAND_CHARS)]
FilePath = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
RouteText = Annotated[str, StringConstraints(min_length=1, max_length=2000)]
RevisionId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{7,64}$")]
HOST_SESSION_PATTERN: Final = rf"^host-session:({'|'.join(SOURCE_KINDS)}):[A-Za-z0-9][A-Za-z0-9._:/-]{{0,127}}$"
"""LoopX's normalised host-session scope: `host-session:<source>:<session id>`."""
HostSessionRef = Annotated[str, StringConstraints(pattern=HOST_SESSION_PATTERN)]


class SituationScope(ContractModel):
    """Whose history may be read. Admission requires every field; missing ones deny."""

    agent_id: OpaqueId | None = None
    """The agent whose own sessions are searched."""
    project_id: OpaqueId | None = None
    """The LoopX project."""
    repository_id: OpaqueId | None = None
    """The repository identity (stable across worktrees and clones)."""


class Revision(ContractModel):
    """The repository revision the proposed route would run at."""

    current: RevisionId
    """The current commit."""
    merge_base: RevisionId | None = None
    """The merge base with the main line, when known."""


class ObligationTrigger(ContractModel):
    """One trigger of LoopX's `autonomous_replan_obligation_v0`."""

    kind: OpaqueId
    """LoopX's trigger kind, e.g. `typed_progress_repeat` or `vision_acceptance_gap`."""
    progress_baseline: TypedProgressObservation | None = None
    """The baseline the trigger compares against, when the trigger carries one."""
    progress_window: Annotated[list[TypedProgressObservation], Field(max_length=MAX_PROGRESS_WINDOW)] | None = None
    """Typed claims already made while the obligation formed, when the trigger carries them."""


class Obligation(ContractModel):
    """The subset of LoopX's `autonomous_replan_obligation_v0` a decision is bound to."""

    obligation_id: OpaqueId
    """The obligation id (`replan-` + 16 hex in LoopX); rotates on every re-arm."""
    triggers: Annotated[list[ObligationTrigger], Field(max_length=16)] = []
    """Why the Replan was armed."""
    progress_baseline: TypedProgressObservation | None = None
    """The observation novelty is judged against."""
    progress_window: Annotated[list[TypedProgressObservation], Field(max_length=MAX_PROGRESS_WINDOW)] | None = None
    """Every typed claim already made while the obligation formed (LoopX's `progress_window`,
    plus its replan context's coverage ledger): a blocker recorded there is not new, and an
    external-review obligation refuses a replay of any of them."""
    satisfying_semantic_outcomes: list[OutcomeId] | None = None
    """A narrowed set of outcomes that settle this obligation, when LoopX narrows it (as in
    LoopX, an empty list narrows nothing and repeats collapse)."""


class RouteProposal(ContractModel):
    """The concrete next step the agent proposes, in canonical fields only (no chat)."""

    action_kind: OpaqueId | None = None
    """What kind of action the route is (`shell`, `edit`, ...)."""
    commands: Annotated[list[CommandText], Field(max_length=MAX_ROUTE_COMMANDS)] = []
    """Shell commands the route would run."""
    files: Annotated[list[FilePath], Field(max_length=MAX_ROUTE_FILES)] = []
    """Files the route would touch."""
    cwd: FilePath | None = None
    """The folder the route's commands start in (absolute, or relative to the repository), when
    known: the same command in another place is another route. Unknown: the repository's root."""
    escalated: bool | None = None
    """The route's commands run outside the agent's sandbox (Claude Code's `dangerouslyDisableSandbox`,
    Codex's escalated permissions): after a sandbox's denial, another route than a sandboxed run.
    None: not stated (compared with prior runs either way)."""
    hypothesis: RouteText | None = None
    """The hypothesis the route tests, in words."""
    blocker: RouteText | None = None
    """The blocker the route claims, in words."""


class ProposedStep(ContractModel):
    """The proposed observation (what LoopX will judge) and the route behind it."""

    observation: TypedProgressObservation
    """The observation the agent would write back."""
    route: RouteProposal
    """The concrete route."""


class Coverage(ContractModel):
    """What durable state already knows about coverage and missing evidence."""

    hypotheses_exhausted: bool
    """Every current hypothesis has been tried."""
    prior_session_coverage: Literal["known", "unknown"]
    """Whether earlier sessions' coverage is known to the current packet."""
    work_identified: bool
    """Durable state identifies the work being resumed or handed off."""
    decision_evidence_missing: bool
    """The earlier decision or failure evidence is missing from the packet."""


class OperatorRequest(ContractModel):
    """An explicit operator request for historical evidence."""

    requested: bool
    """True when an operator asked for history on this Replan."""


class SituationLimits(ContractModel):
    """Requested bounds; each is clamped to the hard caps, never raised above them."""

    max_sessions: Annotated[int, Field(ge=1)] | None = None
    """Most sessions to draw items from."""
    max_items: Annotated[int, Field(ge=1)] | None = None
    """Most items in the private result."""
    max_snippet_chars: Annotated[int, Field(ge=1)] | None = None
    """Longest snippet, in characters."""
    max_total_chars: Annotated[int, Field(ge=1)] | None = None
    """Most snippet characters in total."""
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    """Token budget of the private result."""


EXAMPLE_SITUATION: Final[JsonDict] = {
    "schema_version": "replan_situation_v0",
    "situation_id": "manual-5f2c9e1a7b3d4c60",
    "scope": {"agent_id": "codex-main", "project_id": "my-project", "repository_id": "my-repo"},
    "obligation": {"obligation_id": "replan-5f2c9e1a7b3d4c60", "triggers": []},
    "recent_observations": [],
    "proposed": {
        "observation": {
            "schema_version": "typed_progress_observation_v0",
            "result_class": "advanced",
            "work_item_id": "manual-work",
            "probe_kind": "manual-route",
            "evidence_ids": [],
        },
        "route": {
            "action_kind": "shell",
            "commands": ["pytest tests/test_auth.py -x"],
            "files": ["tests/test_auth.py"],
            "hypothesis": "the token refresh races the logout",
        },
    },
    "coverage": {
        "hypotheses_exhausted": False,
        "prior_session_coverage": "unknown",
        "work_identified": True,
        "decision_evidence_missing": False,
    },
    "operator_request": {"requested": True},
}
"""What `situation new --command "pytest tests/test_auth.py -x" --file tests/test_auth.py
--hypothesis "the token refresh races the logout"` writes for an enabled scope (README, "On your
own history"); the schema's example."""


class ReplanSituation(ContractModel):
    """One Replan that may need history: scope, obligation, recent attempts, the proposal."""

    model_config = ConfigDict(**ContractModel.model_config, json_schema_extra={"examples": [EXAMPLE_SITUATION]})

    schema_version: Literal["replan_situation_v0"]
    """This contract's schema id."""
    situation_id: OpaqueId
    """The caller's id for this situation."""
    scope: SituationScope
    """Whose history may be read."""
    revision: Revision | None = None
    """The current repository revision, when known."""
    obligation: Obligation
    """The Replan obligation the decision is for."""
    recent_observations: Annotated[list[RecentObservation], Field(max_length=MAX_RECENT_OBSERVATIONS)] = []
    """This agent's recent observations, in any order (sorted by `generated_at` when read)."""
    proposed: ProposedStep
    """The proposed next step."""
    coverage: Coverage
    """Coverage facts from durable state."""
    operator_request: OperatorRequest
    """Whether an operator asked for history."""
    evidence_types: Annotated[list[EvidenceType], Field(min_length=1, max_length=5)] | None = None
    """Evidence types to retrieve; all five when absent."""
    limits: SituationLimits | None = None
    """Requested bounds, clamped to the hard caps."""
    invoking_session: HostSessionRef | None = None
    """The host session asking (`host-session:<source>:<id>`), as LoopX means it: the thread
    whose agent asks, and whose earlier history counts. Only its records from the invocation
    onward (the lookup's start less 30 s) and its undated records are excluded: the invoking turn
    is not history (`providers/invoking_session.py`). Earlier releases excluded the
    whole session."""


_SITUATION_ID: Final = TypeAdapter(OpaqueId)


def public_situation_id(raw: bytes | None) -> str | None:
    """The `situation_id` of an item that is otherwise invalid, when it is a well-formed opaque
    id (public by contract); None for anything else, which is never echoed."""
    try:
        document = json.loads(raw or b"")
        return _SITUATION_ID.validate_python(document.get("situation_id"), strict=True)
    except (ValueError, AttributeError, ValidationError, RecursionError):
        return None
