"""One bounded recall for a LoopX host: a leading verdict item, then the pipeline's capped items.

Both LoopX adapters (the in-process `ContextProvider` and the Decision Context extension
executable) answer through `situation_for` and `recall`. What they are handed maps onto this
project as follows:

- the situation: bound to the in-process provider; or named by the `query` as a spooled situation
  reference `replan-situation:sha256:<64 hex>` (`situation spool`); or, for any other query, a
  scoped lookup built from what LoopX says about the asker and the owner's enablement
  (`scoped_lookup.py`: how free text becomes bounded, escaped words);
- `scope_ref`: `goal` and `replan-history` name no host session; `host-session:<source>:<id>`
  names the thread that is asking (LoopX's meaning): it identifies the agent through LoopX's
  thread-agent bindings, its earlier history counts, and only its records from the invocation
  onward are excluded (`providers/invoking_session.py`). Anything else is refused;
- the answer: `completed` with a leading content-free verdict item (`verdict_item`: verdict, the
  semantic delta's reason code, matched and returned item counts, index freshness, what the
  invoking-turn rule excluded) and then the capped private items (opaque refs, a summary naming
  only the evidence type, date and index freshness, the snippet as transient content); or
  `unavailable` with a stable reason code LoopX shows: not admitted, not resolvable, a provider
  fault, or an empty answer from a stale or incomplete index (absence there is never "no history").
"""

import re
from dataclasses import dataclass
from typing import Final, Literal, TypedDict

from obelisk_session_evidence.compose import decide, provider_factory_for
from obelisk_session_evidence.contracts.config import Enablement, ProviderKind
from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision
from obelisk_session_evidence.contracts.errors import ConfigInvalid, EvidenceError, InvalidInput
from obelisk_session_evidence.contracts.evidence import EvidenceItem
from obelisk_session_evidence.contracts.json_input import load_contract, read_at_most
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.lifecycle.policy import load_config
from obelisk_session_evidence.loopx.asking import Asker, asker, bound_agents
from obelisk_session_evidence.loopx.scoped_lookup import (
    asking_enablement,
    obligation_lookup,
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
from obelisk_session_evidence.state.spool import spooled_path

SITUATION_REF_PREFIX: Final = "replan-situation:"
SITUATION_REF: Final = re.compile(rf"^{SITUATION_REF_PREFIX}(sha256:[0-9a-f]{{64}})$")
"""A spooled situation, named by the digest `state.spool_document` returned."""
SCOPES_WITHOUT_HOST_SESSION: Final = frozenset({"goal", "replan-history"})
"""Scopes that name no host session: LoopX's default `goal`, and this project's own."""
MAX_RECALL_ITEMS: Final = 8
"""LoopX's extension cap (`MAX_EXTENSION_CONTEXT_ITEMS`); the in-process provider keeps it too."""
MAX_SITUATION_BYTES: Final = 1_000_000
VERDICT_REF_PREFIX: Final = "replan-decision:"


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
    paths: StatePaths, *, scope_ref: str, query: str, asking: Asker | None = None
) -> tuple[ReplanSituation | None, str | None, str | None]:
    """`(situation, invoking session, None)` for what LoopX sent, else `(None, None, reason)`.

    :param asking: who LoopX is asking for (default: read from LoopX's invocation, `asking.py`).
    """
    invoking_session, scope_error = invoking_session_of(scope_ref)
    if scope_error is not None:
        return None, None, scope_error
    if SITUATION_REF.fullmatch(query.strip()) is not None:
        situation, error = spooled_situation(paths, query)
        return situation, invoking_session, error
    if asking is None:
        asking, conflict = asker()
        if asking is None:
            return None, None, conflict
    asking, binding_error = _thread_agent(asking, invoking_session)
    if asking is None:
        return None, None, binding_error
    enablement, error = _enablement_for(paths, asking)
    if enablement is None:
        return None, None, error
    lookup = _Lookup(enablement=enablement, asking=asking, query=query, invoking_session=invoking_session)
    return obligation_lookup(**lookup) or scoped_situation(**lookup), invoking_session, None


def spooled_situation(paths: StatePaths, query: str) -> tuple[ReplanSituation | None, str | None]:
    """The spooled situation a `replan-situation:` query names, or why there is none."""
    match = SITUATION_REF.fullmatch(query.strip())
    if match is None:
        return None, "situation_ref_required"
    try:
        with spooled_path(paths, "situations", match.group(1)).open("rb") as handle:
            raw = read_at_most(handle, MAX_SITUATION_BYTES)
    except OSError:
        return None, "situation_not_found"
    try:
        return load_contract(ReplanSituation, raw), None
    except EvidenceError as error:
        return None, error.reason_code


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
    verdict = verdict_item(decision, exclusion, returned=len(evidence))
    return Recall("completed", None, True, bool(evidence), (verdict, *evidence), decision, exclusion)


def verdict_item(
    decision: ReplanEvidenceDecision, exclusion: InvokingSessionExclusion, *, returned: int
) -> RecalledItem:
    """The leading, content-free item that carries the decision to LoopX (whose response
    protocol has no field for it): codes and counts only."""
    receipt = decision.receipt
    assert receipt is not None  # a retrieved decision has its receipt
    parts = [
        f"verdict {decision.comparison.verdict}",
        f"delta {decision.semantic_delta.reason_code or 'none'}",
        f"accepted {str(decision.semantic_delta.accepted).lower()}",
        f"matched {decision.comparison.matched_items} of {receipt.result_count} items",
        f"returned {returned}",
        f"index {receipt.freshness}",
        f"invoking turn excluded {exclusion.excluded}"
        + (f" ({exclusion.undated} undated)" if exclusion.undated else ""),
    ]
    summary = "; ".join(parts)
    return RecalledItem(
        resource_ref=VERDICT_REF_PREFIX + receipt.result_digest,
        summary=summary,
        content=f"{summary}; receipt {receipt.request_id}",
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
    bound = bound_agents(source, session_id, registry=asking.registry) or frozenset()
    if len(bound) > 1:
        return None, "host_session_binding_conflict"
    if not bound:
        return asking, None
    (agent_id,) = bound
    if asking.agent_id is not None and asking.agent_id != agent_id:
        return None, "cross_agent_denied"
    return Asker(asking.goal_id, agent_id, asking.registry, asking.runtime_root), None


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
