"""Builders shared by the stage tests."""

import json
from datetime import UTC, datetime

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY, situation
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, EnablementConfig
from obelisk_session_evidence.contracts.evidence import (
    EvidenceItem,
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
    ScopeApplied,
)
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation


def situation_model(**kwargs) -> ReplanSituation:
    return load_contract(ReplanSituation, json.dumps(situation(**kwargs)).encode())


def enabled_policy(**overrides) -> AdmissionPolicy:
    enablement = Enablement(
        **{
            "surface": "replan-history",
            "agent_id": FIXTURE_AGENT,
            "project_id": FIXTURE_PROJECT,
            "repository_id": FIXTURE_REPOSITORY,
            "enabled_at": datetime(2026, 11, 29, tzinfo=UTC),
            **overrides,
        }
    )
    return AdmissionPolicy(config=EnablementConfig(enablements=[enablement]), load_reason_code="config_loaded")


def result_for(
    request: HistoricalEvidenceRequest, items: list[EvidenceItem], *, freshness: str = "fresh"
) -> HistoricalEvidenceResult:
    scope = request.scope
    return HistoricalEvidenceResult(
        request_id=request.request_id,
        provider_version="0.1.0 handler/1",
        index_revision="rev-1",
        scope_applied=ScopeApplied(
            agent_id=scope.agent_id, project_id=scope.project_id, repository_id=scope.repository_id
        ),
        freshness=freshness,
        items=items,
        truncated=False,
        omitted_count=0,
    )


def item(snippet: str, evidence_type: str = "prior_failure", session: int = 1) -> EvidenceItem:
    return EvidenceItem(
        session_ref=f"session:{session:016x}",
        message_ref=f"message:{abs(hash(snippet)) % 16**16:016x}",
        evidence_type=evidence_type,
        snippet=snippet,
    )
