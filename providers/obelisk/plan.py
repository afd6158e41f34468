"""Checking a request against the allowlist and the enablement, before any process starts.

Everything here is pure: a request that passes becomes a `QueryPlan` (the values the template
embeds and the adapter verifies rows against); one that does not raises `UnsupportedOption` or
`ScopeViolation`, and no process has been spawned.
"""

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from pydantic import ValidationError

from contracts.base import EvidenceType
from contracts.config import Enablement, SourceKind
from contracts.errors import ScopeViolation, UnsupportedOption
from contracts.evidence import HistoricalEvidenceRequest, RequestLimits
from contracts.json_input import describe_validation_error
from providers.obelisk.template import TemplateLimits

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
SUPPORTED_OPTIONS: Final = frozenset({"after", "before", "max_index_age_s"})
"""Provider options: an observation window and how old a build may be and still count as fresh."""
OBELISK_SOURCE: Final[dict[SourceKind, str]] = {
    "claude": "claude",
    "codex": "codex",
    "kimi": "kimi",
    "pi": "pi",
    "dsh": "deepseek",
}
"""LoopX source names to the names Obelisk writes in `message.source` (DSH is `deepseek`)."""
DEFAULT_MAX_INDEX_AGE_S: Final = 600.0
PER_TERM_FLOOR: Final = 25
PER_TERM_CAP: Final = 100
ROW_CAP: Final = 200
WINDOW_CAP: Final = 2000
SESSION_LOOKUP_CAP: Final = 200
MARKER_CAP: Final = 32


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """One checked lookup: what the template embeds and what every row is verified against."""

    terms: tuple[str, ...]
    sources: tuple[str, ...]
    """Obelisk source names bound to the agent."""
    roots: tuple[str, ...]
    """Normalised absolute repository roots."""
    after: datetime | None
    before: datetime | None
    evidence_types: frozenset[EvidenceType]
    limits: RequestLimits
    template_limits: TemplateLimits
    max_index_age_s: float

    @property
    def after_iso(self) -> str | None:
        """`after` as ISO-8601 UTC with milliseconds and `Z`, as the template embeds it."""
        return _iso(self.after)

    @property
    def before_iso(self) -> str | None:
        """`before` as ISO-8601 UTC with milliseconds and `Z`, as the template embeds it."""
        return _iso(self.before)


def query_plan(
    request: HistoricalEvidenceRequest,
    *,
    enablement: Enablement,
    options: Mapping[str, object],
) -> QueryPlan:
    """The checked plan for `request`, or `UnsupportedOption` / `ScopeViolation`."""
    checked = _checked_request(request)
    after, before, max_age = _checked_options(options)
    scope = checked.scope
    if (scope.agent_id, scope.project_id, scope.repository_id) != (
        enablement.agent_id,
        enablement.project_id,
        enablement.repository_id,
    ):
        raise ScopeViolation("request scope is not the enabled scope")
    roots = repository_roots(enablement.repo_roots)
    if not roots:
        raise ScopeViolation("enablement names no repository root to verify rows against")
    limits = checked.limits
    longest_term = max(len(term) for term in checked.query_terms)
    return QueryPlan(
        terms=tuple(checked.query_terms),
        sources=tuple(dict.fromkeys(OBELISK_SOURCE[source] for source in enablement.sources)),
        roots=roots,
        after=after,
        before=before,
        evidence_types=frozenset(checked.evidence_types),
        limits=limits,
        template_limits=TemplateLimits(
            per_term=min(PER_TERM_CAP, max(PER_TERM_FLOOR, 4 * limits.max_items)),
            rows=min(ROW_CAP, max(4 * limits.max_items, 20)),
            snippet_chars=min(WINDOW_CAP, max(limits.max_snippet_chars, longest_term + 64)),
            sessions=SESSION_LOOKUP_CAP,
            markers=MARKER_CAP,
        ),
        max_index_age_s=max_age,
    )


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
        raise UnsupportedOption(
            f"{len(extra) + len(unknown)} request field(s) outside the allowlist"
        )
    problem = None
    try:
        return HistoricalEvidenceRequest.model_validate(request.model_dump())
    except ValidationError as error:
        problem = describe_validation_error(error)
    raise UnsupportedOption(f"request fails validation at {problem}")


def _checked_options(
    options: Mapping[str, object],
) -> tuple[datetime | None, datetime | None, float]:
    unknown = set(options) - SUPPORTED_OPTIONS
    if unknown:
        raise UnsupportedOption(f"{len(unknown)} provider option(s) outside the allowlist")
    # Millisecond precision on both sides (the template's `Date.parse` has no more); rounding
    # narrows the window, never widens it.
    after = _moment(options.get("after"), "after", round_up=True)
    before = _moment(options.get("before"), "before", round_up=False)
    if after is not None and before is not None and after > before:
        raise UnsupportedOption("option after is later than before")
    max_age = options.get("max_index_age_s", DEFAULT_MAX_INDEX_AGE_S)
    if isinstance(max_age, bool) or not isinstance(max_age, int | float) or not 0 < max_age < 10**9:
        raise UnsupportedOption("option max_index_age_s must be a positive number of seconds")
    return after, before, float(max_age)


def _moment(value: object, name: str, *, round_up: bool) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        moment = None
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass
        value = moment
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise UnsupportedOption(f"option {name} must be a timezone-aware datetime")
    moment = value.astimezone(UTC)
    sub_ms = moment.microsecond % 1000
    moment = moment.replace(microsecond=moment.microsecond - sub_ms)
    if round_up and sub_ms:
        moment += timedelta(milliseconds=1)
    return moment


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
