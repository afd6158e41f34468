"""`replay_report_v0`: every replayed call's verdict judged by what the call really did next.

A replay walks a scope's tool calls in time order and decides each shell call on the history
strictly before it, with the call's own command as the proposed route. Then the call's recorded
outcome judges the verdict: an alarm (`repeats_prior_failure`) whose call failed again is true,
one whose call succeeded is false; a call that re-ran a command (exactly, whitespace aside) whose
last run failed, and failed again, is a dead end, caught when the verdict alarmed. The naive rule
("alarm at every exact re-run of a command whose last run failed") is judged on the same calls.

Public: counts, rates and opaque references only (never a command, path or output).
"""

from typing import Annotated, Final, Literal

from pydantic import AwareDatetime, Field

from obelisk_session_evidence.contracts.base import ContractModel, Digest, Freshness, OpaqueId
from obelisk_session_evidence.contracts.prior_calls import CallOutcome

EvidencePlace = Literal["within_session", "across_sessions"]
"""Where the history an alarm or a dead end rests on lies: the call's own session (RFC §10 arm 1,
what LoopX's current context already holds) or only earlier sessions (what this provider adds)."""
REPLAY_TARGETS: Final = {"alarms_right": 0.85, "dead_ends_caught": 0.90}
"""Issue targets: both figures, and both above the naive rule's on the same calls."""
MAX_LISTED_CALLS: Final = 200
"""Most false alarms (and missed dead ends) listed by reference per scope."""

Rate = Annotated[float, Field(ge=0.0, le=1.0)]


class RuleFigures(ContractModel):
    """One alarm rule judged on a set of calls."""

    alarms: int
    """Calls the rule alarmed at."""
    true_alarms: int
    """Alarms whose call failed again."""
    false_alarms: int
    """Alarms whose call succeeded (or found no match)."""
    unjudged_alarms: int
    """Alarms whose call has no usable outcome (not run, or none recorded)."""
    dead_ends_caught: int
    """Dead ends the rule alarmed at."""
    alarms_right: Rate | None
    """true ÷ (true + false); None without a judged alarm."""
    dead_ends_caught_rate: Rate | None
    """caught ÷ dead ends; None without a dead end."""


class PlaceFigures(ContractModel):
    """Dead ends and alarms whose evidence lies in one place (`EvidencePlace`)."""

    dead_ends: int
    """Dead ends whose failed last run lies there."""
    verdict: RuleFigures
    """The verdict's alarms whose evidence lies there."""
    naive: RuleFigures
    """The naive rule's alarms whose failed last run lies there."""


class ReplayFigures(ContractModel):
    """What a set of replayed calls did, and how the verdict and the naive rule judged them."""

    calls: int
    """Shell calls replayed."""
    outcomes: dict[CallOutcome, int]
    """Replayed calls by what they did."""
    reruns_of_failure: int
    """Calls that re-ran a command whose last run failed (the naive rule's alarms)."""
    dead_ends: int
    """Re-runs of a failed command that failed again."""
    repeated_dead_end_rate: Rate | None
    """dead ends ÷ calls (RFC §10's first measure); None without calls."""
    verdicts: dict[str, int]
    """Replayed calls by verdict."""
    verdict: RuleFigures
    """The verdict's alarms (`repeats_prior_failure`) judged by the calls' outcomes."""
    naive: RuleFigures
    """The naive rule on the same calls."""
    within_session: PlaceFigures
    """Evidence in the call's own session (arm 1)."""
    across_sessions: PlaceFigures
    """Evidence only in earlier sessions (what retrieval adds: arm 2)."""
    private_items_p95: int
    """95th percentile of items that reached the private result per decision."""
    truncated_decisions: int
    """Decisions whose private result was cut."""
    decide_ms_p95: float
    """95th percentile of one decision's wall time, in milliseconds."""


class CallRef(ContractModel):
    """One replayed call, by reference only."""

    session_ref: OpaqueId
    """Opaque reference to the call's session (as in private results)."""
    call_index: int
    """The call's position among the session's replayed calls (0-based)."""
    command_digest: Digest
    """Salted digest of the call's command: equal commands, equal digests; never the text."""
    verdict: str
    """The verdict the replay gave."""
    outcome: CallOutcome
    """What the call really did."""
    place: EvidencePlace | None
    """Where the failed run it repeats lies, when it re-ran one."""


OtherToolKind = Literal["edit", "read", "other"]
"""A tool call replay does not judge (it runs no command): an edit, a read, anything else."""


class ScopeReplay(ContractModel):
    """One enabled scope's replay."""

    agent_id: OpaqueId
    project_id: OpaqueId
    repository_id: OpaqueId
    freshness: Freshness
    """The scope's freshness after the replay's one refresh."""
    tool_calls: int
    """Dated tool calls in scope (every tool)."""
    other_tool_calls: dict[OtherToolKind, int]
    """Tool calls not replayed (they run no command): edits, reads, others."""
    undated_calls: int
    """Tool calls without a time: they cannot be placed, so they are not replayed."""
    figures: ReplayFigures
    """The replayed shell calls."""
    false_alarms: Annotated[list[CallRef], Field(max_length=MAX_LISTED_CALLS)]
    """Alarms whose call succeeded."""
    missed_dead_ends: Annotated[list[CallRef], Field(max_length=MAX_LISTED_CALLS)]
    """Dead ends the verdict did not alarm at."""
    seconds: float
    """Wall time of the scope's replay (deciding only, after the refresh)."""
    calls_per_second: float | None
    """Replayed calls per second of `seconds`."""


class ReplayReport(ContractModel):
    """`replay`'s public output."""

    schema_version: Literal["replay_report_v0"] = "replay_report_v0"
    generated_at: AwareDatetime
    scopes: list[ScopeReplay]
    """One entry per replayed scope."""
    total: ReplayFigures | None
    """Every scope's calls together; None without a scope."""
    targets: dict[str, float]
    """The targets the figures are judged against (`REPLAY_TARGETS`)."""
    targets_met: bool
    """Alarms right and dead ends caught both at their targets and above the naive rule's."""
