"""The one FTS5 escaping function, the query it builds, and literal matching of hostile terms."""

import sqlite3
import time

import pytest

from obelisk_session_evidence.providers.native.index.fts import (
    CallShape,
    _unicode_token_words,
    call_shape,
    fts_query,
    is_weak_word,
    path_tail,
    query_phrases,
    quote_fts_string,
    token_words,
)
from obelisk_session_evidence.providers.native.index.query import (
    ScopeFilter,
    fetch_rows,
    plan_search,
    ranked_sql,
    search,
)
from obelisk_session_evidence.providers.native.index.schema import FTS_TOKENIZER
from obelisk_session_evidence.providers.native.index.store import atomic


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pytest", '"pytest"'),
        ('say "hi"', '"say ""hi"""'),
        ('"', '""""'),
        ('""', '""""""'),
        ("a*", '"a*"'),
        ("NEAR(a b)", '"NEAR(a b)"'),
        ("a AND b", '"a AND b"'),
        ("a OR b NOT c", '"a OR b NOT c"'),
        ("(x)", '"(x)"'),
        ("-x", '"-x"'),
        ("+x", '"+x"'),
        ("^start", '"^start"'),
        ("command:rm", '"command:rm"'),
        ("{command body}:x", '"{command body}:x"'),
        ("it's", '"it\'s"'),
        ("'; DROP TABLE entries; --", '"\'; DROP TABLE entries; --"'),
        ("a\x00b", '"a b"'),
        ("tab\there\nnewline", '"tab here newline"'),
        ("ünïcödé ✓", '"ünïcödé ✓"'),
    ],
)
def test_quote_fts_string(text, expected):
    assert quote_fts_string(text) == expected


@pytest.mark.parametrize(
    ("terms", "phrases", "words"),
    [
        (["pytest tests/test_auth.py -x"], ("pytest tests/test_auth.py -x",), ("tests/test_auth.py", "pytest", "-x")),
        (["Pytest", "pytest"], ("pytest",), ()),
        (["  spaced   out  "], ("spaced out",), ("spaced", "out")),
        (["&& || ;"], (), ()),
        (["/home/me/src/app/lib/auth/token.py"], ("lib/auth/token.py",), ()),
        (
            ["cat /home/me/src/app/lib/auth/token.py"],
            ("cat /home/me/src/app/lib/auth/token.py",),
            ("lib/auth/token.py", "cat"),
        ),
    ],
)
def test_query_phrases(terms, phrases, words):
    assert query_phrases(terms) == (phrases, words)


def test_fts_query_ors_quoted_phrases():
    assert fts_query(["pytest tests/test_auth.py -x", "pytest", '"quoted"']) == (
        '"pytest tests/test_auth.py -x" OR "pytest" OR """quoted"""'
    )


def test_fts_query_without_tokens_is_none():
    assert fts_query(["--", "&&", "()"]) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a/b", "a/b"), ("a/b/c/d", "b/c/d"), ("/x/y/z/w.py", "y/z/w.py"), ("a b/c/d/e", "a b/c/d/e"), ("plain", "plain")],
)
def test_path_tail(text, expected):
    assert path_tail(text) == expected


@pytest.mark.parametrize(
    ("word", "weak"), [("-x", True), ("2>&1", True), ("-20", True), ("pytest", False), ("tests/a.py", False)]
)
def test_is_weak_word(word, weak):
    assert is_weak_word(word) is weak


def test_token_words_split_like_unicode61():
    assert token_words("Tests/Test_Auth.py -x") == ["tests", "test", "auth", "py", "x"]


def test_ascii_token_words_agree_with_the_sqlite_tokenizer_on_every_ascii_character():
    connection = sqlite3.connect(":memory:")
    connection.execute(f"CREATE VIRTUAL TABLE t USING fts5 (c, tokenize = '{FTS_TOKENIZER}')")
    connection.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'row')")
    text = "".join(f"a{chr(code)}b{chr(code)}" for code in range(128))
    connection.execute("INSERT INTO t (c) VALUES (?)", (text,))
    vocabulary = {term for (term,) in connection.execute("SELECT term FROM v")}
    assert set(token_words(text)) == vocabulary
    assert token_words(text) == _unicode_token_words(text, None)


@pytest.mark.parametrize(
    "text",
    [
        "git commit -m 'Fix ß straße'",
        "ÉCOLE/Test_Ünï.py -x 2>&1",
        "pytest tests/test_auth.py -x",
        "",
        "--",
        "日本語 テスト a1",
    ],
)
@pytest.mark.parametrize("limit", [None, 1, 2, 16])
def test_token_words_ascii_path_equals_the_unicode_path(text, limit):
    assert token_words(text, limit) == _unicode_token_words(text, None)[:limit]
    assert token_words(text.encode("ascii", "ignore").decode(), limit) == _unicode_token_words(
        text.encode("ascii", "ignore").decode(), limit
    )


HOSTILE_TERMS = [
    '"',
    'say "hi"',
    "*",
    "auth*",
    "NEAR(alpha beta)",
    "alpha AND beta",
    "alpha OR beta",
    "NOT alpha",
    "(alpha)",
    "-x",
    "--",
    "'",
    "it's",
    "'; DROP TABLE entries; --",
    "a\x00b",
    "command:alpha",
    "^alpha",
    "{command}: alpha",
]


@pytest.mark.parametrize("term", HOSTILE_TERMS)
def test_search_matches_hostile_terms_literally(fresh_index, term):
    """Every hostile term runs without an FTS5 syntax error and finds the row quoting it, nothing else."""
    quoting = f"before {term} after"
    _index_texts(fresh_index, [quoting, "unrelated words only"])
    match = fts_query([term])
    if match is None:
        assert not token_words(term)
        return
    assert _bodies(fresh_index, match) == [quoting]
    assert fresh_index.execute("SELECT count(*) FROM entries").fetchone() == (2,)


@pytest.mark.parametrize("term", HOSTILE_TERMS)
def test_call_lanes_read_hostile_commands_literally(fresh_index, term):
    """A hostile word inside a command reaches the call lanes' column queries as data, never syntax."""
    _index_texts(fresh_index, ["unrelated words only"])
    plan = plan_search(fresh_index, [f"git commit {term}"])
    found = search(fresh_index, plan, SCOPE, evidence_types=["decision", "tool_outcome"], limit=5, front=2, now=0.0)
    assert found.rows == []


def test_search_does_not_treat_near_as_an_operator(fresh_index):
    _index_texts(fresh_index, ["alpha then many many many words beta", "near alpha beta"])
    assert _bodies(fresh_index, fts_query(["NEAR(alpha beta)"])) == ["near alpha beta"]


def test_search_phrase_keeps_flag_and_path_literal(fresh_index):
    _index_texts(fresh_index, ["ran pytest tests/test_auth.py -x and it failed", "ran pytest -x tests/test_auth.py"])
    assert _bodies(fresh_index, fts_query(["pytest tests/test_auth.py -x"])) == [
        "ran pytest tests/test_auth.py -x and it failed"
    ]


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("pytest tests/test_auth.py -x", CallShape("pytest tests test auth py x", "pytest", ("tests/test_auth.py",))),
        (
            "cd app && FOO=1 .venv/bin/pytest -q tests",
            CallShape("cd app foo 1 venv bin pytest q tests", "pytest", ("tests", "app")),
        ),
        (
            "git add -A && git commit -m 'feat: x'",
            CallShape("git add a git commit m feat x", "git", ("commit", "feat:", "add")),
        ),
        ("Token expiry is off by one", None),
        ("surface-auth", None),
        ("cd /tmp", None),
    ],
)
def test_call_shape_finds_the_program_past_prefixes_and_keeps_subjects(term, expected):
    assert call_shape(term) == expected


SCOPE = ScopeFilter(source_roots=(("claude", "/root"),), repo_roots=("/repo",))


def _bodies(connection, match: str) -> list[str]:
    """The bodies the ranked pass finds for `match`, best first."""
    query = ranked_sql(match, SCOPE, evidence_types=["decision"], bound=10, now=time.time())
    ids = [row[0] for row in connection.execute(query.sql, query.params)]
    rows = fetch_rows(connection, ids)
    return [rows[i].body for i in ids]


def _index_texts(connection, texts: list[str]) -> None:
    """One session in scope holding one decision message per text."""
    _index_texts.texts = texts
    with atomic(connection):
        connection.execute(
            "INSERT INTO files (id, source, root, path, signature, device, inode, size, mtime_ns, ctime_ns, indexed_at)"
            " VALUES (1, 'claude', '/root', '/root/p/s.jsonl', 'sig', 0, 0, 0, 0, 0, 0)"
        )
        connection.execute(
            "INSERT INTO sessions (id, file_id, source, session_id, cwd) VALUES (1, 1, 'claude', 's', '/repo')"
        )
        for number, text in enumerate(texts, start=1):
            connection.execute(
                "INSERT INTO entries (id, file_id, session_row, kind, uid, evidence_type) VALUES (?, 1, 1, 'message', ?, 'decision')",
                (number, f"m{number}"),
            )
            connection.execute(
                "INSERT INTO entry_text (rowid, command, body, detail) VALUES (?, '', ?, '')", (number, text)
            )
