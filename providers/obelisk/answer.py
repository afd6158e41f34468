"""Reading what the CLI printed: the template's answer, or its error framing. Strict, fail closed.

Framing (obelisk-cli.md): exit 0 with one pretty-printed JSON document on stdout; exit 1 with one
`{"error", "stack"}` line on stdout; exit 1 with empty stdout for a usage error.

Decision on stray output: the template never calls `console`, so anything on stdout besides the
one JSON document (a log line before it, text after it) means stdout was not ours alone, and the
answer is rejected as malformed. We do not try to find "the JSON part": a line that happens to
parse could be a log line of the same shape, and nothing proves which document the template wrote.

Parsing never raises inside an exception handler, so no `JSONDecodeError.doc` or
`ValidationError` (both hold the raw text) is ever chained to the error we raise.
"""

from typing import Annotated, Final, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from contracts.errors import ProviderFailed, ProviderOutputMalformed
from providers.obelisk.plan import WINDOW_CAP
from providers.obelisk.process import CliAnswer

MAX_TERMS_SEEN: Final = 64
Short = Annotated[str, StringConstraints(max_length=64)]
PathText = Annotated[str, StringConstraints(max_length=4096)]


class _Wire(BaseModel):
    """What the CLI printed: closed, strict, never echoed into errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, hide_input_in_errors=True)


class Marker(_Wire):
    """One `index_state` marker row (`__last_build__`, ...)."""

    key: Short
    mtime: float | int | None


class Row(_Wire):
    """One in-scope message the template kept, cut to a window around the matched term."""

    term: Annotated[int, Field(ge=0)]
    terms: Annotated[
        list[Annotated[int, Field(ge=0)]], Field(min_length=1, max_length=MAX_TERMS_SEEN)
    ]
    source: Annotated[str, StringConstraints(min_length=1, max_length=32)]
    session_source: Annotated[str, StringConstraints(max_length=32)] | None
    session_id: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    message_id: Annotated[str, StringConstraints(max_length=512)] | None
    timestamp: Short | float | int | None
    cwd: PathText | None
    project_path: PathText | None
    role: Annotated[str, StringConstraints(max_length=32)] | None
    content_type: Short | None
    is_meta: bool
    rank: float | int | None
    text: Annotated[str, StringConstraints(max_length=WINDOW_CAP)]
    text_chars: Annotated[int, Field(ge=0)]
    window_start: Annotated[int, Field(ge=0)]
    tool_name: Annotated[str, StringConstraints(max_length=128)] | None
    is_error: bool | None
    exit_code: int | None


class Counts(_Wire):
    """What the template saw and dropped before printing."""

    hits: Annotated[int, Field(ge=0)]
    not_literal: Annotated[int, Field(ge=0)]
    out_of_scope: Annotated[int, Field(ge=0)]
    eligible: Annotated[int, Field(ge=0)]
    returned: Annotated[int, Field(ge=0)]
    search_errors: Annotated[int, Field(ge=0)]
    saturated_terms: Annotated[int, Field(ge=0)]
    marker_lookup_failed: bool
    session_lookup_failed: bool


class Helpers(_Wire):
    """Which sandbox helpers the script found (`typeof ... === "function"`)."""

    sql: bool
    search: bool
    sessions: bool
    fileHistory: bool
    failures: bool
    messages: bool


class TemplateAnswer(_Wire):
    """The template's whole return value."""

    template: Literal["obelisk-session-evidence/1"]
    helpers: Helpers
    node: Annotated[str, StringConstraints(max_length=32)] | None
    markers: Annotated[list[Marker], Field(max_length=256)]
    rows: Annotated[list[Row], Field(max_length=1000)]
    counts: Counts


WireModel = TypeVar("WireModel", bound=_Wire)


class _ErrorEnvelope(_Wire):
    error: str | None
    stack: str | None = None


def template_answer(answer: CliAnswer, *, term_count: int, row_cap: int) -> TemplateAnswer:
    """The template's answer from a finished run; `ProviderFailed` / `ProviderOutputMalformed`."""
    if answer.exit_code != 0:
        raise ProviderFailed(_failure_code(answer))
    parsed = _validated(TemplateAnswer, answer.stdout)
    if parsed is None:
        raise ProviderOutputMalformed("stdout is not one template answer document")
    if not _consistent(parsed, term_count=term_count, row_cap=row_cap):
        raise ProviderOutputMalformed("template answer counts or term indexes are inconsistent")
    return parsed


def _failure_code(answer: CliAnswer) -> str:
    """A reason code for a non-zero exit; the error text itself is never read into the code."""
    if answer.exit_code < 0:
        return "killed_by_signal"
    if answer.exit_code == 1 and not answer.stdout.strip():
        return "usage_error"
    one_line = answer.stdout.strip().count(b"\n") == 0
    if answer.exit_code == 1 and one_line and _validated(_ErrorEnvelope, answer.stdout) is not None:
        return "error_envelope"
    return f"exit_status_{min(answer.exit_code, 255)}"


def _validated(model: type[WireModel], raw: bytes) -> WireModel | None:
    try:
        return model.model_validate_json(raw)
    except ValidationError:
        pass
    return None


def _consistent(answer: TemplateAnswer, *, term_count: int, row_cap: int) -> bool:
    counts = answer.counts
    if counts.returned != len(answer.rows) or counts.eligible < counts.returned:
        return False
    if len(answer.rows) > row_cap:
        return False
    return all(
        row.term < term_count and all(index < term_count for index in row.terms)
        for row in answer.rows
    )
