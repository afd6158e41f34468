"""Query text to FTS5 MATCH syntax: every term is data, never syntax.

`quote_fts_string` is the one escaping function: the text goes inside an FTS5 string (double
quotes, inner quotes doubled), where the operators `AND OR NOT NEAR`, `*` prefixes, `^` anchors,
`column:` filters, parentheses and `+`/`-` are ordinary characters that the tokenizer drops or
splits on. NUL ends an FTS5 string early ("unterminated string"), and other control characters are
never tokens, so each becomes a space: the tokens on either side still match, as they would in
the indexed text. The whole query is then bound as one SQL parameter.
"""

import itertools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

MAX_PHRASES: Final = 64
"""Upper bound on the phrases of one query (24 terms of up to 256 characters could make hundreds)."""
MAX_PHRASE_TOKENS: Final = 16
"""Longest whole term kept as one phrase (`pytest tests/test_auth.py -x` has 6 tokens)."""
PATH_TAIL_PARTS: Final = 3
"""Components of a path kept in its phrase: enough to tell `lib/auth/token.py` from `tests/…/token.py`."""
MAX_CALL_SUBJECTS: Final = 8
"""Subject words of one command kept for its call lane (longest first)."""
_SEGMENT_BREAK: Final = re.compile(r"&&|\|\||[;|\n()]")
_ASCII_TOKEN: Final = re.compile(r"[A-Za-z0-9]+")
"""unicode61's tokens in ASCII text: its letters and digits are the only ASCII token characters."""
_PROGRAM: Final = re.compile(r"^[a-z0-9_.][a-z0-9_.+-]*$")
_ENV_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIX_PROGRAMS: Final = frozenset({"cd", "source", ".", "export", "sudo", "env", "time", "nohup", "exec"})
"""Programs that set up the one that runs: a call's program is the first segment's program past these."""


@dataclass(frozen=True, slots=True)
class CallShape:
    """What a proposed command looks like to the call lanes: its key, program and subjects."""

    key: str
    """Its `command_key`: the same for an exact repeat."""
    program: str
    """The program that runs (`pytest` for `cd app && .venv/bin/pytest tests -x`)."""
    subjects: tuple[str, ...]
    """Its other non-flag words (paths cut to their tail), longest first: what the program acted on."""


def quote_fts_string(text: str) -> str:
    """`text` as one FTS5 string literal: `"…"` with `"` doubled and control characters as spaces."""
    cleaned = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)
    return '"' + cleaned.replace('"', '""') + '"'


def query_phrases(terms: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`(term phrases, word phrases)`: each whole term, then each distinct word of the terms.

    Text is case-folded and whitespace-collapsed (the tokenizer folds case anyway); text without a
    token is dropped (it could only match nothing); a path keeps its last components (`path_tail`).
    A term of more than `MAX_PHRASE_TOKENS` tokens (a commit message, a multi-line script) is left
    to its words: as one phrase it would cost a pass over every one of its tokens' postings twice,
    and an exact repeat still holds all of its words. Words are longest first: they are the rarer,
    more telling ones when a cap cuts the list.
    """
    phrases: dict[str, None] = {}
    words: dict[str, None] = {}
    for term in terms:
        if has_token(term) and len(token_words(term)) <= MAX_PHRASE_TOKENS:
            phrases.setdefault(path_tail(" ".join(term.split())).casefold(), None)
        for word in term.split():
            if has_token(word):
                words.setdefault(path_tail(word).casefold(), None)
    ordered = [word for word in sorted(words, key=len, reverse=True) if word not in phrases]
    return tuple(phrases), tuple(ordered)


def fts_query(phrases: Sequence[str]) -> str | None:
    """The OR of `phrases`, each one FTS5 string (a phrase of its tokens); None when there is none.

    Whole-term phrases rank exact repeats first (`pytest tests/test_auth.py -x` matches its tokens
    in order); word phrases keep paraphrases as candidates, since the comparator re-scores every
    candidate and recall matters more than precision at this stage.
    """
    chosen = list(dict.fromkeys(phrase for phrase in phrases if has_token(phrase)))[:MAX_PHRASES]
    return " OR ".join(quote_fts_string(phrase) for phrase in chosen) if chosen else None


def path_tail(text: str) -> str:
    """A path (no whitespace, a `/`) cut to its last `PATH_TAIL_PARTS` components, else `text`.

    Histories record absolute paths (`/home/me/src/app/lib/auth/token.py`) where a situation names
    repository paths (`lib/auth/token.py`); the tail matches both as a phrase, and it leaves out
    the checkout's own prefix, whose tokens are in nearly every row and make a phrase slow.
    """
    if "/" not in text or any(ch.isspace() for ch in text):
        return text
    parts = [part for part in text.split("/") if part]
    return "/".join(parts[-PATH_TAIL_PARTS:]) if len(parts) > PATH_TAIL_PARTS else text


def is_weak_word(word: str) -> bool:
    """True when every token of `word` is one character or only digits (`-x`, `2>&1`, `-20`): such a
    word matches a large share of any history and says little on its own."""
    return all(len(token) < 2 or token.isdigit() for token in token_words(word))


def has_token(text: str) -> bool:
    """True when the unicode61 tokenizer finds at least one token (a letter, digit or private-use char)."""
    return any(unicodedata.category(ch)[0] in "LN" or unicodedata.category(ch) == "Co" for ch in text)


def token_words(text: str, limit: int | None = None) -> list[str]:
    """The lower-cased tokens unicode61 would make of `text` (letters and digits; all else separates),
    the first `limit` of them when given. ASCII text (nearly every command) takes one regex pass."""
    if text.isascii():
        if limit is None:
            return [token.lower() for token in _ASCII_TOKEN.findall(text)]
        return [match.group().lower() for match in itertools.islice(_ASCII_TOKEN.finditer(text), limit)]
    return _unicode_token_words(text, limit)


def _unicode_token_words(text: str, limit: int | None) -> list[str]:
    """`token_words` character by character, by Unicode category (L*, N* and Co are token characters)."""
    tokens, current = [], []
    for ch in text.casefold():
        if unicodedata.category(ch)[0] in "LN" or unicodedata.category(ch) == "Co":
            current.append(ch)
        elif current:
            tokens.append("".join(current))
            current = []
            if len(tokens) == limit:
                return tokens
    if current:
        tokens.append("".join(current))
    return tokens


def call_shape(term: str) -> CallShape | None:
    """The call lanes' reading of a query term, or None when it does not read as a command.

    A command has at least two words and a program (`program_of`): a hypothesis (`Token expiry is
    off by one`) and an id (`surface-auth`) are not commands.
    """
    words = term.split()
    program = program_of(term) if len(words) >= 2 else None
    if program is None:
        return None
    subjects: dict[str, None] = {}
    for word in words:
        word = word.strip("\"'`$(){}")
        tail, name = path_tail(word).casefold(), word.rsplit("/", 1)[-1].casefold()
        if word.startswith("-") or _ENV_ASSIGNMENT.match(word) or not has_token(word) or is_weak_word(word):
            continue
        if name == program or name in _PREFIX_PROGRAMS:
            continue
        subjects.setdefault(tail, None)
    ordered = tuple(sorted(subjects, key=len, reverse=True)[:MAX_CALL_SUBJECTS])
    return CallShape(command_key(term) or "", program, ordered)


def program_of(command: str) -> str | None:
    """The program a shell command runs: the first segment's first word past environment
    assignments and set-up programs (`cd …`, `source …`, `sudo`, …), as a base name; None when
    that word is not a program name (lower-case, no quotes or spaces)."""
    for segment in _SEGMENT_BREAK.split(command):
        parts = [word for word in segment.split() if not _ENV_ASSIGNMENT.match(word)]
        if not parts:
            continue
        name = parts[0].rsplit("/", 1)[-1]
        if name in _PREFIX_PROGRAMS:
            continue
        return name if _PROGRAM.match(name) and has_token(name) else None
    return None


def command_key(command: str) -> str | None:
    """A command's first `MAX_PHRASE_TOKENS` tokens, space-joined: the same for a byte-for-byte
    repeat and for one that differs only in spacing, quoting or case. None without a token."""
    return " ".join(token_words(command, MAX_PHRASE_TOKENS)) or None
