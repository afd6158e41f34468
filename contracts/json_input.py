"""Strict JSON entry for every contract: one clear line naming the field, never its value."""

import json
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from contracts.errors import InvalidInput

MAX_DOCUMENT_BYTES: Final = 4 * 1024 * 1024
Model = TypeVar("Model", bound=BaseModel)


def load_contract(model: type[Model], raw: bytes) -> Model:
    """Validate `raw` JSON as `model`; reject duplicate keys, NaN/Infinity and oversize input."""
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise InvalidInput(f"document larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        text = raw.decode("utf-8")  # JSON is UTF-8; json.loads(bytes) would guess UTF-16 too
        json.loads(text, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise InvalidInput("document is not valid UTF-8") from None
    except json.JSONDecodeError as error:
        raise InvalidInput(f"not valid JSON at line {error.lineno} column {error.colno}") from None
    except _Rejected as error:
        raise InvalidInput(str(error)) from None
    except RecursionError:
        raise InvalidInput("JSON nested too deeply") from None
    try:
        return model.model_validate_json(raw)
    except ValidationError as error:
        raise InvalidInput(describe_validation_error(error)) from None


def describe_validation_error(error: ValidationError) -> str:
    """`<field path>: <what is wrong>` for the first error, plus how many more there are."""
    first = error.errors(include_input=False, include_url=False)[0]
    path, message = _field_path(first["loc"], first["type"]), first["msg"]
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    more = error.error_count() - 1
    return f"{path}: {message}" + (f" (+{more} more)" if more else "")


def _field_path(loc: tuple[int | str, ...], error_type: str) -> str:
    """The dotted path of declared fields only: an unknown key or a mapping's key is the
    document's own text (it may be private), so it is named by its place, never echoed."""
    parts = list(loc[:-1] if error_type == "extra_forbidden" else loc)
    shown = [
        "<key>" if index + 1 < len(parts) and parts[index + 1] == "[key]" else str(part)
        for index, part in enumerate(parts)
        if part != "[key]"
    ]
    return ".".join(shown)[:200] or "<root>"


class _Rejected(ValueError):
    """A JSON feature the contracts refuse."""


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Rejected("duplicate key in a JSON object")
    return dict(pairs)


def _reject_constant(name: str) -> None:
    raise _Rejected(f"{name} is not a JSON number")
