"""The three arms of RFC §10 on identical cases, with per-stage timing.

1. `current_context`: LoopX's exact ids only; nothing is retrieved.
2. `admitted_retrieval`: the whole pipeline (classify, admit, retrieve, cap, compare).
3. `full_history`: every in-scope item of the agent's history, uncapped (the cost ceiling); the
   same admission and freshness as arm 2, no full-text narrowing, no cap.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal

from obelisk_session_evidence.compose import decide
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, EnablementConfig, ProviderKind
from obelisk_session_evidence.contracts.digests import canonical_json
from obelisk_session_evidence.contracts.stage_values import CappedEvidence
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.base import EvidenceProvider, UnavailableProvider
from obelisk_session_evidence.qualify.synthetic import AGENT_ID, PROJECT_ID, REPO_ROOT, REPOSITORY_ID, QualificationCase
from obelisk_session_evidence.stages.admit import admit
from obelisk_session_evidence.stages.cap_by_tokens import TokenEncoder, item_token_count
from obelisk_session_evidence.stages.classify_gap import classify_gap
from obelisk_session_evidence.stages.compare_route import compare_route
from obelisk_session_evidence.stages.pipeline import Stage
from obelisk_session_evidence.stages.retrieve import retrieve

ArmName = Literal["current_context", "admitted_retrieval", "full_history"]
ARMS: Final[tuple[ArmName, ...]] = ("current_context", "admitted_retrieval", "full_history")
LOOPX_REPEAT_CODES: Final = frozenset(
    {"same_route_new_evidence_only", "blocker_repeated", "terminal_coverage_repeated"}
)
"""LoopX's own exact-id reasons that say the step repeats its baseline."""
REPEAT_VERDICTS: Final = frozenset({"repeats_prior_failure", "repeats_prior_attempt"})
DIGEST_SALT: Final = "qualify"
"""Receipts' digest salt in every arm: fixed, so a run is reproducible (never the owner's)."""
ProviderFactory = Callable[[QualificationCase], EvidenceProvider]


@dataclass(frozen=True, slots=True)
class ArmRun:
    """What one arm decided for one case, and what it cost."""

    case_id: str
    arm: ArmName
    verdict: str
    """The arm's verdict (arm 1: LoopX's own reading of its exact-id delta)."""
    outcomes: tuple[str, ...]
    admission: str
    retrieval: str
    freshness: str | None
    """Freshness the decision reported; None when nothing was looked up."""
    context_tokens: int | None
    """Tokens of private context the comparison read; None when nothing was looked up."""
    context_chars: int | None
    truncated: bool | None
    latency_ms: dict[str, float] = field(default_factory=dict)
    fallback_commands: int = 0
    """Proposed commands the shell grammar could not read (compared by tokens instead)."""
    truncated_commands: int = 0
    """Proposed commands compared within bounded work (cut at the comparator's limits)."""

    @property
    def predicted_repeat(self) -> bool:
        """The arm called the route a repeat."""
        return self.verdict in REPEAT_VERDICTS


@dataclass(frozen=True, slots=True)
class Trace:
    """The private values a run leaves for recalibration (never written anywhere)."""

    case: QualificationCase
    capped: CappedEvidence


def qualification_policy(*, repo_roots: tuple[str, ...] = (REPO_ROOT,)) -> AdmissionPolicy:
    """The one enablement every case runs under: the qualification agent, project and repository."""
    enablement = Enablement(
        surface="replan-history",
        agent_id=AGENT_ID,
        project_id=PROJECT_ID,
        repository_id=REPOSITORY_ID,
        repo_roots=list(repo_roots),
        enabled_at=datetime(2026, 11, 1, tzinfo=UTC),
    )
    return AdmissionPolicy(config=EnablementConfig(enablements=[enablement]), load_reason_code="config_loaded")


def run_current_context(case: QualificationCase, *, encoder: TokenEncoder) -> ArmRun:
    """Arm 1: no retrieval (nothing is enabled); LoopX's exact-id delta is the whole judgement."""
    latency: dict[str, float] = {}
    decision = decide(
        case.situation,
        policy=AdmissionPolicy(config=None, load_reason_code="config_absent"),
        provider_factory=_no_provider,
        thresholds=RouteThresholds(),
        encoder=encoder,
        digest_salt=DIGEST_SALT,
        call=_timed(latency),
    ).decision
    delta = decision.semantic_delta
    if delta.reason_code in LOOPX_REPEAT_CODES:
        verdict = "repeats_prior_attempt"
    else:
        verdict = "novel" if delta.accepted else "not_compared"
    return ArmRun(
        case.case_id,
        "current_context",
        verdict,
        tuple(delta.outcomes),
        decision.admission.reason_code,
        decision.retrieval.reason_code,
        None,
        None,
        None,
        None,
        latency,
    )


def run_admitted_retrieval(
    case: QualificationCase,
    *,
    provider: EvidenceProvider,
    encoder: TokenEncoder,
    thresholds: RouteThresholds,
    policy: AdmissionPolicy,
) -> tuple[ArmRun, Trace]:
    """Arm 2: the pipeline as shipped, through the composition root, with this case's provider."""
    latency: dict[str, float] = {}
    values = decide(
        case.situation,
        policy=policy,
        provider_factory=lambda enablement, kind: provider,
        thresholds=thresholds,
        encoder=encoder,
        digest_salt=DIGEST_SALT,
        call=_timed(latency),
    ).values
    decision, capped = values.decision, values.capped
    run = ArmRun(
        case.case_id,
        "admitted_retrieval",
        decision.comparison.verdict,
        tuple(decision.semantic_delta.outcomes),
        decision.admission.reason_code,
        decision.retrieval.reason_code,
        decision.receipt.freshness if decision.receipt else None,
        *_context(capped),
        latency,
        decision.comparison.token_fallback_commands,
        decision.comparison.truncated_commands,
    )
    return run, Trace(case, capped)


def run_full_history(
    case: QualificationCase,
    *,
    provider: EvidenceProvider,
    encoder: TokenEncoder,
    thresholds: RouteThresholds,
    policy: AdmissionPolicy,
) -> tuple[ArmRun, Trace]:
    """Arm 3: the same admission, then every in-scope item, uncapped, into the comparison."""
    latency: dict[str, float] = {}
    gap = _clocked(latency, "classify-gap", classify_gap, case.situation)
    admission = _clocked(latency, "admit", admit, case.situation, gap, policy=policy)
    retrieval = _clocked(latency, "retrieve", retrieve, admission, provider=provider)
    result = None if retrieval.status == "not_admitted" else retrieval.result
    prior_calls = retrieval.prior_calls if retrieval.status == "retrieved" else []

    def uncapped() -> CappedEvidence:
        tokens = sum(item_token_count(item, encoder) for item in result.items) if result else 0
        return CappedEvidence(result=result, prior_calls=prior_calls, token_count=tokens)

    capped = _clocked(latency, "cap-by-tokens", uncapped)
    compared = _clocked(latency, "compare-route", compare_route, case.situation, gap, capped, thresholds=thresholds)
    run = ArmRun(
        case.case_id,
        "full_history",
        compared.comparison.verdict,
        tuple(compared.semantic_delta.outcomes),
        admission.reason_code,
        retrieval.reason_code,
        result.freshness if result else None,
        *_context(capped),
        latency,
    )
    return run, Trace(case, capped)


def rejudge(trace: Trace, thresholds: RouteThresholds) -> tuple[str, tuple[str, ...]]:
    """Verdict and outcomes of a recorded run under other thresholds (compare-route only)."""
    compared = compare_route(
        trace.case.situation, classify_gap(trace.case.situation), trace.capped, thresholds=thresholds
    )
    return compared.comparison.verdict, tuple(compared.semantic_delta.outcomes)


def _no_provider(enablement: Enablement, kind: ProviderKind) -> EvidenceProvider:
    """Arm 1's backend: none (it enables nothing, so admission never asks for one)."""
    return UnavailableProvider("qualify current_context", "no_backend")


def _context(capped: CappedEvidence) -> tuple[int | None, int | None, bool | None]:
    if capped.result is None:
        return None, None, None
    chars = sum(len(canonical_json(i.model_dump(mode="json", exclude_none=True))) for i in capped.result.items)
    return capped.token_count, chars, capped.result.truncated


def _timed(latency: dict[str, float]) -> Callable[[Stage, list[Any], dict[str, Any]], Any]:
    def call(stage: Stage, args: list[Any], options: dict[str, Any]) -> Any:
        return _clocked(latency, stage.name, stage.function, *args, **options)

    return call


def _clocked(latency: dict[str, float], name: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    start = time.perf_counter()
    value = function(*args, **kwargs)
    latency[name] = (time.perf_counter() - start) * 1000.0
    return value
