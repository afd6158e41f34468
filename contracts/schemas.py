"""The published JSON Schemas: one per public contract, generated from the models."""

from typing import Any, Final

from pydantic import BaseModel

from contracts.batch import BatchItemRecord, BatchSpooled, BatchSummary
from contracts.config import EnablementConfig
from contracts.decision import ReplanEvidenceDecision
from contracts.evidence import (
    HistoricalEvidenceReceipt,
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
)
from contracts.index_status import IndexStatus, RefreshReport
from contracts.lifecycle import DisableOutcome, EnableOutcome, IndexDropOutcome, LifecycleStatus
from contracts.error_envelope import ErrorEnvelope
from contracts.operators import ServeOutcome, UiFacts
from contracts.qualification import QualificationSummary
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
    "reprocess_stalled_summary_v0": BatchSummary,
    "reprocess_stalled_item_v0": BatchItemRecord,
    "reprocess_stalled_spool_v0": BatchSpooled,
    "obelisk_session_evidence_qualify_v0": QualificationSummary,
    "obelisk_session_evidence_ui_v0": UiFacts,
    "obelisk_session_evidence_serve_v0": ServeOutcome,
    "obelisk_session_evidence_error_v0": ErrorEnvelope,
}


def json_schema(name: str) -> dict[str, Any]:
    """The 2020-12 JSON Schema of one public contract, validation mode (what we accept)."""
    schema = PUBLIC_CONTRACTS[name].model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:obelisk-session-evidence:{name}",
        **schema,
    }
