"""Hypothesis and blocker text: case, punctuation, stop words and word forms folded.

Prose is compared as bags of content words. Each word is lower-cased, split out of
identifiers (`cache_key`, `cacheKey`), reduced to a crude stem, and mapped through a small table
of everyday synonyms (`db` / `database`, `absent` / `missing`). Hedges and meta words
(`I think`, `the hypothesis is`, `blocked by`) are stop words: they say how the agent holds an
idea, not what the idea is. Negations and words of absence (`not`, `no`, `never`, `without`,
`missing`, `lacks`) are kept, folded into one word, because they flip meaning.
"""

import math
import re
from collections.abc import Sequence
from typing import Final

from obelisk_session_evidence.comparators.paths import mask_volatile

_STOP_WORDS: Final = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "so",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "over",
        "under",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "done",
        "doing",
        "have",
        "has",
        "had",
        "having",
        "it",
        "its",
        "it's",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "than",
        "too",
        "very",
        "can",
        "will",
        "would",
        "should",
        "could",
        "may",
        "might",
        "must",
        "shall",
        "i",
        "me",
        "my",
        "we",
        "us",
        "our",
        "you",
        "your",
        "he",
        "she",
        "they",
        "them",
        "their",
        "also",
        "just",
        "now",
        "still",
        "again",
        "already",
        "yet",
        "about",
        "above",
        "below",
        "after",
        "before",
        "during",
        "while",
        "up",
        "down",
        "out",
        "off",
        "once",
        "further",
        "let",
        "lets",
        "let's",
        "try",
        "trying",
        "tried",
        "check",
        "checking",
        "see",
        "seeing",
        "look",
        "looks",
        "looking",
        "seems",
        "seem",
        "appears",
        "appear",
        "maybe",
        "perhaps",
        "probably",
        "likely",
        "possibly",
        "think",
        "thinking",
        "thought",
        "guess",
        "suspect",
        "believe",
        "hypothesis",
        "hypothesize",
        "theory",
        "idea",
        "problem",
        "issue",
        "cause",
        "caused",
        "causes",
        "causing",
        "because",
        "due",
        "reason",
        "blocked",
        "blocker",
        "blocking",
        "blocks",
        "actually",
        "really",
        "currently",
        "something",
        "somewhere",
        "thing",
        "things",
        "get",
        "gets",
        "got",
        "make",
        "makes",
        "making",
        "made",
        "need",
        "needs",
        "needed",
        "use",
        "uses",
        "using",
        "used",
        "one",
        "py",
        "js",
        "ts",
        "go",
        "rs",
        "md",
        "json",
        "yaml",
        "yml",
        "toml",
        "txt",
        "sh",
        "cfg",
        "ini",
        "lock",
    ]
)
_SYNONYMS: Final = {
    # Negations and absence fold together: "has no X", "lacks X", "X is missing", "X is not set".
    **dict.fromkeys(
        ["not", "no", "never", "none", "without", "missing", "absent", "lack", "lacks", "lacking", "lacked", "unset"],
        "not",
    ),
    **dict.fromkeys(
        [
            "fail",
            "fails",
            "failing",
            "failed",
            "failure",
            "failures",
            "broken",
            "breaks",
            "break",
            "breaking",
            "crash",
            "crashes",
            "crashed",
            "crashing",
        ],
        "fail",
    ),
    **dict.fromkeys(["error", "errors", "exception", "exceptions"], "error"),
    **dict.fromkeys(
        ["timeout", "timeouts", "hang", "hangs", "hanging", "hung", "stall", "stalls", "stalled"], "timeout"
    ),
    **dict.fromkeys(["wrong", "incorrect", "invalid", "bad"], "wrong"),
    **dict.fromkeys(["cannot", "unable"], "cannot"),
    **dict.fromkeys(["db", "database", "databases"], "database"),
    **dict.fromkeys(["config", "configs", "configuration", "configurations", "cfg"], "config"),
    **dict.fromkeys(["env", "envs", "environment", "environments"], "env"),
    **dict.fromkeys(["repo", "repos", "repository", "repositories"], "repository"),
    **dict.fromkeys(["dir", "dirs", "directory", "directories", "folder", "folders"], "directory"),
    **dict.fromkeys(["dep", "deps", "dependency", "dependencies"], "dependency"),
    **dict.fromkeys(["auth", "authn", "authentication"], "auth"),
    **dict.fromkeys(["creds", "credential", "credentials"], "credential"),
    **dict.fromkeys(["perm", "perms", "permission", "permissions"], "permission"),
    **dict.fromkeys(["param", "params", "parameter", "parameters", "arg", "args", "argument", "arguments"], "argument"),
    **dict.fromkeys(["func", "fn", "function", "functions"], "function"),
    **dict.fromkeys(["ignore", "ignores", "ignored", "ignoring", "disregard", "disregards"], "ignore"),
}
_CONTRACTIONS: Final = (
    (re.compile(r"\bcan't\b|\bcan not\b"), "cannot"),
    (re.compile(r"\bwon't\b"), "will not"),
    (re.compile(r"n't\b"), " not"),
    (re.compile(r"'(?:s|re|ve|ll|d|m)\b"), ""),
    (re.compile(r"\btimed out\b|\btime out\b"), "timeout"),
)
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD: Final = re.compile(r"<[a-z]+>|[A-Za-z0-9]+|(?<![<\w])(?:<=|>=|==|!=|<|>)(?![\w>])")
# A spaced dash is tried only where whitespace starts (after a non-space, or spaces after a line
# break): tried from every space of a long run, `\s+[-–—]` rescanned the run (quadratic).
_SENTENCE_BREAK: Final = re.compile(r"(?<=[.!?])\s+|\n+|;\s+|(?<!\s)\s+[-–—]\s+|(?<=\n)[ \t]*[-–—]\s+")
_WINDOW_EXTRA: Final = 2
"""Windows run from one word shorter to this many words longer than the needle."""


def text_tokens(text: str) -> tuple[str, ...]:
    """Content words of `text`, folded: the form both sides of a text comparison take."""
    text = _CAMEL.sub(" ", mask_volatile(text))
    text = text.lower()
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    words: list[str] = []
    for word in _WORD.findall(text.replace("_", " ")):
        if word in _STOP_WORDS or (len(word) < 2 and word.isalpha()):
            continue
        folded = _SYNONYMS.get(word) or _SYNONYMS.get(_stem(word)) or _stem(word)
        if folded not in _STOP_WORDS:
            words.append(folded)
    return tuple(words)


def sentences(text: str) -> list[str]:
    """`text` cut at sentence ends, line breaks, semicolons and dashes."""
    return [part for part in _SENTENCE_BREAK.split(text) if part.strip()]


def text_similarity(needle: Sequence[str], haystack: str, *, score_cutoff: int = 0) -> int:
    """0–100: how closely some stretch of `haystack` says what the `needle` words say.

    Scorer `fuzz.token_sort_ratio` (word order does not matter), `processor=None` (both sides
    are already folded by `text_tokens`), over windows of the haystack's sentences about the
    needle's length. Windows sharing fewer than half the needle's words are never scored: that
    prefilter keeps the cost to a handful of short comparisons per item.
    """
    if not needle:
        return 0
    wanted = set(needle)
    size = len(needle)
    min_shared = max(1, math.ceil(len(wanted) / 2))
    windows: set[str] = set()
    for sentence in sentences(haystack):
        words = text_tokens(sentence)
        if len(wanted.intersection(words)) < min_shared:
            continue
        if len(words) <= size + _WINDOW_EXTRA:
            windows.add(" ".join(words))
            continue
        for width in range(max(1, size - 1), size + _WINDOW_EXTRA + 1):
            for start in range(len(words) - width + 1):
                window = words[start : start + width]
                if len(wanted.intersection(window)) >= min_shared:
                    windows.add(" ".join(window))
    if not windows:
        return 0
    from rapidfuzz import fuzz, process  # here: a `run` that compares nothing skips it

    best = process.extractOne(
        " ".join(needle),
        sorted(windows),
        scorer=fuzz.token_sort_ratio,
        processor=None,
        score_cutoff=score_cutoff,
    )
    return 0 if best is None else round(best[1])


def _stem(word: str) -> str:
    """A compact Porter-style stem: `ignores`, `ignored`, `ignoring` and `ignore` all give `ignor`.

    Plurals and verb endings (Porter step 1), a few derivational endings (`verification` and
    `verified` both reach `verifi`) and a final `e`. Crude, but the same on both sides.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in _DERIVATIONAL:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + replacement
            break
    if word.endswith("sses") or word.endswith("ies") and len(word) > 4:
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        word = word[:-1]
    for suffix in ("ing", "ed"):
        stem = word[: len(word) - len(suffix)]
        if word.endswith(suffix) and len(stem) >= 3 and _VOWEL.search(stem):
            if stem.endswith(("at", "bl", "iz")):
                stem += "e"
            elif stem[-1] == stem[-2] and stem[-1] not in "lsz":
                stem = stem[:-1]
            word = stem
            break
    if word.endswith("y") and len(word) > 3 and _VOWEL.search(word[:-1]):
        word = word[:-1] + "i"
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


_VOWEL: Final = re.compile(r"[aeiou]")
_DERIVATIONAL: Final = (
    ("ational", "ate"),
    ("ication", "y"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("fulness", "ful"),
    ("iveness", "ive"),
    ("ness", ""),
    ("ement", ""),
    ("ment", ""),
)
