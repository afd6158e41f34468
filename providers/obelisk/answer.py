"""Reading what the CLI printed: the template's answer, or its error framing. Strict, fail closed.

Framing, as the 0.2.3 recordings show it: exit 0 with one pretty-printed JSON document on stdout;
exit 1 with one `{"error", "stack"}` line on stdout; exit 1 with empty stdout and usage on stderr.
`console.log` output would come before the JSON (3.18) and a script without `return` prints
`undefined` (3.23).

Decision on stray output: the template never calls `console`, so anything on stdout besides the
one JSON document (a log line before it, `undefined`, text after it) means stdout was not ours
alone, and the answer is rejected as malformed. We do not look for "the JSON part".

Parsing never raises inside an exception handler, so no `JSONDecodeError.doc` or
`ValidationError` (both hold the raw text) is ever chained to the error we raise.
"""

from typing import Annotated, Final, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from obelisk_session_evidence.contracts.errors import ProviderFailed, ProviderOutputMalformed
from obelisk_session_evidence.providers.obelisk.process import CliAnswer

MAX_ROWS: Final = 5000
PathText = Annotated[str, StringConstraints(max_length=4096)]
IdText = Annotated[str, StringConstraints(min_length=1, max_length=512)]
Short = Annotated[str, StringConstraints(max_length=64)]


class _Wire(BaseModel):
    """What the CLI printed: closed, strict, never echoed into errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, hide_input_in_errors=True)


class StateRow(_Wire):
    """One `index_state` row: a marker (`__last_build__`) or a session file."""

    jsonl_path: PathText
    mtime: float | int | None
    lines_processed: int | None
    cursor: Annotated[str, StringConstraints(max_length=256)] | None


class CallRow(_Wire):
    """One tool call with its result, as the template's SQL read it (already cut)."""

    call_id: IdText
    session_id: IdText | None
    tool_name: Annotated[str, StringConstraints(max_length=128)] | None
    source: Short | None
    project_path: PathText | None
    cwd: PathText | None
    timestamp: Short | None
    file_path: PathText | None
    command: Annotated[str, StringConstraints(max_length=16 * 1024 + 1)] | None
    command_chars: int | None
    is_error: Literal[0, 1] | None
    output_head: Annotated[str, StringConstraints(max_length=16 * 1024)] | None
    output_tail: Annotated[str, StringConstraints(max_length=16 * 1024)] | None
    output_chars: int | None
    exit_text: Annotated[str, StringConstraints(max_length=12)] | None
    lane: Annotated[int, Field(ge=-2)]
    """The first lane that matched it (template.Lane order); -2 and -1 for changes (template.py)."""
    lanes: Annotated[str, StringConstraints(pattern=r"^-?\d{1,3}(,-?\d{1,3}){0,63}$")]
    """Every lane that matched it, comma-separated (SQLite's `group_concat`)."""

    @property
    def lane_numbers(self) -> tuple[int, ...]:
        """`lanes` as numbers."""
        return tuple(int(number) for number in self.lanes.split(","))


class HitRow(_Wire):
    """One `search()` hit the script kept (decisions and summaries)."""

    term: Annotated[int, Field(ge=0)]
    uuid: IdText | None
    source: Short | None
    cwd: PathText | None
    timestamp: Short | None
    role: Short | None
    content_type: Short | None
    is_meta: Literal[0, 1] | bool | None
    text: Annotated[str, StringConstraints(max_length=16 * 1024)] | None
    text_chars: Annotated[int, Field(ge=0)]
    session_id: IdText | None
    session_source: Short | None
    project: PathText | None
    rank: float | int | None


class TemplateAnswer(_Wire):
    """The template's whole return value."""

    template: Literal["obelisk-session-evidence/3"]
    state: Annotated[list[StateRow], Field(max_length=MAX_ROWS)]
    state_failed: bool
    calls: Annotated[list[CallRow], Field(max_length=MAX_ROWS)]
    calls_failed: bool
    hits: Annotated[list[HitRow], Field(max_length=MAX_ROWS)]
    hits_dropped: Annotated[int, Field(ge=0)]
    search_failed: Annotated[int, Field(ge=0)]


WireModel = TypeVar("WireModel", bound=_Wire)


class _ErrorEnvelope(_Wire):
    error: str | None
    stack: str | None = None


def template_answer(answer: CliAnswer, *, term_count: int, lane_count: int, call_cap: int) -> TemplateAnswer:
    """The template's answer from a finished run; `ProviderFailed` / `ProviderOutputMalformed`."""
    if answer.exit_code != 0:
        raise ProviderFailed(_failure_code(answer))
    parsed = _validated(TemplateAnswer, answer.stdout)
    if parsed is None:
        raise ProviderOutputMalformed("stdout is not one template answer document")
    if (
        len(parsed.calls) > call_cap
        or any(hit.term >= term_count for hit in parsed.hits)
        or any(max(call.lane_numbers) >= lane_count for call in parsed.calls)
    ):
        raise ProviderOutputMalformed("template answer exceeds its caps, term or lane indexes")
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
