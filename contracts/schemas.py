"""The published JSON Schemas: one per public contract, generated from the models."""

from typing import Any, Final

from pydantic import BaseModel

from contracts.config import EnablementConfig
from contracts.decision import ReplanEvidenceDecision
from contracts.evidence import (
    HistoricalEvidenceReceipt,
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
)
from contracts.index_status import IndexStatus, RefreshReport
from contracts.lifecycle import DisableOutcome, EnableOutcome, IndexDropOutcome, LifecycleStatus
from contracts.situation import ReplanSituation

PUBLIC_CONTRACTS: Final[dict[str, type[BaseModel]]] = {
    "replan_situation_v0": ReplanSituation,
    "historical_evidence_request_v0": HistoricalEvidenceRequest,
    "historical_evidence_result_v0": HistoricalEvidenceResult,
    "historical_evidence_receipt_v0": HistoricalEvidenceReceipt,
    "replan_evidence_decision_v0": ReplanEvidenceDecision,
    "obelisk_session_evidence_config_v0": EnablementConfig,
    "obelisk_session_evidence_enable_v0": EnableOutcome,
    "obelisk_session_evidence_status_v0": LifecycleStatus,
    "obelisk_session_evidence_disable_v0": DisableOutcome,
    "obelisk_session_evidence_index_drop_v0": IndexDropOutcome,
    "obelisk_session_evidence_index_refresh_v0": RefreshReport,
    "obelisk_session_evidence_index_status_v0": IndexStatus,
}


def json_schema(name: str) -> dict[str, Any]:
    """The 2020-12 JSON Schema of one public contract, validation mode (what we accept)."""
    schema = PUBLIC_CONTRACTS[name].model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:obelisk-session-evidence:{name}",
        **schema,
    }
