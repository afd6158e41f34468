"""The exported pattern file is what detect-secrets defines today, and the restated filters agree
with detect-secrets' own."""

import base64
import itertools
import json
import re

import pytest
from detect_secrets.filters import heuristic
from detect_secrets.plugins.jwt import JwtTokenDetector
from hypothesis import given, settings
from hypothesis import strategies as st

from obelisk_session_evidence.providers.redaction import secret_filters
from obelisk_session_evidence.providers.redaction.secret_patterns import (
    _CUBIC_SEPARATOR,
    _LINEAR_SEPARATOR,
    PATTERNS_FILE,
    build_patterns,
    load_patterns,
    patterns_text,
)
from tests.providers.native.conftest import real_files, requires_real_corpus

FILTERS = (
    "is_sequential_string",
    "is_potential_uuid",
    "is_templated_secret",
    "is_prefixed_with_dollar_sign",
    "is_not_alphanumeric_string",
    "is_indirect_reference",
)
EDGE_VALUES = [
    "",
    "$",
    "{",
    "}",
    "{}",
    "<>",
    "${",
    "${x}",
    "$x",
    "a",
    "abcdef",
    "ABCDEF0123",
    "0123456789",
    "9876",
    "XYZ=/",
    "*****",
    "123e4567-e89b-12d3-a456-426614174000",
    "s3cr3t-Value!",
    "k = get_secret_key()",
    "v = request.headers['apikey']",
    "x" * 1001 + " = f(y)",
    "pw := os.getenv('PW')",
    "\u00e9\u00e8",
]
secret_like = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)
from_alphabets = st.text(alphabet="ABCDEFabcdef0123456789+/=-{}<>$[]()'\"=:. _", max_size=40)


def test_a_fresh_build_from_detect_secrets_equals_the_committed_file():
    assert patterns_text(build_patterns()) == PATTERNS_FILE.read_text(encoding="utf-8"), (
        "detect-secrets changed: run .venv/bin/python -m providers.redaction.secret_patterns"
    )


def test_the_linear_separator_matches_what_the_cubic_one_matches():
    pieces = [" ", "=", ":", ">", "a"]
    for length in range(7):
        for combination in itertools.product(pieces, repeat=length):
            text = "".join(combination)
            cubic = re.fullmatch(_CUBIC_SEPARATOR + "a", text + "a")
            linear = re.fullmatch(_LINEAR_SEPARATOR + "a", text + "a")
            assert (cubic is None) == (linear is None), text


def test_the_compiled_patterns_equal_detect_secrets_compiled_patterns():
    """detect-secrets' own patterns, but for the one rewrite of a cubic separator."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.base import RegexBasedDetector

    theirs = {
        (pattern.pattern.replace(_CUBIC_SEPARATOR, _LINEAR_SEPARATOR), pattern.flags)
        for detector in get_mapping_from_secret_type_to_class().values()
        if issubclass(detector, RegexBasedDetector) and detector.__name__ != "IPPublicDetector"
        for pattern in detector().denylist
    }
    ours = load_patterns()
    assert {(d.pattern.pattern, d.pattern.flags) for d in ours.detectors} == theirs
    assert len(ours.detectors) == len(theirs) > 40
    keywords = {**keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP, keyword.FOLLOWED_BY_EQUAL_SIGNS_REGEX: 5}
    assert [(k.pattern.pattern, k.pattern.flags, k.group) for k in ours.keywords] == [
        (p.pattern, p.flags, g) for p, g in keywords.items()
    ]
    assert [k.unquoted for k in ours.keywords].count(True) == 1 and ours.keywords[-1].unquoted


@pytest.mark.parametrize("name", FILTERS)
@pytest.mark.parametrize("value", EDGE_VALUES)
def test_restated_filters_agree_with_detect_secrets_on_edge_values(name, value):
    assert getattr(secret_filters, name)(value) == getattr(heuristic, name)(value)


@settings(max_examples=400, deadline=None)
@given(value=st.one_of(secret_like, from_alphabets))
def test_restated_filters_agree_with_detect_secrets_on_any_value(value):
    for name in FILTERS:
        assert getattr(secret_filters, name)(value) == getattr(heuristic, name)(value), name


def _jwt_part(value) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


JWT_CASES = [
    f"{_jwt_part({'alg': 'HS256'})}.{_jwt_part({'sub': '1'})}.c2lnbmF0dXJl",
    f"{_jwt_part({'alg': 'HS256'})}.{_jwt_part({'sub': '12'})}.abc",
    f"{_jwt_part({'alg': 'HS256'})}.bm90IGpzb24.sig",
    f"{_jwt_part({'a': 'é'})}.{_jwt_part([1])}",
    "eyJhbGciOi.e30.x",
    "a.b.c",
    "abcde.e30",
    "",
    ".",
    "é.e30",
    "eyJ9.e30.Zm9v",
]


@pytest.mark.parametrize("token", JWT_CASES)
def test_restated_jwt_check_agrees_with_detect_secrets(token):
    assert secret_filters.is_formally_valid_jwt(token) == JwtTokenDetector.is_formally_valid(token)


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(
        st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=é", max_size=24),
        min_size=1,
        max_size=4,
    )
)
def test_restated_jwt_check_agrees_on_generated_tokens(parts):
    token = ".".join(parts)
    assert secret_filters.is_formally_valid_jwt(token) == JwtTokenDetector.is_formally_valid(token)


@requires_real_corpus
def test_restated_filters_agree_on_real_corpus_lines():
    lines = [
        line[:300]
        for path in real_files("*/**/*.jsonl")[:40]
        for line in path.read_text(errors="replace").splitlines()[:50]
    ]
    assert len(lines) > 500
    for line in lines:
        for name in FILTERS:
            assert getattr(secret_filters, name)(line) == getattr(heuristic, name)(line), name
        for word in line.split()[:20]:
            assert secret_filters.is_sequential_string(word) == heuristic.is_sequential_string(word)
            assert secret_filters.is_templated_secret(word) == heuristic.is_templated_secret(word)
