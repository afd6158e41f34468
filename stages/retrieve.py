"""retrieve: ask the provider; a fault becomes a typed empty result, never an exception.

Whatever the provider, every snippet and every prior call's command and output excerpt pass one
redaction step here (`providers.redaction`), before cap-by-tokens bounds them: a provider that
redacts nothing (Obelisk's snippets arrive as it stored them) leaks nothing (docs/redaction.md).
"""

import functools
from collections.abc import Callable

from obelisk_session_evidence.contracts.errors import EvidenceError, ScopeViolation
from obelisk_session_evidence.contracts.evidence import (
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
    ScopeApplied,
)
from obelisk_session_evidence.contracts.prior_calls import (
    MAX_CALL_COMMAND_CHARS,
    MAX_CALL_OUTPUT_CHARS,
    PriorToolCall,
    ProviderAnswer,
)
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
        return redacted(answer)
    return RetrievalFailed(result=empty_result(request, _version_of(provider)), reason_code=reason_code)


def redacted(answer: ProviderAnswer) -> Retrieved:
    """The answer with every secret in its snippets and prior calls masked (`[REDACTED:<kind>]`)."""
    checks = answer.revision_checks
    if not answer.result.items and not answer.prior_calls:
        return Retrieved(result=answer.result, prior_calls=answer.prior_calls, revision_checks=checks)
    from obelisk_session_evidence.providers.redaction.redaction import redact as redact_text  # loaded only with history

    # One answer repeats texts (the same command run in many sessions, the same output each time):
    # each distinct text is redacted once, and the memo goes with the answer.
    redact = functools.cache(redact_text)
    items = [item.model_copy(update={"snippet": redact(item.snippet)}) for item in answer.result.items]
    calls = [_redacted_call(call, redact) for call in answer.prior_calls]
    return Retrieved(
        result=answer.result.model_copy(update={"items": items}), prior_calls=calls, revision_checks=checks
    )


def _redacted_call(call: PriorToolCall, redact: Callable[[str], str]) -> PriorToolCall:
    """A prior call with its command and output redacted, cut back to their bounds (a marker can
    be longer than the secret it replaces)."""
    command, output = redact(call.command), redact(call.output_excerpt)
    return call.model_copy(
        update={
            "command": command[:MAX_CALL_COMMAND_CHARS],
            "command_truncated": call.command_truncated or len(command) > MAX_CALL_COMMAND_CHARS,
            "output_excerpt": output[:MAX_CALL_OUTPUT_CHARS],
            "output_truncated": call.output_truncated or len(output) > MAX_CALL_OUTPUT_CHARS,
        }
    )


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
