"""Turning verified rows into RFC evidence items and private structured prior tool calls.

Tool-call rows (from `sql()`) come by lane (template.py), newest first within each. A command
lane's row whose program is not the lane's (`fts.program_of`: the SQL only saw the word) is
dropped; a change row (lane -2 after a matched failure, -1 the newest) is kept when it is an edit
or reads as a file-changing command (`lanes.may_change_files`, the native change lane's rule). Each
row becomes (changes: a prior call only, for compare-route's change rules):

    a PriorToolCall       the full command (<= 16 KiB, newlines kept), tool name, exit code (Claude
                          `Exit code N` / Codex `Process exited with code N` in the output), is_error,
                          cwd, repository_cwd, observed_at, files, a bounded output excerpt
    an EvidenceItem       prior_failure (nonzero exit or is_error), file_history (a file tool),
                          else tool_outcome; the snippet is a tool snippet (`$ command`, outcome,
                          output excerpt), the same grammar the native provider writes

Search hits (from `search()`) become `decision` (user/assistant text) or `summary` items; meta,
thinking and tool rows are not evidence, nor hits whose text does not contain the term literally
(FTS5 matches words, not substrings). Refs are `session:` / `message:` + sha256 over
LoopX-source-qualified ids: never a path. Limits are applied in that order: sessions, items,
snippet length, then total length; `omitted_count` counts what a limit dropped.
"""

import hashlib
import posixpath
import re
from dataclasses import dataclass
from typing import Final

from obelisk_session_evidence.contracts.base import EvidenceType
from obelisk_session_evidence.contracts.evidence import EvidenceItem
from obelisk_session_evidence.contracts.limits import LimitTally
from obelisk_session_evidence.contracts.prior_calls import (
    MAX_CALL_COMMAND_CHARS,
    MAX_CALL_FILES,
    MAX_CALL_OUTPUT_CHARS,
    MAX_CALL_PATH_CHARS,
    MAX_PRIOR_CALLS,
    PriorToolCall,
)
from obelisk_session_evidence.contracts.snippets import ELLIPSIS, outcome_line, tool_snippet
from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.native.index.fts import command_key, program_of
from obelisk_session_evidence.providers.native.index.lanes import FILE_EDIT_TOOLS, may_change_files
from obelisk_session_evidence.providers.native.parsers._text import patch_file_paths
from obelisk_session_evidence.providers.native.records import FILE_TOOL_NAMES
from obelisk_session_evidence.providers.obelisk.answer import CallRow, HitRow
from obelisk_session_evidence.providers.obelisk.plan import (
    CHANGE_ROWS,
    FOLLOW_KEPT,
    OBELISK_SOURCE,
    QueryPlan,
    normalised_path,
)
from obelisk_session_evidence.providers.obelisk.scope import row_moment
from obelisk_session_evidence.providers.obelisk.template import FOLLOW_LANE

SUMMARY_TYPES: Final = frozenset({"summary", "compaction", "title"})
TEXT_TYPES: Final = frozenset({"text"})
CLAUDE_EXIT: Final = re.compile(r"\AExit code (-?\d{1,6})\b")
CODEX_EXIT: Final = re.compile(r"\A(-?\d{1,6})\b")
SNIPPET_OUTPUT_CHARS: Final = 400
PATCH_MARK: Final = "*** Begin Patch"
_LOOPX_SOURCE: Final[dict[str, SourceKind]] = {name: kind for kind, name in OBELISK_SOURCE.items()}


@dataclass(frozen=True, slots=True)
class Selection:
    """The items kept, the structured calls, and what the limits cut."""

    items: tuple[EvidenceItem, ...]
    prior_calls: tuple[PriorToolCall, ...]
    truncated: bool
    omitted_count: int


def select_items(calls: list[CallRow], hits: list[HitRow], plan: QueryPlan, *, calls_capped: bool) -> Selection:
    """In-scope rows of the requested types, as items within the request's limits."""
    limits = plan.limits
    candidates: list[tuple[str, str | None, EvidenceType, str, str | None, bool]] = []
    matched, changes = matched_calls(calls, plan)
    lane_calls = [prior_call(call, plan) for call in matched]
    prior_calls = lane_calls[: MAX_PRIOR_CALLS - len(changes)] + [prior_call(call, plan) for call in changes]
    evidence_type: EvidenceType | None
    for call, prior in zip(matched, lane_calls, strict=True):
        evidence_type = call_evidence_type(prior)
        if evidence_type in plan.evidence_types:
            snippet, cut = _call_snippet(prior)
            candidates.append((prior.session_ref, prior.message_ref, evidence_type, snippet, call.timestamp, cut))
    for hit in hits:
        evidence_type = hit_evidence_type(hit)
        term = plan.search_terms[hit.term] if hit.term < len(plan.search_terms) else ""
        if evidence_type not in plan.evidence_types or not _literal(hit, term):
            continue
        session_ref = opaque_ref("session", hit.source or "", hit.session_id or "")
        message_ref = opaque_ref("message", hit.source or "", hit.session_id or "", hit.uuid) if hit.uuid else None
        text = " ".join((hit.text or "").split())
        snippet, cut = _cut_around(text, term, limits.max_snippet_chars)
        candidates.append(
            (
                session_ref,
                message_ref,
                evidence_type,
                snippet,
                hit.timestamp,
                cut or hit.text_chars > len(hit.text or ""),
            )
        )
    items: list[EvidenceItem] = []
    tally = LimitTally(limits)
    seen: set[str] = set()
    omitted = 0
    truncated = calls_capped
    for session_ref, message_ref, evidence_type, snippet, timestamp, cut in candidates:
        if message_ref is not None and message_ref in seen:
            continue
        if len(snippet) > limits.max_snippet_chars:
            snippet, cut = snippet[: limits.max_snippet_chars - 1] + ELLIPSIS, True
        if not tally.fits(session_ref, len(snippet)):
            omitted += 1
            continue
        truncated = truncated or cut
        tally.take(session_ref, len(snippet))
        if message_ref is not None:
            seen.add(message_ref)
        items.append(
            EvidenceItem(
                session_ref=session_ref,
                message_ref=message_ref,
                evidence_type=evidence_type,
                observed_at=row_moment(timestamp),
                snippet=snippet,
            )
        )
    return Selection(
        items=tuple(items),
        prior_calls=tuple(prior_calls),
        truncated=truncated or omitted > 0,
        omitted_count=omitted,
    )


def matched_calls(calls: list[CallRow], plan: QueryPlan) -> tuple[list[CallRow], list[CallRow]]:
    """The lanes' rows whose lane holds for them, and the changes after them: those following a
    matched failure first, then the newest."""
    matched: list[CallRow] = []
    following: list[CallRow] = []
    changes: list[CallRow] = []
    for call in calls:
        command = call.command or ""
        if call.lane < 0:
            tool = (call.tool_name or "").lower()
            if tool in FILE_EDIT_TOOLS or may_change_files(command_key(command) or ""):
                kept, cap = (following, FOLLOW_KEPT) if call.lane == FOLLOW_LANE else (changes, CHANGE_ROWS)
                if len(kept) < cap:
                    kept.append(call)
            continue
        lanes = [plan.lanes[number] for number in call.lane_numbers if number >= 0]
        if any(lane.kind != "command" or program_of(command) == lane.program for lane in lanes):
            matched.append(call)
    return matched, following + changes


def prior_call(call: CallRow, plan: QueryPlan) -> PriorToolCall:
    """The structured record of one verified tool-call row."""
    files = _files(call)
    command = call.command or ""
    if (call.tool_name or "").lower() in FILE_TOOL_NAMES and files:
        command = " ".join(files)  # a file tool's target, as the native provider writes it
    output = call.output_head or ""
    output_chars = call.output_chars or len(output)
    excerpt, output_cut = _excerpt(output, call.output_tail, output_chars)
    source = call.source or ""
    session_id = call.session_id or ""
    return PriorToolCall(
        session_ref=opaque_ref("session", source, session_id),
        message_ref=opaque_ref("message", source, session_id, call.call_id),
        tool_name=(call.tool_name or "tool")[:64],
        command=command[:MAX_CALL_COMMAND_CHARS],
        command_truncated=(call.command_chars or 0) > MAX_CALL_COMMAND_CHARS,
        exit_code=exit_code_of(call),
        is_error=None if call.is_error is None else call.is_error == 1,
        cwd=_bounded_path(call.cwd),
        repository_cwd=repository_cwd(call.cwd, call.project_path, plan.roots),
        observed_at=row_moment(call.timestamp),
        files=files,
        output_excerpt=excerpt,
        output_truncated=output_cut,
    )


def exit_code_of(call: CallRow) -> int | None:
    """Codex: `Process exited with code N` (cut out by the SQL); Claude: a leading `Exit code N`."""
    if call.exit_text is not None:
        match = CODEX_EXIT.match(call.exit_text)
        if match is not None:
            return int(match[1])
    match = CLAUDE_EXIT.match(call.output_head or "")
    return int(match[1]) if match is not None else None


def call_evidence_type(call: PriorToolCall) -> EvidenceType:
    """prior_failure, file_history or tool_outcome."""
    if call.is_error is True or (call.exit_code is not None and call.exit_code != 0):
        return "prior_failure"
    if call.tool_name.lower() in FILE_TOOL_NAMES:
        return "file_history"
    return "tool_outcome"


def hit_evidence_type(hit: HitRow) -> EvidenceType | None:
    """decision for user/assistant text, summary for summaries; None for anything else."""
    kind = (hit.content_type or "").lower()
    if hit.is_meta in (1, True) or hit.role == "system":
        return None
    if kind in SUMMARY_TYPES:
        return "summary"
    if kind in TEXT_TYPES and hit.role in ("user", "assistant"):
        return "decision"
    return None


def repository_cwd(cwd: str | None, project_path: str | None, roots: tuple[str, ...]) -> str | None:
    """`cwd` relative to its checkout: the session's project path when that lies under a root
    (a worktree under a worktree parent), else the root; None outside every root."""
    path = normalised_path(cwd) if cwd else None
    if path is None:
        return None
    bases = [root for root in roots if path == root or path.startswith(root + "/")]
    if not bases:
        return None
    checkout = normalised_path(project_path) if project_path else None
    if (
        checkout is not None
        and any(checkout.startswith(base + "/") for base in bases)
        and (path == checkout or path.startswith(checkout + "/"))
    ):
        base = checkout
    else:
        base = max(bases, key=len)
    relative = posixpath.relpath(path, base)
    return "" if relative == "." else relative[:MAX_CALL_PATH_CHARS]


def opaque_ref(kind: str, obelisk_source: str, *ids: str) -> str:
    """`<kind>:<sha256>` over the LoopX source name and the ids, joined by NUL."""
    source = _LOOPX_SOURCE.get(obelisk_source, obelisk_source)
    material = "\x00".join((source, *ids)).encode("utf-8", "surrogatepass")
    return f"{kind}:{hashlib.sha256(material).hexdigest()}"


def _files(call: CallRow) -> list[str]:
    """The file a file tool named (absolute and normalised, as the native provider gives it) and
    the targets of an `apply_patch` text (`*** Update File: ...`, as the patch names them)."""
    named = normalised_path(call.file_path) if call.file_path else None
    patched = patch_file_paths(call.command or "") if PATCH_MARK in (call.command or "") else ()
    found = dict.fromkeys(path for path in (named, *patched) if path and len(path) <= MAX_CALL_PATH_CHARS)
    return list(found)[:MAX_CALL_FILES]


def _bounded_path(path: str | None) -> str | None:
    return None if path is None else path[:MAX_CALL_PATH_CHARS]


def _excerpt(head: str, tail: str | None, total: int) -> tuple[str, bool]:
    """The whole output when it fits, else its head and tail around an ellipsis.

    The SQL returns the first `OUTPUT_HEAD_CHARS` and, for a longer output, its last
    `OUTPUT_TAIL_CHARS`; the two overlap when the output is shorter than both together.
    """
    if tail is None:
        return head[:MAX_CALL_OUTPUT_CHARS], len(head) > MAX_CALL_OUTPUT_CHARS
    missing = total - len(head)
    if 0 <= missing <= len(tail) and len(head) + missing <= MAX_CALL_OUTPUT_CHARS:
        return head + tail[len(tail) - missing :], False
    half = (MAX_CALL_OUTPUT_CHARS - len(ELLIPSIS)) // 2
    return head[:half] + ELLIPSIS + tail[-half:], True


def _call_snippet(call: PriorToolCall) -> tuple[str, bool]:
    outcome = outcome_line(exit_code=call.exit_code, is_error=call.is_error)
    output = call.output_excerpt[:SNIPPET_OUTPUT_CHARS]
    if call.tool_name.lower() in FILE_TOOL_NAMES:
        command = f"{call.tool_name} {' '.join(call.files) or call.command}"
    else:
        command = call.command or call.tool_name
    snippet = tool_snippet(command, outcome, output)
    cut = call.command_truncated or len(call.output_excerpt) > SNIPPET_OUTPUT_CHARS
    return snippet, cut


def _literal(hit: HitRow, term: str) -> bool:
    """The text must contain the term (FTS5 matches words and operators, not substrings)."""
    return bool(term) and term.lower() in " ".join((hit.text or "").split()).lower()


def _cut_around(text: str, term: str, max_chars: int) -> tuple[str, bool]:
    """A window of `max_chars` around the term's first occurrence, marking both cuts."""
    if len(text) <= max_chars:
        return text, False
    at = max(0, text.lower().find(term.lower()))
    width = max(1, max_chars - 2)
    start = max(0, min(at - (width - len(term)) // 2, len(text) - width))
    before = ELLIPSIS if start > 0 else ""
    after = ELLIPSIS if start + width < len(text) else ""
    return before + text[start : start + width] + after, True
