"""Turning verified rows into RFC evidence items: types, opaque refs, snippets and limits.

Evidence types come from the row's `content_type`, role and tool fields:

    is_meta, role system, thinking/reasoning, unknown kinds     skipped (not the agent's words)
    tool call or result that failed (is_error, exit != 0)       prior_failure
    tool call or result of a file tool                          file_history
    any other tool call or result                               tool_outcome
    summary / compaction / title                                summary
    user or assistant text                                      decision

Tool snippets are written with `contracts.snippets.tool_snippet` (a file tool's command is its
name and the matched text, `$ Edit src/x.py`) so comparators can read the command back; a tool
result's command is the tool name, its output the excerpt. Refs are `session:` / `message:` +
sha256 over LoopX-source-qualified ids: never a path. Limits are applied in rank order (most
matched terms first, then Obelisk's rank): sessions, items, snippet length, then total length.
`omitted_count` counts every item a limit dropped plus the rows past the template's row cap (their
type unexamined); rows of unrequested types and near misses without the literal term are not items
and are not counted. `truncated` is also set when a `search()` returned its full `limit` (more hits
may exist) or a snippet was cut.
"""

import hashlib
from dataclasses import dataclass
from typing import Final

from contracts.base import EvidenceType
from contracts.config import SourceKind
from contracts.evidence import EvidenceItem
from contracts.snippets import ELLIPSIS, outcome_line, tool_snippet
from providers.native.records import FILE_TOOL_NAMES
from providers.obelisk.answer import Row, TemplateAnswer
from providers.obelisk.plan import OBELISK_SOURCE, QueryPlan
from providers.obelisk.scope import row_moment

TOOL_CALL_TYPES: Final = frozenset(
    {"tool_use", "tool_call", "tool-call", "function_call", "custom_tool_call"}
)
TOOL_RESULT_TYPES: Final = frozenset(
    {"tool_result", "tool-result", "function_call_output", "custom_tool_call_output"}
)
SUMMARY_TYPES: Final = frozenset({"summary", "compaction", "title"})
TEXT_TYPES: Final = frozenset({"text", "input_text", "output_text", "message"})
_LOOPX_SOURCE: Final[dict[str, SourceKind]] = {name: kind for kind, name in OBELISK_SOURCE.items()}


@dataclass(frozen=True, slots=True)
class Selection:
    """The items kept and what the limits cut."""

    items: tuple[EvidenceItem, ...]
    truncated: bool
    omitted_count: int


def select_items(answer: TemplateAnswer, plan: QueryPlan) -> Selection:
    """In-scope rows of the requested types, as items within the request's limits."""
    limits = plan.limits
    typed = [
        (row, evidence_type)
        for row in _ranked(answer.rows)
        if (evidence_type := row_evidence_type(row)) in plan.evidence_types
        and _matches_literally(row, plan.terms[row.term])
    ]
    items: list[EvidenceItem] = []
    sessions: set[str] = set()
    seen_messages: set[str] = set()
    total_chars = 0
    omitted = answer.counts.eligible - answer.counts.returned
    truncated = omitted > 0 or answer.counts.saturated_terms > 0
    for row, evidence_type in typed:
        session_ref = opaque_ref("session", row.source, row.session_id)
        message_ref = (
            opaque_ref("message", row.source, row.session_id, row.message_id)
            if row.message_id is not None
            else None
        )
        if message_ref is not None and message_ref in seen_messages:
            continue
        new_session = session_ref not in sessions
        if len(items) >= limits.max_items or (new_session and len(sessions) >= limits.max_sessions):
            omitted += 1
            continue
        snippet, cut = _snippet(row, evidence_type, plan.terms[row.term], limits.max_snippet_chars)
        if total_chars + len(snippet) > limits.max_total_chars:
            omitted += 1
            continue
        truncated = truncated or cut
        total_chars += len(snippet)
        sessions.add(session_ref)
        if message_ref is not None:
            seen_messages.add(message_ref)
        items.append(
            EvidenceItem(
                session_ref=session_ref,
                message_ref=message_ref,
                evidence_type=evidence_type,
                observed_at=row_moment(row.timestamp),
                snippet=snippet,
            )
        )
    return Selection(items=tuple(items), truncated=truncated or omitted > 0, omitted_count=omitted)


def row_evidence_type(row: Row) -> EvidenceType | None:
    """The RFC evidence type of a row, or None when the row is not evidence."""
    kind = (row.content_type or "text").lower()
    if row.is_meta or row.role == "system":
        return None
    if kind in TOOL_CALL_TYPES or kind in TOOL_RESULT_TYPES:
        if _failed(row):
            return "prior_failure"
        if (row.tool_name or "").lower() in FILE_TOOL_NAMES:
            return "file_history"
        return "tool_outcome"
    if kind in SUMMARY_TYPES:
        return "summary"
    if kind in TEXT_TYPES and row.role in ("user", "assistant"):
        return "decision"
    return None


def opaque_ref(kind: str, obelisk_source: str, *ids: str) -> str:
    """`<kind>:<sha256>` over the LoopX source name and the ids, joined by NUL."""
    source = _LOOPX_SOURCE.get(obelisk_source, obelisk_source)
    material = "\x00".join((source, *ids)).encode("utf-8", "surrogatepass")
    return f"{kind}:{hashlib.sha256(material).hexdigest()}"


def _ranked(rows: list[Row]) -> list[Row]:
    return sorted(
        rows, key=lambda row: (-len(row.terms), row.rank if row.rank is not None else 1e308)
    )


def _failed(row: Row) -> bool:
    return row.is_error is True or (row.exit_code is not None and row.exit_code != 0)


def _matches_literally(row: Row, term: str) -> bool:
    """The window must contain the term (Obelisk's trigram index returns near misses, #76)."""
    return term.lower() in row.text.lower()


def _snippet(row: Row, evidence_type: EvidenceType, term: str, max_chars: int) -> tuple[str, bool]:
    """The item's snippet, and whether any of the message was cut (by the template or here)."""
    text = row.text
    cut_before = row.window_start > 0
    cut_after = row.window_start + len(row.text) < row.text_chars
    text = (ELLIPSIS if cut_before else "") + text + (ELLIPSIS if cut_after else "")
    if evidence_type in ("prior_failure", "tool_outcome", "file_history"):
        outcome = outcome_line(exit_code=row.exit_code, is_error=row.is_error)
        if (row.content_type or "").lower() not in TOOL_CALL_TYPES:
            full = tool_snippet(row.tool_name or "tool", outcome, text)
        elif evidence_type == "file_history" and row.tool_name:
            full = tool_snippet(f"{row.tool_name} {text}", outcome, "")
        else:
            full = tool_snippet(text, outcome, "")
        return _cut_end(full, max_chars), cut_before or cut_after or len(full) > max_chars
    return _cut_around(text, term, max_chars), cut_before or cut_after or len(text) > max_chars


def _cut_end(text: str, max_chars: int) -> str:
    """Keep the start (a tool snippet's `$ command` line), mark the cut."""
    return text if len(text) <= max_chars else text[: max_chars - 1] + ELLIPSIS


def _cut_around(text: str, term: str, max_chars: int) -> str:
    """Keep a window of `max_chars` around the term's first occurrence, marking both cuts."""
    if len(text) <= max_chars:
        return text
    if max_chars < 3:
        return text[:max_chars]
    at = max(0, text.lower().find(term.lower()))
    width = max_chars - 2
    start = max(0, min(at - (width - len(term)) // 2, len(text) - width))
    before = ELLIPSIS if start > 0 else ""
    after = ELLIPSIS if start + width < len(text) else ""
    return before + text[start : start + width] + after
