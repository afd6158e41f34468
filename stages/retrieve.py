"""retrieve: ask the provider; a fault becomes a typed empty result, never an exception."""

from obelisk_session_evidence.contracts.errors import EvidenceError, ScopeViolation
from obelisk_session_evidence.contracts.evidence import (
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
    ScopeApplied,
)
from obelisk_session_evidence.contracts.prior_calls import ProviderAnswer
from obelisk_session_evidence.contracts.reason_codes import ProviderFaultCode
from obelisk_session_evidence.contracts.stage_values import (
    Admission,
    NotRetrieved,
    Retrieval,
    RetrievalFailed,
    Retrieved,
)
from obelisk_session_evidence.providers.base import EvidenceProvider


def retrieve(admission: Admission, *, provider: EvidenceProvider | None) -> Retrieval:
    """The provider's in-scope answer, or an empty result carrying the failure's reason code."""
    if admission.status == "not_admitted":
        return NotRetrieved()
    request = admission.request
    if provider is None:
        return RetrievalFailed(result=empty_result(request, "unknown"), reason_code="provider_unavailable")
    try:
        answer = provider.search(request)
        _verify_answer(request, answer)
    except EvidenceError as error:
        reason_code: ProviderFaultCode = error.reason_code
    except Exception:
        reason_code = "provider_crashed"
    else:
        return Retrieved(result=answer.result, prior_calls=answer.prior_calls)
    return RetrievalFailed(result=empty_result(request, _version_of(provider)), reason_code=reason_code)


def empty_result(request: HistoricalEvidenceRequest, provider_version: str) -> HistoricalEvidenceResult:
    """The typed empty result: freshness `unknown`, so absence is never read as 'no history'."""
    return HistoricalEvidenceResult(
        request_id=request.request_id,
        provider_version=provider_version,
        index_revision="unknown",
        scope_applied=_scope_applied(request),
        freshness="unknown",
        items=[],
        truncated=False,
        omitted_count=0,
    )


def _verify_answer(request: HistoricalEvidenceRequest, answer: ProviderAnswer) -> None:
    """Fail closed: a result for another request, scope or type is rejected whole."""
    if not isinstance(answer, ProviderAnswer):
        raise TypeError("the provider answered with something other than a ProviderAnswer")
    result = answer.result
    if result.request_id != request.request_id or result.scope_applied != _scope_applied(request):
        raise ScopeViolation("result scope differs from the request")
    allowed = set(request.evidence_types)
    if any(item.evidence_type not in allowed for item in result.items):
        raise ScopeViolation("result holds an evidence type that was not requested")


def _scope_applied(request: HistoricalEvidenceRequest) -> ScopeApplied:
    scope = request.scope
    return ScopeApplied(agent_id=scope.agent_id, project_id=scope.project_id, repository_id=scope.repository_id)


def _version_of(provider: EvidenceProvider) -> str:
    version = getattr(provider, "provider_version", None)
    return version if isinstance(version, str) and 0 < len(version) <= 80 else "unknown"
