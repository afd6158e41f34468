"""receipt: the public proof of a scoped lookup. Digests and counts only."""

from collections import Counter

from obelisk_session_evidence.contracts.base import EVIDENCE_TYPES
from obelisk_session_evidence.contracts.digests import canonical_digest, salted_digest
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceReceipt, PriorCallRevisions
from obelisk_session_evidence.contracts.stage_values import Admission, CappedEvidence, RouteComparison


def receipt(
    admission: Admission, capped: CappedEvidence, comparison: RouteComparison, *, digest_salt: str
) -> HistoricalEvidenceReceipt | None:
    """A content-free receipt of the capped lookup (what the verdict rests on: counted, never
    named); None when nothing was looked up."""
    result = capped.result
    if admission.status == "not_admitted" or result is None:
        return None
    request, basis = admission.request, comparison.verdict_basis
    counts = Counter(item.evidence_type for item in result.items)
    return HistoricalEvidenceReceipt(
        request_id=request.request_id,
        provider_version=result.provider_version,
        index_revision_digest=canonical_digest(result.index_revision),
        scope_digest=canonical_digest(result.scope_applied.model_dump(mode="json")),
        query_digest=salted_digest(request.query_terms, salt=digest_salt),
        result_digest=salted_digest([item.model_dump(mode="json") for item in result.items], salt=digest_salt),
        result_count=len(result.items),
        evidence_type_counts={kind: counts[kind] for kind in EVIDENCE_TYPES},
        freshness=result.freshness,
        truncated=result.truncated,
        omitted_count=result.omitted_count,
        prior_call_revisions=prior_call_revisions(capped),
        verdict_items=len(basis.rests_on) if basis else 0,
        successor_items=len(basis.successors) if basis else 0,
    )


def prior_call_revisions(capped: CappedEvidence) -> PriorCallRevisions:
    """The prior calls by where git placed their revisions: an unchecked one counts as unchecked."""
    relation = {check.revision: check.relation for check in capped.revision_checks}
    counts = Counter(
        "unrecorded" if not call.revision_ref else relation.get(call.revision_ref, "unknown")
        for call in capped.prior_calls
    )
    return PriorCallRevisions(
        ancestor=counts["ancestor"],
        not_ancestor=counts["not_ancestor"],
        unchecked=counts["unknown"],
        unrecorded=counts["unrecorded"],
    )
