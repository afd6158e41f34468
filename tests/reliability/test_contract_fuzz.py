"""Contracts fuzzed: every mutation of a valid document is rejected with one clear line, exit 2.

`make test-reliability` (OSE_RELIABILITY_FULL=1) runs >= 10,000 generated documents; the default
run uses fewer examples so CI stays short.
"""

import json
import math
import os
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixtures.situations import situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation

pytestmark = pytest.mark.reliability
FULL = os.environ.get("OSE_RELIABILITY_FULL") == "1"
EXAMPLES = 1400 if FULL else 120
"""Per test; 8 tests: 11,200 documents in the full run."""
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

VALID_REQUEST: dict[str, Any] = {
    "schema_version": "historical_evidence_request_v0",
    "request_id": "req-1",
    "situation_id": "situation-1",
    "trigger": "replan_repetition",
    "scope": {
        "agent_id": "a",
        "project_id": "p",
        "repository_id": "r",
        "allow_cross_agent": False,
        "allow_cross_project": False,
    },
    "evidence_types": ["prior_failure"],
    "query_terms": ["pytest -x"],
    "limits": {"max_sessions": 1, "max_items": 1, "max_snippet_chars": 10, "max_total_chars": 10},
}
DOCUMENTS = {"situation": (ReplanSituation, situation()), "request": (HistoricalEvidenceRequest, VALID_REQUEST)}


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a dict or a leaf inside `value`."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, prefix + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, prefix + (index,))
    return found


def _get(document: Any, path: tuple) -> Any:
    for part in path:
        document = document[part]
    return document


def _set(document: Any, path: tuple, value: Any) -> Any:
    copy = json.loads(json.dumps(document))
    if not path:
        return value
    _get(copy, path[:-1])[path[-1]] = value
    return copy


def _wrong_type(value: Any) -> list[Any]:
    """Non-null values of a JSON type other than `value`'s (strict mode coerces none of them)."""
    candidates = ["text", 7, 2.5, True, ["x"], {"k": "v"}]
    return [c for c in candidates if type(c) is not type(value)]


@st.composite
def _mutation(draw, kind: str, documents: tuple[str, ...] = tuple(sorted(DOCUMENTS))):
    model, document = DOCUMENTS[draw(st.sampled_from(documents))]
    paths = _paths(document)
    if kind == "unknown_field":
        objects = [p for p in paths if isinstance(_get(document, p), dict)]
        path = draw(st.sampled_from(objects))
        name = draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12))
        target = _get(document, path)
        if name in target:
            name = "zz_" + name + "_unknown"
        value = draw(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20)))
        return model, json.dumps(_set(document, path, {**target, name: value})).encode()
    leaves = [p for p in paths if p and not isinstance(_get(document, p), (dict, list))]
    path = draw(st.sampled_from(leaves))
    if kind == "wrong_type":
        return model, json.dumps(
            _set(document, path, draw(st.sampled_from(_wrong_type(_get(document, path)))))
        ).encode()
    if kind == "wrong_literal":
        literal_paths = [
            p
            for p in leaves
            if p[-1]
            in {
                "schema_version",
                "result_class",
                "trigger",
                "prior_session_coverage",
                "allow_cross_agent",
                "allow_cross_project",
            }
        ]
        path = draw(st.sampled_from(literal_paths))
        original = _get(document, path)
        replacement = (
            True if original is False else draw(st.text(min_size=1, max_size=30).filter(lambda t: t != original))
        )
        return model, json.dumps(_set(document, path, replacement)).encode()
    if kind == "huge_string":
        string_paths = [p for p in leaves if isinstance(_get(document, p), str)]
        path = draw(st.sampled_from(string_paths))
        return model, json.dumps(_set(document, path, "x" * draw(st.integers(64 * 1024 + 1, 1_200_000)))).encode()
    if kind == "non_finite":
        number = draw(st.sampled_from(["NaN", "Infinity", "-Infinity"]))
        return model, json.dumps(_set(document, path, math.nan)).replace("NaN", number).encode()
    if kind == "duplicate_key":
        text = json.dumps(document)
        return model, text.replace('"schema_version"', '"schema_version": "dup", "schema_version"', 1).encode()
    if kind == "deep_nesting":
        depth = draw(st.integers(150, 100_000))
        return model, json.dumps({**document, "nested": 0}).replace("0}", "[" * depth + "]" * depth + "}", 1).encode()
    # invalid UTF-8 somewhere inside a string value
    raw = json.dumps(document).encode()
    cut = draw(st.sampled_from([index for index, byte in enumerate(raw) if byte == ord('"')]))
    return model, raw[: cut + 1] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80"])) + raw[cut + 1 :]


KINDS = [
    "unknown_field",
    "wrong_type",
    "wrong_literal",
    "huge_string",
    "non_finite",
    "duplicate_key",
    "deep_nesting",
    "invalid_utf8",
]


@pytest.mark.parametrize("kind", KINDS)
def test_load_contract_rejects_every_mutation(kind):
    @FUZZ
    @given(case=_mutation(kind))
    def check(case):
        model, raw = case
        with pytest.raises(InvalidInput) as caught:
            load_contract(model, raw)
        message = str(caught.value)
        assert message.startswith("invalid_input: ") and "\n" not in message and len(message) < 400

    check()


def test_valid_documents_are_accepted():
    for model, document in DOCUMENTS.values():
        load_contract(model, json.dumps(document).encode())


@FUZZ
@given(
    case=_mutation("unknown_field", ("situation",))
    | _mutation("wrong_type", ("situation",))
    | _mutation("invalid_utf8", ("situation",))
)
def test_run_rejects_mutated_situation_with_exit_2_and_one_line(case):
    model, raw = case
    assert model is ReplanSituation  # every draw is a situation: none is skipped
    result = CliRunner().invoke(main, ["run", "--situation", "-"], input=raw)
    assert result.exit_code == 2
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: invalid_input: ")
