"""Hypothesis and blocker text: tables of repeat, paraphrase and novel pairs."""

import pytest

from obelisk_session_evidence.comparators.text import text_similarity, text_tokens

REPEATS = [
    ("The cache key ignores the locale", "The cache key ignores the locale."),
    ("Staging database credentials are missing", "staging database credentials are missing"),
]
PARAPHRASES = [
    ("The cache key ignores the locale", "I think the problem is that the cache key ignores locale, so let me check."),
    ("The cache key ignores the locale", "Hypothesis: locale is ignored by the cache key."),
    ("Staging database credentials are missing from the vault", "Blocked: the vault lacks the staging DB credentials"),
    ("parser fails on unicode input", "Tried it: the parser breaks for unicode inputs. It did not help."),
    ("The CI runner can't reach the package index", "Blocked because the CI runner cannot reach the package index"),
    ("Request times out behind the proxy", "The request timed out behind the proxy again"),
]
NOVEL = [
    ("The cache key ignores the locale", "The cache key ignores the timezone."),
    ("parser fails on unicode input", "The parser fails on empty input."),
    (
        "Staging database credentials are missing from the vault",
        "Blocked: the CI runner cannot reach the staging database",
    ),
    ("The retry loop never backs off", "The cache key ignores the locale."),
    ("The cache key ignores the locale", ""),
]


@pytest.mark.parametrize(("needle", "haystack"), REPEATS + PARAPHRASES)
def test_text_similarity_repeat_and_paraphrase_reach_90(needle: str, haystack: str) -> None:
    assert text_similarity(text_tokens(needle), haystack) >= 90


@pytest.mark.parametrize(("needle", "haystack"), NOVEL)
def test_text_similarity_novel_stays_under_85(needle: str, haystack: str) -> None:
    assert text_similarity(text_tokens(needle), haystack) < 85


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Cache-Key IGNORES locale!", ("cach", "key", "ignore", "local")),
        ("cacheKey is not set", ("cach", "key", "not", "set")),
        ("We can't find the DB config", ("cannot", "find", "database", "config")),
        ("The vault has no credentials", ("vault", "not", "credential")),
        ("verified, verifies, verification", ("verifi", "verifi", "verifi")),
        ("expiry uses <= instead of <", ("expiri", "<=", "instead", "<")),
        ("I think maybe it is the problem", ()),
    ],
)
def test_text_tokens_fold_case_punctuation_stop_words(text: str, expected: tuple[str, ...]) -> None:
    assert text_tokens(text) == expected


def test_text_similarity_empty_needle_is_0() -> None:
    assert text_similarity((), "anything at all") == 0


def test_text_similarity_score_cutoff_returns_0_below_it() -> None:
    assert text_similarity(text_tokens("cache key ignores locale"), "cache key ignores timezone", score_cutoff=95) == 0
