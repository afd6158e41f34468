"""Lines parsed from bytes by msgspec are decided exactly as `json.loads` decides them.

The reference is `parse_line_with_json` (UTF-8 decode with replacement, then `json.loads`), the path
every parser took before. Equal means the same objects (same types: `1` is not `1.0`), the same
skip counts, and on the real corpus the same index rows in every table.
"""

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from obelisk_session_evidence.providers.native.index.refresh import refresh_locked
from obelisk_session_evidence.providers.native.index.store import MEMORY, connect
from obelisk_session_evidence.providers.native.parsers import _reading
from obelisk_session_evidence.providers.native.parsers._reading import parse_line, parse_line_with_json
from tests.providers.native.conftest import REAL_ROOTS, index_rows, requires_real_corpus


def _both(raw: bytes) -> tuple[tuple[str, Counter], tuple[str, Counter]]:
    fast, reference = Counter(), Counter()
    return (repr(parse_line(raw, fast)), fast), (repr(parse_line_with_json(raw, reference)), reference)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 1, "b": 2, "a": 3}\n',  # a repeated key: the last wins, in the first one's place
        b'{"n": 123456789012345678901234567890, "m": -9223372036854775809}\n',  # beyond 64 bits: exact ints
        b'{"n": 18446744073709551615, "f": 1.0, "z": -0.0, "e": 1E5, "tiny": 1e-400}\n',
        b'{"nan": NaN, "inf": -Infinity, "huge": 1e400}\n',  # json accepts these; msgspec does not
        b'{"lone": "\\ud800", "pair": "\\ud83d\\ude00", "nul": "\\u0000"}\n',
        b'{"bad": "\xff\xfe", "surrogate": "\xed\xa0\x80"}\n',  # invalid UTF-8: replaced and counted
        b"\xef\xbb\xbf{}\n",  # a byte-order mark
        b'{"ctl": "\x01"}\n',
        b"[1, 2]\n",
        b'"text"\n',
        b"{} trailing\n",
        b"   \r\n",
        b"{" * 5000 + b"}" * 5000 + b"\n",  # deeper than either parser nests
        b'{"a": [' * 600 + b"]}" * 600 + b"\n",
    ],
)
def test_parse_line_matches_json_on_edge_cases(raw: bytes) -> None:
    try:
        expected = _both(raw)[1]
    except RecursionError:
        with pytest.raises(RecursionError):
            parse_line(raw, Counter())
        return
    assert _both(raw)[0] == expected


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None)),  # lone surrogates included
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    value=_JSON_VALUES, ascii_only=st.booleans(), cut=st.integers(min_value=0, max_value=400), flip=st.integers(0, 255)
)
def test_parse_line_matches_json_on_generated_lines(value: object, ascii_only: bool, cut: int, flip: int) -> None:
    """Whole lines, and the same lines with one byte changed (damage of every kind)."""
    raw = json.dumps({"v": value}, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass") + b"\n"
    assert _both(raw)[0] == _both(raw)[1]
    position = cut % len(raw)
    damaged = raw[:position] + bytes([flip]) + raw[position + 1 :]
    assert _both(damaged)[0] == _both(damaged)[1]


def _build(monkeypatch: pytest.MonkeyPatch, line_parser) -> dict[str, list[tuple]]:
    calls = Counter()

    def counted(raw, skipped):
        calls["lines"] += 1
        return line_parser(raw, skipped)

    with monkeypatch.context() as patched:
        patched.setattr(_reading, "parse_line", counted)
        connection = connect(MEMORY)
        try:
            report = refresh_locked(connection, REAL_ROOTS)
            assert report.files_failed == 0 and report.messages_written > 1000
            assert calls["lines"] > 10_000  # every line went through the parser under test
            return index_rows(connection)
        finally:
            connection.close()


@requires_real_corpus
def test_real_corpus_index_is_identical_with_either_line_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _build(monkeypatch, parse_line)
    reference = _build(monkeypatch, parse_line_with_json)
    assert fast.keys() == reference.keys()
    assert len(fast["entries"]) > 2000 and len(fast["entry_text"]) == len(fast["entries"])
    for table in fast:
        assert fast[table] == reference[table], table
