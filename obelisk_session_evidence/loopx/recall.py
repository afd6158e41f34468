"""One bounded recall for a LoopX host: the pipeline's capped items, with content-free labels.

Both LoopX adapters (the in-process `ContextProvider` and the Decision Context extension
executable) answer through `recall`. What they are handed maps onto this project as follows:

- the typed situation: bound to the in-process provider, or named by the `query` as a spooled
  situation reference `replan-situation:sha256:<64 hex>` (`state.spool_document`). Free query
  text is never searched: search terms come only from the situation's canonical fields (RFC §5.1);
- `scope_ref`: `host-session:<source>:<id>` names the invoking host session (LoopX's own
  `loopx-obelisk` uses the same normalised scope), which never counts as history; `replan-history`
  names none. Anything else is refused. The agent / project / repository scope always comes from
  the situation and the owner's enablement, never from the host;
- the answer: `completed` with the capped private items (opaque refs, a summary naming only the
  evidence type, date and index freshness, and the snippet as transient content), or
  `unavailable` with a stable reason code: not admitted, a provider fault, or an empty answer
  from a stale or incomplete index (absence there is never "no history").
"""

import re
from dataclasses import dataclass
from typing import Final, Literal

from contracts.decision import ReplanEvidenceDecision
from contracts.errors import EvidenceError
from contracts.evidence import EvidenceItem
from contracts.json_input import load_contract
from contracts.situation import ReplanSituation
from providers.invoking_session import is_host_session
from obelisk_session_evidence.compose import decide
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.spool import spooled_path
from providers.factory import ProviderFactory

SITUATION_REF: Final = re.compile(r"^replan-situation:(sha256:[0-9a-f]{64})$")
"""A spooled situation, named by the digest `state.spool_document` returned."""
SCOPE_WITHOUT_HOST_SESSION: Final = "replan-history"
"""The scope to send when no host session is asking."""
MAX_RECALL_ITEMS: Final = 8
"""LoopX's extension cap (`MAX_EXTENSION_CONTEXT_ITEMS`); the in-process provider keeps it too."""
MAX_SITUATION_BYTES: Final = 1_000_000


@dataclass(frozen=True, slots=True)
class RecalledItem:
    """One capped historical item as a LoopX context item."""

    resource_ref: str
    """The item's opaque `message:` (else `session:`) ref; LoopX digests it again."""
    summary: str
    """Content-free: evidence type, date, and the index's freshness when not fresh."""
    content: str
    """The private snippet, for the in-process caller only."""


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
    """True only when items were read back from the provider's answer."""
    items: tuple[RecalledItem, ...]
    """At most `max_results` items, best first."""
    decision: ReplanEvidenceDecision | None
    """The public decision (codes and numbers only), when the pipeline ran."""


def unavailable(
    reason_code: str, *, search_performed: bool = False, decision: ReplanEvidenceDecision | None = None
) -> Recall:
    """A typed empty answer."""
    return Recall("unavailable", reason_code, search_performed, False, (), decision)


def invoking_session_of(scope_ref: str) -> tuple[str | None, str | None]:
    """`(invoking session, None)` for a valid scope, else `(None, reason code)`."""
    scope = scope_ref.strip()
    if scope == SCOPE_WITHOUT_HOST_SESSION:
        return None, None
    if is_host_session(scope):
        return scope, None
    return None, "scope_ref_unsupported"


def spooled_situation(paths: StatePaths, query: str) -> tuple[ReplanSituation | None, str | None]:
    """The spooled situation a `replan-situation:` query names, or why there is none."""
    match = SITUATION_REF.fullmatch(query.strip())
    if match is None:
        return None, "situation_ref_required"
    try:
        with spooled_path(paths, "situations", match.group(1)).open("rb") as handle:
            raw = handle.read(MAX_SITUATION_BYTES + 1)
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
    """Decide `situation` with the invoking session excluded; fail open."""
    named = situation.invoking_session
    if named is not None and invoking_session is not None and named != invoking_session:
        return unavailable("invoking_session_mismatch")
    bound = situation.model_copy(update={"invoking_session": named or invoking_session})
    try:
        run = decide(bound, paths=paths, provider_factory=provider_factory)
    except EvidenceError as error:
        return unavailable(error.reason_code)
    except Exception:  # noqa: BLE001 - fail open: a host never sees an adapter fault as an error
        return unavailable("pipeline_failed")
    decision, result = run.decision, run.private_result
    if not decision.admission.admitted:
        return unavailable(decision.admission.reason_code, decision=decision)
    if decision.retrieval.reason_code != "retrieved":
        return unavailable(decision.retrieval.reason_code, search_performed=True, decision=decision)
    assert result is not None  # admitted and retrieved: the capped result exists
    items = tuple(_recalled(item, result.freshness) for item in result.items[:max_results])
    if not items and result.freshness != "fresh":
        return unavailable(f"index_{result.freshness}", search_performed=True, decision=decision)
    return Recall("completed", None, True, bool(items), items, decision)


def bounded_max_results(max_results: int) -> int:
    """LoopX's bound: at least one, at most `MAX_RECALL_ITEMS`."""
    return min(max(1, max_results), MAX_RECALL_ITEMS)


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
