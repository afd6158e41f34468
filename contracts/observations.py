"""LoopX's `typed_progress_observation_v0`, with its fingerprint reproduced exactly."""

from typing import Annotated, Any, Final, Literal

from pydantic import AwareDatetime, Field, field_validator, model_validator

from obelisk_session_evidence.contracts.base import ContractModel, Fingerprint, OpaqueId
from obelisk_session_evidence.contracts.digests import observation_fingerprint

ResultClass = Literal["advanced", "unchanged", "blocked", "exploration_exhausted", "no_followup"]
MAX_EVIDENCE_IDS: Final = 12
IDENTITY_FIELDS: Final = (
    "work_item_id",
    "surface_id",
    "hypothesis_id",
    "probe_kind",
    "result_class",
    "blocker_id",
    "coverage_scope_id",
    "evidence_ids",
    "coverage_complete",
)
"""The fields LoopX fingerprints (`progress_observation.py`); prose never enters."""


class TypedProgressObservation(ContractModel):
    """One attempt (or proposed attempt) as LoopX types it: opaque ids and a result class."""

    schema_version: Literal["typed_progress_observation_v0"] = "typed_progress_observation_v0"
    """LoopX's schema id for the observation."""
    result_class: ResultClass
    """What the attempt achieved."""
    work_item_id: OpaqueId | None = None
    """The Todo / work item the attempt belongs to."""
    surface_id: OpaqueId | None = None
    """The surface the attempt worked on."""
    hypothesis_id: OpaqueId | None = None
    """The hypothesis the attempt tested."""
    probe_kind: OpaqueId | None = None
    """The kind of probe used."""
    blocker_id: OpaqueId | None = None
    """The blocker met, for `blocked` results."""
    coverage_scope_id: OpaqueId | None = None
    """The coverage scope, for terminal results."""
    evidence_ids: Annotated[list[OpaqueId], Field(max_length=64)] = []
    """Evidence ids; deduplicated and sorted, at most 12 after deduplication."""
    coverage_complete: bool | None = None
    """Whether coverage is complete, when stated."""
    fingerprint: Fingerprint | None = None
    """LoopX's fingerprint; when given it must equal the one computed from the ids."""

    @field_validator("evidence_ids")
    @classmethod
    def _dedupe_and_sort(cls, value: list[str]) -> list[str]:
        unique = sorted(set(value))
        if len(unique) > MAX_EVIDENCE_IDS:
            raise ValueError(f"evidence_ids accepts at most {MAX_EVIDENCE_IDS} identifiers")
        return unique

    @model_validator(mode="after")
    def _attributable_and_consistent(self) -> "TypedProgressObservation":
        if len(self.identity_fields()) == 1:
            raise ValueError("needs at least one stable work, coverage or evidence identifier")
        if self.fingerprint is not None and self.fingerprint != self.computed_fingerprint():
            raise ValueError("fingerprint does not match the observation's identifiers")
        return self

    def identity_fields(self) -> dict[str, Any]:
        """The present identity fields, exactly as LoopX fingerprints them."""
        present: dict[str, Any] = {}
        for name in IDENTITY_FIELDS:
            value = getattr(self, name)
            if value is not None and value != []:
                present[name] = value
        return present

    def computed_fingerprint(self) -> str:
        """LoopX's 16-hex fingerprint of this observation."""
        return observation_fingerprint(self.identity_fields())


class RecentObservation(TypedProgressObservation):
    """An observation LoopX already recorded for this agent, with when it was generated."""

    generated_at: AwareDatetime
    """When LoopX recorded the observation (timezone-aware ISO 8601)."""
