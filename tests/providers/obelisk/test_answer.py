"""template_answer: exit status and framing first, then the strict answer model."""

import json

import pytest

from contracts.errors import ProviderFailed, ProviderOutputMalformed
from providers.obelisk.answer import template_answer
from providers.obelisk.process import CliAnswer

CANARY = "CANARY-OBELISK-7f3a"
EMPTY_ANSWER = {
    "template": "obelisk-session-evidence/1",
    "helpers": {
        name: True for name in ("sql", "search", "sessions", "fileHistory", "failures", "messages")
    },
    "node": "22.14.0",
    "markers": [],
    "rows": [],
    "counts": {
        "hits": 0,
        "not_literal": 0,
        "out_of_scope": 0,
        "eligible": 0,
        "returned": 0,
        "search_errors": 0,
        "saturated_terms": 0,
        "marker_lookup_failed": False,
        "session_lookup_failed": False,
    },
}
PRETTY = json.dumps(EMPTY_ANSWER, indent=2).encode()


def _answer(stdout: bytes, exit_code: int = 0) -> CliAnswer:
    return CliAnswer(exit_code=exit_code, stdout=stdout, stderr_bytes=0)


def test_template_answer_accepts_pretty_json() -> None:
    assert template_answer(_answer(PRETTY + b"\n"), term_count=1, row_cap=10).rows == []


@pytest.mark.parametrize(
    ("exit_code", "stdout", "detail"),
    [
        (1, json.dumps({"error": CANARY, "stack": CANARY}).encode() + b"\n", "error_envelope"),
        (1, b"", "usage_error"),
        (1, CANARY.encode(), "exit_status_1"),
        (2, b"", "exit_status_2"),
        (-9, b"", "killed_by_signal"),
        (1, PRETTY, "exit_status_1"),
    ],
)
def test_template_answer_nonzero_exit_is_failed(exit_code: int, stdout: bytes, detail: str) -> None:
    with pytest.raises(ProviderFailed) as raised:
        template_answer(_answer(stdout, exit_code), term_count=1, row_cap=10)
    assert raised.value.detail == detail
    assert CANARY not in str(raised.value)


@pytest.mark.parametrize(
    "stdout",
    [
        pytest.param(b"", id="empty"),
        pytest.param(f"[obelisk] refreshed {CANARY}\n".encode() + PRETTY, id="stray-log-before"),
        pytest.param(PRETTY + f"\n[obelisk] done {CANARY}".encode(), id="stray-log-after"),
        pytest.param(PRETTY[:-20], id="truncated"),
        pytest.param(PRETTY + PRETTY, id="two-documents"),
        pytest.param(
            json.dumps({"error": CANARY, "stack": ""}).encode(), id="envelope-with-exit-0"
        ),
        pytest.param(json.dumps({**EMPTY_ANSWER, "extra": CANARY}).encode(), id="unknown-key"),
        pytest.param(
            json.dumps({**EMPTY_ANSWER, "template": "other/1"}).encode(), id="other-template"
        ),
        pytest.param(b"\xff\xfe" + PRETTY, id="not-utf8"),
    ],
)
def test_template_answer_malformed(stdout: bytes) -> None:
    with pytest.raises(ProviderOutputMalformed) as raised:
        template_answer(_answer(stdout), term_count=1, row_cap=10)
    assert CANARY not in str(raised.value)
    assert raised.value.__context__ is None


@pytest.mark.parametrize(
    ("row_count", "eligible", "returned"),
    [(0, 1, 1), (1, 0, 0), (1, 0, 1), (2, 2, 1)],
)
def test_template_answer_inconsistent_counts_are_malformed(
    row_count: int, eligible: int, returned: int, make_row
) -> None:
    document = {
        **EMPTY_ANSWER,
        "rows": [make_row(message_id=f"m-{n}").model_dump() for n in range(row_count)],
    }
    document["counts"] = {**EMPTY_ANSWER["counts"], "eligible": eligible, "returned": returned}
    with pytest.raises(ProviderOutputMalformed):
        template_answer(_answer(json.dumps(document).encode()), term_count=1, row_cap=10)


def test_template_answer_term_index_out_of_range_is_malformed(make_row) -> None:
    document = {**EMPTY_ANSWER, "rows": [make_row(term=3, terms=[3]).model_dump()]}
    document["counts"] = {**EMPTY_ANSWER["counts"], "eligible": 1, "returned": 1}
    with pytest.raises(ProviderOutputMalformed):
        template_answer(_answer(json.dumps(document).encode()), term_count=2, row_cap=10)


def test_template_answer_more_rows_than_the_cap_is_malformed(make_row) -> None:
    rows = [make_row(message_id=f"m-{index}").model_dump() for index in range(3)]
    document = {**EMPTY_ANSWER, "rows": rows}
    document["counts"] = {**EMPTY_ANSWER["counts"], "eligible": 3, "returned": 3}
    with pytest.raises(ProviderOutputMalformed):
        template_answer(_answer(json.dumps(document).encode()), term_count=1, row_cap=2)
