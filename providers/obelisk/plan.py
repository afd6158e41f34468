"""Checking a request against the allowlist and the enablement, before any process starts.

Everything here is pure: a request that passes becomes a `QueryPlan` (the values the template
embeds and the adapter verifies rows against); one that does not raises `UnsupportedOption` or
`ScopeViolation`, and no process has been spawned.
"""

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from obelisk_session_evidence.contracts.base import EvidenceType
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.errors import ScopeViolation, UnsupportedOption
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest, RequestLimits
from obelisk_session_evidence.contracts.json_input import describe_validation_error
from obelisk_session_evidence.contracts.prior_calls import MAX_CALL_COMMAND_CHARS
from obelisk_session_evidence.contracts.sources import SOURCES, SourceKind
from obelisk_session_evidence.providers.native.index.fts import call_shape, is_weak_word, path_tail, token_words
from obelisk_session_evidence.providers.native.index.lanes import CHANGER_PROGRAMS, FILE_EDIT_TOOLS
from obelisk_session_evidence.providers.native.index.scope import enablement_roots
from obelisk_session_evidence.providers.obelisk.freshness import SessionRoot, root_aliases
from obelisk_session_evidence.providers.obelisk.template import Lane, TemplateLimits, TemplateValues

SUPPORTED_REQUEST_FIELDS: Final = frozenset(
    {
        "schema_version",
        "request_id",
        "situation_id",
        "trigger",
        "scope",
        "revision",
        "evidence_types",
        "query_terms",
        "limits",
    }
)
"""Request fields this adapter understands; a set field outside it is refused."""
SUPPORTED_OPTIONS: Final = frozenset[str]()
"""Provider options: none yet; any option is refused before a process starts."""
OBELISK_SOURCE: Final[dict[SourceKind, str]] = {kind: spec.obelisk_name for kind, spec in SOURCES.items()}
"""LoopX source names to the names Obelisk writes in `message.source` (DSH is `deepseek`)."""
SEARCHED_TYPES: Final = frozenset({"decision", "summary"})
"""Evidence types that need `search()`; tool calls come from `sql()`."""
CALL_WALK: Final = 50_000
"""Newest in-scope tool calls the lanes look at (the SQL's bound on its work)."""
PER_LANE: Final = 16
"""Newest calls one lane keeps (the native provider's `CALL_LANE_ROWS`)."""
CHANGE_SCAN: Final = 64
"""Change candidates read; the adapter keeps the newest `CHANGE_ROWS` that really change files."""
CHANGE_ROWS: Final = 16
"""Newest changes kept (the native provider's `EDIT_LANE_ROWS`)."""
FOLLOW_ROWS: Final = 4
"""Changes read after each matched failure, in its session."""
FOLLOW_KEPT: Final = 16
"""Changes after matched failures kept in all."""
MAX_COMMAND_LANES: Final = 3
"""Command lanes per lookup (the native provider reads at most 3 command shapes); a command past
them is matched as text. Terms are at most 24, so are lanes."""
TEXT_WORDS: Final = 8
"""Words of one text lane (the native call lanes keep 8 subjects)."""
_PATH_LIKE: Final = re.compile(r"^[^\s-][^\s]*(?:/[^\s]*|\.[A-Za-z][A-Za-z0-9]{0,7})$")
"""A single word with a `/` or a file extension: `assets/build.js`, `Cargo.toml`."""
PER_TERM_FLOOR: Final = 10
PER_TERM_CAP: Final = 50
TEXT_CHARS: Final = 4000
STATE_ROWS: Final = 20_000
OUTPUT_HEAD_CHARS: Final = 1024
OUTPUT_TAIL_CHARS: Final = 1024


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """One checked lookup: what the template embeds and what every row is verified against."""

    terms: tuple[str, ...]
    lanes: tuple[Lane, ...]
    """How tool calls are matched (`lanes_for`)."""
    search_terms: tuple[str, ...]
    """The terms sent to `search()`: empty unless decisions or summaries were requested."""
    sources: tuple[str, ...]
    """Obelisk source names bound to the agent."""
    roots: tuple[str, ...]
    """Normalised absolute repository roots."""
    session_roots: tuple[SessionRoot, ...]
    """The enablement's session folders and their sources (for freshness), as configured."""
    state_roots: tuple[str, ...]
    """Every name of those folders Obelisk may have indexed them under (`root_aliases`)."""
    evidence_types: frozenset[EvidenceType]
    limits: RequestLimits

    @property
    def template_values(self) -> TemplateValues:
        """The values the fixed template embeds for this plan."""
        limits = self.limits
        return TemplateValues(
            lanes=self.lanes,
            search_terms=self.search_terms,
            sources=self.sources,
            roots=self.roots,
            session_roots=self.state_roots,
            change_tools=FILE_EDIT_TOOLS,
            change_programs=CHANGER_PROGRAMS,
            limits=TemplateLimits(
                walk=CALL_WALK,
                per_lane=PER_LANE,
                changes=CHANGE_SCAN,
                follow=FOLLOW_ROWS,
                command_chars=MAX_CALL_COMMAND_CHARS + 1,
                output_head_chars=OUTPUT_HEAD_CHARS,
                output_tail_chars=OUTPUT_TAIL_CHARS,
                per_term=min(PER_TERM_CAP, max(PER_TERM_FLOOR, 2 * limits.max_items)),
                text_chars=TEXT_CHARS,
                state_rows=STATE_ROWS,
            ),
        )


def query_plan(
    request: HistoricalEvidenceRequest,
    *,
    enablement: Enablement,
    options: Mapping[str, object],
    home: Path | None = None,
) -> QueryPlan:
    """The checked plan for `request`, or `UnsupportedOption` / `ScopeViolation`."""
    checked = _checked_request(request)
    unknown = set(options) - SUPPORTED_OPTIONS
    if unknown:
        raise UnsupportedOption(f"{len(unknown)} provider option(s) outside the allowlist")
    scope = checked.scope
    if (scope.agent_id, scope.project_id, scope.repository_id) != enablement.scope_key:
        raise ScopeViolation("request scope is not the enabled scope")
    roots = repository_roots(enablement.repo_roots)
    if not roots:
        raise ScopeViolation("enablement names no repository root to verify rows against")
    types = frozenset(checked.evidence_types)
    session_roots = [
        SessionRoot(source, str(path))
        for source, paths in enablement_roots(enablement, home=home).items()
        for path in paths
    ]
    return QueryPlan(
        terms=tuple(checked.query_terms),
        lanes=lanes_for(checked.query_terms),
        search_terms=tuple(checked.query_terms) if types & SEARCHED_TYPES else (),
        sources=tuple(dict.fromkeys(OBELISK_SOURCE[source] for source in enablement.sources)),
        roots=roots,
        session_roots=tuple(session_roots),
        state_roots=root_aliases([root.path for root in session_roots], home=home),
        evidence_types=types,
        limits=checked.limits,
    )


def lanes_for(terms: list[str]) -> tuple[Lane, ...]:
    """Command lanes first (a term that reads as a command, `fts.call_shape`), then a file lane
    per path and a text lane per other term of several words (and per command past the first
    `MAX_COMMAND_LANES`); single words (ids, stems) get none."""
    commands: dict[Lane, None] = {}
    others: dict[Lane, None] = {}
    for term in terms:
        shape, text = call_shape(term), term.lower()
        if shape is not None and len(commands) < MAX_COMMAND_LANES:
            subjects = tuple(subject.lower() for subject in shape.subjects)
            commands[Lane("command", program=shape.program, subjects=subjects, text=text)] = None
        elif _PATH_LIKE.match(term):
            tail = path_tail(term).lower()
            others[Lane("file", words=(tail,), text=tail)] = None
        elif len(term.split()) >= 2:
            words = text_words(term)
            if words:
                others[Lane("text", words=words, text=text)] = None
    return (*commands, *others)


def text_words(term: str) -> tuple[str, ...]:
    """A term's distinctive words for a text lane: its tokens that are not weak (`-x`, `2>&1`,
    `16`), longest first, at most `TEXT_WORDS`. Only the text before a NUL: SQLite's JSON reads a
    stored command only that far, so words past it could never match."""
    words = dict.fromkeys(word for word in token_words(term.split("\x00", 1)[0]) if not is_weak_word(word))
    return tuple(sorted(words, key=len, reverse=True)[:TEXT_WORDS])


def repository_roots(roots: list[str]) -> tuple[str, ...]:
    """Normalised, de-duplicated roots; `/` is refused (it would admit every path)."""
    normalised: dict[str, None] = {}
    for root in roots:
        path = normalised_path(root)
        if path is None or path == "/":
            raise ScopeViolation("a repository root is not a usable absolute path")
        normalised[path] = None
    return tuple(normalised)


def normalised_path(path: str) -> str | None:
    """`path` made absolute-normal (`..`, `.`, `//`, a trailing `/` removed); None if relative."""
    if not path.startswith("/") or "\x00" in path:
        return None
    normal = posixpath.normpath(path)
    return "/" + normal.lstrip("/")


def _checked_request(request: HistoricalEvidenceRequest) -> HistoricalEvidenceRequest:
    """Refuse unknown or unvalidated fields (a `model_construct`-built request is re-checked)."""
    if not isinstance(request, HistoricalEvidenceRequest):
        raise UnsupportedOption("request is not a historical_evidence_request_v0")
    extra = getattr(request, "__pydantic_extra__", None) or {}
    unknown = {
        name
        for name in type(request).model_fields
        if name not in SUPPORTED_REQUEST_FIELDS and getattr(request, name, None) is not None
    }
    if extra or unknown:
        raise UnsupportedOption(f"{len(extra) + len(unknown)} request field(s) outside the allowlist")
    problem = None
    try:
        return HistoricalEvidenceRequest.model_validate(request.model_dump())
    except ValidationError as error:
        problem = describe_validation_error(error)
    raise UnsupportedOption(f"request fails validation at {problem}")
