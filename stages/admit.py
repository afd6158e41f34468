"""admit: the typed, default-off retrieval policy of RFC §4. Enabling never broadens scope."""

from obelisk_session_evidence.contracts.base import EVIDENCE_TYPES
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement
from obelisk_session_evidence.contracts.digests import canonical_digest
from obelisk_session_evidence.contracts.evidence import (
    MAX_QUERY_TERM_CHARS,
    MAX_QUERY_TERMS,
    HistoricalEvidenceRequest,
    RequestLimits,
    RequestScope,
)
from obelisk_session_evidence.contracts.limits import DEFAULT_LIMITS, HARD_CAPS
from obelisk_session_evidence.contracts.reason_codes import DenialCode
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.stage_values import Admission, Admitted, GapAssessment, NotAdmitted


def admit(situation: ReplanSituation, gap: GapAssessment, *, policy: AdmissionPolicy) -> Admission:
    """Admit a same-agent, same-project, same-repository lookup, or say why not."""
    limits = _clamped_limits(situation)
    token_budget = limits.pop("max_tokens")
    first_trigger = gap.triggers[0] if gap.triggers else None

    def denied(reason_code: DenialCode) -> NotAdmitted:
        return NotAdmitted(reason_code=reason_code, trigger=first_trigger)

    if policy.config is None or not policy.config.enablements:
        return denied("config_invalid" if policy.load_reason_code == "config_invalid" else "not_enabled")
    if not gap.triggers:
        return denied(gap.reason_code)
    scope = situation.scope
    if scope.agent_id is None or scope.project_id is None or scope.repository_id is None:
        return denied("scope_incomplete")
    enablement = matching_enablement(policy.config.enablements, situation)
    if isinstance(enablement, str):
        return denied(enablement)
    trigger = next((t for t in gap.triggers if t in enablement.triggers), None)
    if trigger is None:
        return denied("trigger_not_enabled")
    query_terms = query_terms_for(situation)
    if not query_terms:
        return denied("no_query_terms")
    request = HistoricalEvidenceRequest(
        request_id="req-" + canonical_digest([situation.model_dump(mode="json"), trigger])[7:31],
        situation_id=situation.situation_id,
        trigger=trigger,
        scope=RequestScope(
            agent_id=enablement.agent_id,
            project_id=enablement.project_id,
            repository_id=enablement.repository_id,
        ),
        revision=situation.revision,
        evidence_types=list(situation.evidence_types or EVIDENCE_TYPES),
        query_terms=query_terms,
        limits=RequestLimits(**limits),
    )
    return Admitted(trigger=trigger, request=request, token_budget=token_budget)


def query_terms_for(situation: ReplanSituation) -> list[str]:
    """Bounded search terms from canonical fields only: route, files, texts, ids. Never chat."""
    route = situation.proposed.route
    observation = situation.proposed.observation
    candidates = [
        *route.commands,
        *route.files,
        route.blocker,
        route.hypothesis,
        observation.surface_id,
        observation.hypothesis_id,
        observation.probe_kind,
        observation.blocker_id,
        *_subject_stems([*route.files, *(w for c in route.commands for w in c.split())]),
    ]
    terms: list[str] = []
    for candidate in candidates:
        term = " ".join((candidate or "").split())[:MAX_QUERY_TERM_CHARS]
        if term and term not in terms:
            terms.append(term)
    return terms[:MAX_QUERY_TERMS]


def _subject_stems(words: list[str]) -> list[str]:
    """`tests/test_parser.py` -> `parser`: finds edits of the code a test exercises, and vice versa."""
    stems = []
    for word in words:
        name = word.rstrip("/").rsplit("/", 1)[-1]
        if "." not in name and "/" not in word:
            continue
        stem = name.split(".", 1)[0].removeprefix("test_")
        for suffix in ("_test", "_spec", "_tests"):
            stem = stem.removesuffix(suffix)
        if len(stem) >= 3 and stem.replace("_", "").replace("-", "").isalnum():
            stems.append(stem)
    return stems


def matching_enablement(enablements: list[Enablement], situation: ReplanSituation) -> Enablement | DenialCode:
    """The enablement for exactly this scope, or the denial of the broadening it would need."""
    scope = situation.scope
    same_project = [e for e in enablements if e.project_id == scope.project_id]
    if not same_project:
        return "cross_project_denied"
    same_agent = [e for e in same_project if e.agent_id == scope.agent_id]
    if not same_agent:
        return "cross_agent_denied"
    same_repository = [e for e in same_agent if e.repository_id == scope.repository_id]
    if not same_repository:
        return "cross_repository_denied"
    return same_repository[0]


def _clamped_limits(situation: ReplanSituation) -> dict[str, int]:
    """The situation's limits over the defaults, each clamped to its hard cap."""
    requested = situation.limits.model_dump(exclude_none=True) if situation.limits else {}
    return {name: min({**DEFAULT_LIMITS, **requested}[name], cap) for name, cap in HARD_CAPS.items()}
