"""`qualify --format json`: the Stage 0 headline (arm 2, held-back split) and every target checked."""

from typing import Annotated, Literal

from pydantic import Field

from obelisk_session_evidence.contracts.base import ContractModel
from obelisk_session_evidence.contracts.reason_codes import ThresholdName

Rate = Annotated[float, Field(ge=0, le=1)]
TargetName = Literal[
    "precision",
    "recall",
    "false_repeat_rate",
    "tokens_p95",
    "real_precision",
    "real_recall",
    "real_traps",
    "replay_alarms_right",
    "replay_alarms_right_over_naive",
    "replay_dead_ends_caught",
]


class TargetCheck(ContractModel):
    """One target: the figure reached against the bound."""

    name: TargetName
    """Which measure."""
    label: Annotated[str, Field(max_length=60)]
    """How the report names it."""
    comparison: Literal[">=", "<=", ">"]
    """The figure must be at least (`>=`), at most (`<=`) or above (`>`) the target."""
    target: Annotated[float, Field(ge=0)]
    """The bound."""
    figure: Annotated[float, Field(ge=0)]
    """What arm 2 reached."""
    met: bool
    """Whether the figure satisfies the bound."""
    judge: bool = True
    """Whether `targets_met` (and the exit code) counts it: when the real corpus was replayed, the
    real arms judge and the synthetic arms' targets are reported as coverage only."""


class QualificationSummary(ContractModel):
    """`obelisk_session_evidence_qualify_v0`: the headline numbers and thresholds of one run."""

    schema_version: Literal["obelisk_session_evidence_qualify_v0"] = "obelisk_session_evidence_qualify_v0"
    """This document's schema id."""
    cases: Annotated[int, Field(ge=0)]
    """Cases run (all splits)."""
    held_back: Annotated[int, Field(ge=0)]
    """Cases in the held-back split, which every figure here is from."""
    thresholds: dict[ThresholdName, int]
    """The thresholds calibrated on the training split."""
    precision: Rate
    """Arm 2 precision on repeated routes."""
    recall: Rate
    """Arm 2 recall on repeated routes."""
    f1: Rate
    """Their harmonic mean."""
    false_repeat_rate: Rate
    """Share of non-repeats arm 2 called repeats."""
    tokens_p95: Annotated[float, Field(ge=0)]
    """95th percentile of arm 2's private context, in tokens."""
    targets: list[TargetCheck]
    """Every target, met or not."""
    targets_met: bool
    """True when every judging target is met (then `qualify` exits 0)."""
    report_path: Annotated[str, Field(max_length=4096)]
    """Where `report.md` was written."""
    real_cases: Annotated[int, Field(ge=0)] = 0
    """Hand-labelled real-transcript cases run (0: the real set did not run)."""
    real_precision: Rate | None = None
    """Precision on the real set's repeated routes."""
    real_recall: Rate | None = None
    """Recall on the real set's repeated routes."""
    real_traps_right: Annotated[int, Field(ge=0)] | None = None
    """Another repository's or agent's identical failure not called a repeat."""
    real_traps: Annotated[int, Field(ge=0)] | None = None
    """Trap cases in the real set."""
    replay_calls: Annotated[int, Field(ge=0)] = 0
    """Shell calls of the real corpus replayed (0: the replay arm did not run)."""
    replay_dead_end_rate: Rate | None = None
    """Re-runs of a failed command that failed again, per replayed call (RFC §10's first measure)."""
    replay_alarms_right: Rate | None = None
    """Arm 2 (retrieval admitted): alarms whose call failed again, of the judged alarms."""
    replay_dead_ends_caught: Rate | None = None
    """Arm 2: dead ends it alarmed at."""
    replay_naive_alarms_right: Rate | None = None
    """The naive rule's alarms right on the same calls (it catches every dead end by construction)."""
    replay_within_session_alarms_right: Rate | None = None
    """Arm 1 (within-session evidence only): alarms right."""
    replay_within_session_dead_ends_caught: Rate | None = None
    """Arm 1: dead ends caught."""
    replay_private_tokens_p95: Annotated[int, Field(ge=0)] | None = None
    """Arm 2: 95th percentile of the private context, in tokens."""
    replay_truncation_rate: Rate | None = None
    """Arm 2: share of decisions whose private result was cut."""
    replay_full_history_tokens_p95: Annotated[int, Field(ge=0)] | None = None
    """Arm 3 (cost ceiling): 95th percentile of the whole in-scope history's tokens before a call."""
    replay_decide_ms_p95: Annotated[float, Field(ge=0)] | None = None
    """Arm 2: 95th percentile of one decision's wall time, in milliseconds."""
