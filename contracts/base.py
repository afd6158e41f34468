"""The one base model every contract shares, and the small value types they reuse."""

from typing import Annotated, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, StringConstraints

OPAQUE_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$"
"""LoopX's public-safe identifier: prose is rejected by shape (`progress_result.py`)."""

OpaqueId = Annotated[str, StringConstraints(pattern=OPAQUE_ID_PATTERN)]
Digest = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
Fingerprint = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{16}$")]

Trigger = Literal[
    "replan_repetition",
    "hypothesis_history_gap",
    "resume_or_handoff_gap",
    "operator_requested_history",
]
TRIGGERS: Final[tuple[Trigger, ...]] = get_args(Trigger)
"""The RFC §4 triggers, in the RFC's order (also the order `classify_gap` prefers them)."""

EvidenceType = Literal["prior_failure", "decision", "file_history", "tool_outcome", "summary"]
EVIDENCE_TYPES: Final[tuple[EvidenceType, ...]] = get_args(EvidenceType)
Freshness = Literal["fresh", "stale", "incomplete", "unknown"]
PROVIDER_ID: Final = "obelisk-session-evidence"


class ContractModel(BaseModel):
    """Frozen, strict, closed: unknown keys are rejected and inputs never echo into errors.

    Validators are built on a model's first use (`defer_build`; pydantic 2.14 rebuilds under a
    lock, so first uses in threads are safe): a process builds only the models it uses. Field
    descriptions for the JSON Schemas are read from attribute docstrings by `contracts.schemas`.
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        hide_input_in_errors=True,
        defer_build=True,
    )
