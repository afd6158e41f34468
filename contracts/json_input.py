"""Strict JSON entry for every contract: one clear line naming the field, never its value."""

import json
from typing import IO, Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from obelisk_session_evidence.contracts.errors import InvalidInput

MAX_DOCUMENT_BYTES: Final = 4 * 1024 * 1024
READ_CHUNK: Final = 64 * 1024
Model = TypeVar("Model", bound=BaseModel)


def read_at_most(handle: IO[bytes], limit: int) -> bytes:
    """At most `limit + 1` bytes of `handle` (one more than `limit` says it is too long), a chunk at
    a time. `handle.read(limit + 1)` allocates the whole limit first: megabytes for a file of a few
    hundred bytes, which costs a millisecond or more per read once a long-lived process has freed
    a large block (the allocator then serves such sizes from its heap and trims it every time)."""
    chunks, total = [], 0
    while total <= limit and (chunk := handle.read(min(READ_CHUNK, limit + 1 - total))):
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def load_contract(model: type[Model], raw: bytes, *, max_bytes: int = MAX_DOCUMENT_BYTES) -> Model:
    """Validate `raw` JSON as `model`; reject duplicate keys, NaN/Infinity and input over
    `max_bytes` (a batch manifest has its own, larger cap)."""
    if len(raw) > max_bytes:
        raise InvalidInput(f"document larger than {max_bytes} bytes")
    try:
        text = raw.decode("utf-8")  # JSON is UTF-8; json.loads(bytes) would guess UTF-16 too
        json.loads(text, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise InvalidInput("document is not valid UTF-8") from None
    except json.JSONDecodeError as error:
        raise InvalidInput(f"not valid JSON at line {error.lineno} column {error.colno}") from None
    except RecursionError:
        raise InvalidInput("JSON nested too deeply") from None
    try:
        return model.model_validate_json(raw)
    except ValidationError as error:
        problems = validation_problems(error)
        raise InvalidInput(_joined(problems), problems=problems[:MAX_PROBLEMS]) from None


MAX_PROBLEMS: Final = 5
ROOT: Final = "<root>"


def describe_validation_error(error: ValidationError) -> str:
    """Every problem as `<field path>: <what is wrong>`, unknown fields first, at most
    `MAX_PROBLEMS` (then how many more). An unknown field is named by where it is and how many
    there are, never by its key: the key is the caller's text and may be content.
    The one formatter for every contract's validation errors: keep all callers on it."""
    return _joined(validation_problems(error))


def validation_problems(error: ValidationError) -> list[str]:
    """`describe_validation_error`'s problems, one string each, all of them (public: field paths
    of declared fields and pydantic's message without the input)."""
    details = error.errors(include_input=False, include_url=False, include_context=False)
    unknown: dict[tuple[int | str, ...], int] = {}
    problems: list[str] = []
    for detail in details:
        location = detail["loc"]
        if detail["type"] == "extra_forbidden":
            unknown[location[:-1]] = unknown.get(location[:-1], 0) + 1
        else:
            problems.append(f"{_location(location)}: {detail['msg']}")
    outermost_first = sorted(unknown, key=len)
    return [f"{_location(where)}: unknown field ({unknown[where]})" for where in outermost_first] + problems


def _joined(problems: list[str]) -> str:
    shown = "; ".join(problems[:MAX_PROBLEMS])
    more = len(problems) - MAX_PROBLEMS
    return shown + (f" (+{more} more)" if more > 0 else "")


def _location(location: tuple[int | str, ...]) -> str:
    """The dotted path of declared fields only: a mapping's key is the document's own text (it may
    be private), so it is named by its place (`<key>`), never echoed."""
    parts = list(location)
    shown = [
        "<key>" if index + 1 < len(parts) and parts[index + 1] == "[key]" else str(part)
        for index, part in enumerate(parts)
        if part != "[key]"
    ]
    return ".".join(shown)[:200] or ROOT


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise InvalidInput("duplicate key in a JSON object")
    return dict(pairs)


def _reject_constant(name: str) -> None:
    raise InvalidInput(f"{name} is not a JSON number")
