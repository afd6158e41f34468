"""One bounded recall for a LoopX host: a leading verdict item, then the pipeline's capped items.

Both LoopX adapters (the in-process `ContextProvider` and the Decision Context extension
executable) answer through `situation_for` and `recall`. What they are handed maps onto this
project as follows:

- the situation: bound to the in-process provider; or named by the `query` as a spooled situation
  reference `replan-situation:sha256:<64 hex>` (`situation spool`); or, for any other query, a
  scoped lookup built from what LoopX says about the asker and the owner's enablement
  (`scoped_lookup.py`; `query_route.py`: how free text becomes a command, files or words);
- `scope_ref`: `goal` and `replan-history` name no host session; `host-session:<source>:<id>`
  names the thread that is asking (LoopX's meaning): it identifies the agent through LoopX's
  thread-agent bindings, its earlier history counts, and only its records from the invocation
  onward are excluded (`providers/invoking_session.py`). Anything else is refused;
- the answer: `completed` with a leading verdict item and then the capped private items
  (opaque refs, a summary naming only the evidence type, date and index freshness, the snippet as
  transient content); or
  `unavailable` with a stable reason code LoopX shows: not admitted, not resolvable, a provider
  fault, or an empty answer from a stale or incomplete index (absence there is never "no history").

The verdict item is the one item that is not history. Its `resource_ref` is `replan-decision:`
and the receipt's digest; its `content` a `replan_recall_verdict_v0` document (verdict, the
semantic delta's outcomes and reason code, what LoopX's exact-id rules accept for the same step
and, where that differs, the history rule that differs, the receipt's digest, counts); its
`summary` the same codes in words. It takes one of the `max_results` slots and counts in LoopX's
`result_count`: LoopX allows no more items than it asked for on any path (the extension
protocol's envelope check, and `collect_context_recall` for an in-process provider), and gives
the verdict no other field (a completed answer may not carry a reason code).
"""

import os
import re
from dataclasses import dataclass
from typing import Final, Literal, TypedDict, TypeGuard

from obelisk_session_evidence.comparators.exact_ids import exact_id_delta
from obelisk_session_evidence.compose import decide, provider_factory_for
from obelisk_session_evidence.contracts.config import Enablement, ProviderKind
from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision
from obelisk_session_evidence.contracts.digests import canonical_digest
from obelisk_session_evidence.contracts.errors import ConfigInvalid, EvidenceError, InvalidInput
from obelisk_session_evidence.contracts.evidence import EvidenceItem, VerdictBasis
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.reason_codes import DenialCode, HistoryRuleCode, codes_of
from obelisk_session_evidence.contracts.recall_verdict import RecallVerdict
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.lifecycle.policy import load_config
from obelisk_session_evidence.loopx.asking import (
    AGENT_VARIABLE,
    GOAL_VARIABLE,
    Asker,
    asker,
    bound_agents,
    caller_is_loopx,
    established,
)
from obelisk_session_evidence.loopx.query_route import RESUME, query_route
from obelisk_session_evidence.loopx.scoped_lookup import (
    asking_enablement,
    obligation_lookup,
    resume_route,
    scoped_situation,
)
from obelisk_session_evidence.providers.base import EvidenceProvider
from obelisk_session_evidence.providers.factory import ProviderFactory
from obelisk_session_evidence.providers.invoking_session import (
    InvokingSessionExclusion,
    WithoutInvokingSession,
    is_host_session,
)
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.spool import SpoolRefused, read_spooled

SITUATION_REF_PREFIX: Final = "replan-situation:"
SITUATION_REF: Final = re.compile(rf"^{SITUATION_REF_PREFIX}(sha256:[0-9a-f]{{64}})$")
"""A spooled situation, named by the digest `state.spool_document` returned."""
SCOPES_WITHOUT_HOST_SESSION: Final = frozenset({"goal", "replan-history"})
"""Scopes that name no host session: LoopX's default `goal`, and this project's own."""
MAX_RECALL_ITEMS: Final = 8
"""LoopX's extension cap (`MAX_EXTENSION_CONTEXT_ITEMS`); the in-process provider keeps it too."""
MAX_SITUATION_BYTES: Final = 1_000_000
MAX_SUMMARY_CHARS: Final = 220
"""LoopX cuts a public item summary at 220 characters (`public_safe_compact_text`)."""
VERDICT_REF_PREFIX: Final = "replan-decision:"
"""The verdict item's ref: this prefix and the receipt's digest."""
HISTORY_RULE_CODES: Final = frozenset(codes_of(HistoryRuleCode))


class _Lookup(TypedDict):
    """What a lookup is scoped by (`obligation_lookup` and `scoped_situation` take the same)."""

    enablement: Enablement
    asking: Asker
    query: str
    invoking_session: str | None


@dataclass(frozen=True, slots=True)
class RecalledItem:
    """One LoopX context item: the verdict, or one capped historical item."""

    resource_ref: str
    """The item's opaque `message:` (else `session:`) ref, or the verdict's `replan-decision:`."""
    summary: str
    """Content-free: evidence type, date, and the index's freshness when not fresh."""
    content: str
    """The private snippet, for the in-process caller only (the verdict's own summary for it)."""


@dataclass(frozen=True, slots=True)
class Recall:
    """What the adapters report: status, honesty flags, items, and the public decision."""

    status: Literal["completed", "unavailable"]
    """`completed` when the provider answered, else `unavailable`."""
    reason_code: str | None
    """None when completed; otherwise why not."""
    search_performed: bool
    """True when the provider was asked."""
    read_performed: bool
    """True only when historical items were read back from the provider's answer."""
    items: tuple[RecalledItem, ...]
    """The verdict item, then at most `max_results - 1` historical items, best first."""
    decision: ReplanEvidenceDecision | None
    """The public decision (codes and numbers only), when the pipeline ran."""
    exclusion: InvokingSessionExclusion = InvokingSessionExclusion()
    """What the invoking-turn rule excluded from the provider's answer."""


def unavailable(
    reason_code: str, *, search_performed: bool = False, decision: ReplanEvidenceDecision | None = None
) -> Recall:
    """A typed empty answer."""
    return Recall("unavailable", reason_code, search_performed, False, (), decision)


def invoking_session_of(scope_ref: str) -> tuple[str | None, str | None]:
    """`(invoking session, None)` for a valid scope, else `(None, reason code)`."""
    scope = scope_ref.strip()
    if scope in SCOPES_WITHOUT_HOST_SESSION:
        return None, None
    if is_host_session(scope):
        return scope, None
    return None, "scope_ref_unsupported"


def situation_for(
    paths: StatePaths,
    *,
    scope_ref: str,
    query: str,
    asking: Asker | None = None,
    requested: Asker | None = None,
    provider_factory: ProviderFactory | None = None,
) -> tuple[ReplanSituation | None, str | None, str | None]:
    """`(situation, invoking session, None)` for what LoopX sent, else `(None, None, reason)`.

    The asker is part of every answer's scope: it must be established, bound to the named host
    thread (if any), and enabled for the goal's project; a spooled situation is then read only
    when it was spooled for that same enablement (docs/identity.md).

    :param asking: who LoopX's invocation names (default: read from it, `asking.py`).
    :param requested: the goal and agent the request names, the asker's first source: confirmed
        by the invocation and LoopX's host-turn environment, never trusted against them.
    :param provider_factory: the backends, asked for the scope's recent unresolved failures when
        the query names no step (default: the real ones).
    """
    invoking_session, scope_error = invoking_session_of(scope_ref)
    if scope_error is not None:
        return None, None, scope_error
    if asking is None or requested is not None:
        invoked = asking
        asking, unknown = asker(requested=requested) if invoked is None else established(invoked, requested, os.environ)
        if asking is None:
            return None, None, unknown
    asking, binding_error = _thread_agent(asking, invoking_session)
    if asking is None:
        return None, None, binding_error
    enablement, error = _enablement_for(paths, asking)
    if enablement is None:
        return None, None, error
    if SITUATION_REF.fullmatch(query.strip()) is not None:
        situation, error = spooled_situation(paths, query, enablement)
        return situation, invoking_session, error
    route = query_route(query)
    if route.action_kind == RESUME:  # `prepare-evidence` names no step: resume what failed last
        resume, reason = resume_route(enablement, provider_factory_for(paths, provider_factory))
        if resume is None and reason is not None:
            return None, invoking_session, reason
        route = resume or route
    lookup = _Lookup(enablement=enablement, asking=asking, query=query, invoking_session=invoking_session)
    situation, unreadable = obligation_lookup(**lookup, route=route)
    if unreadable is not None:
        return None, None, unreadable
    return situation or scoped_situation(**lookup, route=route), invoking_session, None


def answer(
    paths: StatePaths,
    *,
    scope_ref: str,
    query: str,
    max_results: int,
    asking: Asker | None = None,
    requested: Asker | None = None,
    provider_factory: ProviderFactory | None = None,
) -> Recall:
    """What LoopX's query and scope come to: the recall of their situation, an empty completed
    answer when a routeless lookup finds no unresolved failure in a fresh index, or why not."""
    situation, invoking_session, error = situation_for(
        paths,
        scope_ref=scope_ref,
        query=query,
        asking=asking,
        requested=requested,
        provider_factory=provider_factory,
    )
    if situation is None:
        if error == "no_unresolved_failures":
            return Recall("completed", None, True, False, (), None)
        return unavailable(error or "situation_ref_required")
    return recall(
        situation,
        invoking_session=invoking_session,
        max_results=max_results,
        paths=paths,
        provider_factory=provider_factory,
    )


def spooled_situation(
    paths: StatePaths, query: str, enablement: Enablement
) -> tuple[ReplanSituation | None, str | None]:
    """The spooled situation a `replan-situation:` query names, when it was spooled for the
    asker's `enablement`; else why not (no content either way)."""
    match = SITUATION_REF.fullmatch(query.strip())
    if match is None:
        return None, "situation_ref_required"
    try:
        situation = load_contract(
            ReplanSituation, read_spooled(paths, "situations", match.group(1), max_bytes=MAX_SITUATION_BYTES)
        )
    except SpoolRefused as refused:
        return None, "situation_not_found" if refused.refusal == "spool_absent" else refused.refusal
    except EvidenceError as error:
        return None, error.reason_code
    denied = scope_denial(situation, enablement)
    return (None, denied) if denied is not None else (situation, None)


def scope_denial(situation: ReplanSituation, enablement: Enablement) -> DenialCode | None:
    """Why `situation` is not the `enablement`'s to decide, or None when its scope is exactly it."""
    scope = situation.scope
    if scope.agent_id != enablement.agent_id:
        return "cross_agent_denied"
    if scope.project_id != enablement.project_id:
        return "cross_project_denied"
    if scope.repository_id != enablement.repository_id:
        return "cross_repository_denied"
    return None


def recall(
    situation: ReplanSituation,
    *,
    invoking_session: str | None,
    max_results: int,
    paths: StatePaths,
    provider_factory: ProviderFactory | None = None,
) -> Recall:
    """Decide `situation` with the invoking turn excluded; fail open."""
    named = situation.invoking_session
    if named is not None and invoking_session is not None and named != invoking_session:
        return unavailable("invoking_session_mismatch")
    bound = situation.model_copy(update={"invoking_session": named or invoking_session})
    reporting = _ExclusionReporting(provider_factory_for(paths, provider_factory), bound.invoking_session)
    try:
        run = decide(bound, paths=paths, provider_factory=reporting)
    except EvidenceError as error:
        return unavailable(error.reason_code)
    except Exception:
        return unavailable("pipeline_failed")
    decision, result = run.decision, run.private_result
    if not decision.admission.admitted:
        return unavailable(decision.admission.reason_code, decision=decision)
    if decision.retrieval.reason_code != "retrieved":
        return unavailable(decision.retrieval.reason_code, search_performed=True, decision=decision)
    assert result is not None  # admitted and retrieved: the capped result exists
    evidence = tuple(_recalled(item, result.freshness) for item in result.items[: max_results - 1])
    if not result.items and result.freshness != "fresh":
        return unavailable(f"index_{result.freshness}", search_performed=True, decision=decision)
    exclusion = reporting.exclusion
    verdict = verdict_item(decision, bound, exclusion, returned=len(evidence), basis=result.verdict_basis)
    return Recall("completed", None, True, bool(evidence), (verdict, *evidence), decision, exclusion)


def verdict_item(
    decision: ReplanEvidenceDecision,
    situation: ReplanSituation,
    exclusion: InvokingSessionExclusion,
    *,
    returned: int,
    basis: VerdictBasis | None = None,
) -> RecalledItem:
    """The leading item that carries the decision to LoopX (whose protocols carry items only):
    its content a `replan_recall_verdict_v0` document, its summary the same codes in words."""
    verdict = recall_verdict(decision, situation, exclusion, returned=returned, basis=basis)
    return RecalledItem(
        resource_ref=VERDICT_REF_PREFIX + verdict.receipt_digest,
        summary=verdict_summary(verdict),
        content=verdict.model_dump_json(),
    )


def verdict_summary(verdict: RecallVerdict) -> str:
    """The verdict's codes in words, within LoopX's public summary bound (`MAX_SUMMARY_CHARS`).
    Where LoopX's acceptance differs, the delta's code is the history rule that differs."""
    return "; ".join(
        [
            f"verdict {verdict.verdict}",
            f"delta {verdict.reason_code or 'none'}",
            f"accepted {str(verdict.accepted).lower()}",
            f"loopx accepted {str(verdict.loopx_accepted).lower()}",
            f"matched {verdict.matched_items} of {verdict.retrieved_items} items",
            f"returned {verdict.history_items}",
            f"index {verdict.index_freshness}",
            f"invoking turn excluded {verdict.invoking_turn_excluded}",
        ]
    )


def recall_verdict(
    decision: ReplanEvidenceDecision,
    situation: ReplanSituation,
    exclusion: InvokingSessionExclusion,
    *,
    returned: int,
    basis: VerdictBasis | None = None,
) -> RecallVerdict:
    """The content-free verdict document of one retrieved decision, naming by opaque ref what
    the verdict rests on and what worked after it (`basis`, from the private result)."""
    receipt = decision.receipt
    assert receipt is not None  # a retrieved decision has its receipt
    delta = decision.semantic_delta
    loopx_accepted = exact_id_delta(situation.obligation, situation.proposed.observation).accepted
    divergence: HistoryRuleCode | None = None
    if loopx_accepted != delta.accepted:
        # History only removes outcomes, so only a history rule's code can name the difference.
        divergence = delta.reason_code if _is_history_rule(delta.reason_code) else None
        assert divergence is not None, "acceptance differs without a history rule"
    return RecallVerdict(
        verdict=decision.comparison.verdict,
        trigger=decision.trigger,
        obligation_id=delta.obligation_id,
        observation_fingerprint=delta.observation_fingerprint,
        accepted=delta.accepted,
        outcomes=list(delta.outcomes),
        satisfying_outcomes=list(delta.satisfying_outcomes),
        reason_code=delta.reason_code,
        loopx_accepted=loopx_accepted,
        divergence_code=divergence,
        receipt_digest=canonical_digest(receipt.model_dump(mode="json")),
        request_id=receipt.request_id,
        index_freshness=receipt.freshness,
        retrieved_items=receipt.result_count,
        matched_items=decision.comparison.matched_items,
        history_items=returned,
        invoking_turn_excluded=exclusion.excluded,
        invoking_turn_undated=exclusion.undated,
        rests_on=list(basis.rests_on) if basis else [],
        successors=list(basis.successors) if basis else [],
    )


def bounded_max_results(max_results: int) -> int:
    """LoopX's bound: at least one, at most `MAX_RECALL_ITEMS`."""
    return min(max(1, max_results), MAX_RECALL_ITEMS)


class _ExclusionReporting:
    """A provider factory that applies the invoking-turn rule itself, so the adapter can say
    exactly what it excluded. `compose.decide` applies the rule again over this answer, with a
    boundary taken a moment later, and finds nothing left to drop."""

    def __init__(self, factory: ProviderFactory, invoking_session: str | None) -> None:
        self._factory = factory
        self._invoking_session = invoking_session
        self._wrapper: WithoutInvokingSession | None = None

    def __call__(self, enablement: Enablement, kind: ProviderKind) -> EvidenceProvider:
        provider = self._factory(enablement, kind)
        if self._invoking_session is None:
            return provider
        self._wrapper = WithoutInvokingSession(provider, self._invoking_session)
        return self._wrapper

    @property
    def exclusion(self) -> InvokingSessionExclusion:
        """What the last answer lost to the rule (nothing when no session is named)."""
        return self._wrapper.exclusion if self._wrapper is not None else InvokingSessionExclusion()


def _thread_agent(asking: Asker, invoking_session: str | None) -> tuple[Asker | None, str | None]:
    """The asker, with the agent the named host thread is bound to in LoopX."""
    if invoking_session is None:
        return asking, None
    _, source, session_id = invoking_session.split(":", 2)
    bound = bound_agents(source, session_id, registry=asking.registry)
    if bound is None:
        return None, "host_session_binding_unknown"
    if len(bound) > 1:
        return None, "host_session_binding_conflict"
    if not bound:
        return asking, None
    (agent_id,) = bound
    if asking.agent_id is not None and asking.agent_id != agent_id:
        return None, "cross_agent_denied"
    return Asker(asking.goal_id, agent_id, asking.registry, asking.runtime_root), None


def caller_denial(paths: StatePaths, situation: ReplanSituation) -> str | None:
    """Why a command may not decide (or spool) `situation` for its caller, or None.

    Started by LoopX (the parent process is `loopx`), the command's asker must be established
    from LoopX's invocation and resolve to exactly the situation's enablement. In a LoopX host
    turn (`LOOPX_AGENT_ID` / `LOOPX_GOAL_ID` set), the turn's agent and goal must be the
    situation's. Elsewhere the command is the owner's own and admission alone decides (the
    limits of this are in docs/identity.md).
    """
    if caller_is_loopx():
        asking, unknown = asker()
        if asking is None:
            return unknown
        enablement, error = _enablement_for(paths, asking)
        return error if enablement is None else scope_denial(situation, enablement)
    scope = situation.scope
    if os.environ.get(AGENT_VARIABLE, "").strip() not in ("", scope.agent_id):
        return "cross_agent_denied"
    if os.environ.get(GOAL_VARIABLE, "").strip() not in ("", scope.project_id):
        return "cross_project_denied"
    return None


def spool_denial(paths: StatePaths, situation: ReplanSituation) -> str | None:
    """Why `situation` may not be spooled: its scope must be an enabled scope (the enablement it is
    bound to: only an asker resolving to it can read it back), and `caller_denial` must pass."""
    try:
        config = load_config(paths)
    except ConfigInvalid:
        return "config_invalid"
    scope = situation.scope
    enabled = {enablement.scope_key for enablement in (config.enablements if config else [])}
    if (scope.agent_id, scope.project_id, scope.repository_id) not in enabled:
        return "not_enabled"
    return caller_denial(paths, situation)


def agent_enablement(paths: StatePaths, goal_id: str, agent_id: str) -> Enablement:
    """The enablement of `agent_id` for `goal_id`, as a lookup resolves it; `InvalidInput` naming
    the reason code when there is none."""
    enablement, error = _enablement_for(paths, Asker(goal_id, agent_id))
    if enablement is None:
        raise InvalidInput(f"agent-id: {error}")
    return enablement


def _enablement_for(paths: StatePaths, asking: Asker) -> tuple[Enablement | None, str | None]:
    try:
        config = load_config(paths)
    except ConfigInvalid:
        return None, "config_invalid"
    if config is None:
        return None, "not_enabled"
    return asking_enablement(config.enablements, asking)


def _recalled(item: EvidenceItem, freshness: str) -> RecalledItem:
    parts = [f"{item.evidence_type} from an earlier session of this agent"]
    if item.observed_at is not None:
        parts.append(f"observed {item.observed_at.date().isoformat()}")
    if freshness != "fresh":
        parts.append(f"index {freshness}")
    return RecalledItem(
        resource_ref=item.message_ref or item.session_ref,
        summary="; ".join(parts),
        content=item.snippet,
    )


def _is_history_rule(code: str | None) -> TypeGuard[HistoryRuleCode]:
    return code in HISTORY_RULE_CODES
