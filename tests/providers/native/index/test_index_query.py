"""`search_sql` builds exactly this SQL; `search` ranks, scopes and deduplicates with it."""

import time

import pytest

from providers.native.index.query import (
    ScopeFilter,
    probe_cap,
    probe_sql,
    search,
    search_sql,
    selective_phrases,
)
from providers.native.index.store import atomic

FULL_SCOPE = ScopeFilter(
    source_roots=(("claude", "/h/.claude/projects"),),
    repo_roots=("/w/repo",),
    identities=("rootcommit:ab",),
    url_keys=("github.com/o/r",),
    checkouts=("/w/repo",),
    enclosing=("/w",),
    remotes_known=True,
)

EXPECTED_SQL = """WITH hits AS MATERIALIZED (
SELECT e.id AS id, s.source AS source, e.kind AS kind, e.uid AS uid, bm25("entry_text", :command_weight, :body_weight, :detail_weight) * (1.0 + :recency_weight * max(0.0, 1.0 - (:now - coalesce(e.observed_epoch, 0.0)) / :recency_horizon)) AS score
FROM "entry_text"
JOIN "entries" AS e ON e.id = "entry_text".rowid
JOIN "sessions" AS s ON s.id = e.session_row
JOIN "files" AS f ON f.id = e.file_id
WHERE "entry_text" MATCH :match
  AND e.evidence_type IN (:evidence_type_0, :evidence_type_1)
  AND ((f.source = :source_0 AND substr(f.path, 1, length(:source_root_0)) = :source_root_0))
  AND ((s.repository_url_key IS NULL OR s.repository_url_key IN (:url_0)) AND (s.checkout_root IN (:checkout_0) OR s.repository_identity IN (:identity_0) OR ((s.checkout_root IS NULL OR s.checkout_root IN (:enclosing_0)) AND (s.cwd = :repo_root_0 OR substr(s.cwd, 1, length(:repo_prefix_0)) = :repo_prefix_0)) OR (s.checkout_root IS NULL AND s.repository_url_key IN (:url_0))))
), best AS MATERIALIZED (
SELECT id, min(score) AS score FROM hits GROUP BY source, kind, uid
)
SELECT e.id, e.kind, e.uid, e.evidence_type, e.tool_name, e.exit_code, e.is_error, e.observed_at, s.source, s.session_id, s.cwd, s.checkout_root, s.repository_identity, s.repository_url_key, s.git_commit, f.path, t.command, t.body, t.detail, b.score, (SELECT count(*) FROM best) AS total
FROM (SELECT id, score FROM best ORDER BY score, id LIMIT :limit) AS b
JOIN "entries" AS e ON e.id = b.id
JOIN "sessions" AS s ON s.id = e.session_row
JOIN "files" AS f ON f.id = e.file_id
JOIN "entry_text" AS t ON t.rowid = b.id
ORDER BY b.score, b.id"""


def test_search_sql():
    query = search_sql('"a"', FULL_SCOPE, evidence_types=["prior_failure", "decision"], limit=50, now=1000.0)
    assert query.sql == EXPECTED_SQL
    assert query.params == {
        "match": '"a"',
        "evidence_type_0": "prior_failure",
        "evidence_type_1": "decision",
        "source_0": "claude",
        "source_root_0": "/h/.claude/projects/",
        "repo_root_0": "/w/repo",
        "repo_prefix_0": "/w/repo/",
        "identity_0": "rootcommit:ab",
        "url_0": "github.com/o/r",
        "checkout_0": "/w/repo",
        "enclosing_0": "/w",
        "command_weight": 4.0,
        "body_weight": 1.0,
        "detail_weight": 0.0,
        "recency_weight": 0.5,
        "recency_horizon": 90 * 86400.0,
        "now": 1000.0,
        "limit": 50,
    }


def test_search_sql_fails_closed_without_scope():
    """No agent roots or no repository binding: the predicates are `0`, so nothing can match."""
    query = search_sql('"a"', ScopeFilter(source_roots=(), repo_roots=()), evidence_types=[], limit=5, now=1.0)
    assert '"entry_text" MATCH :match\n  AND 0\n  AND 0\n  AND 0\n)' in query.sql


def test_search_sql_binds_every_value():
    scope = ScopeFilter(source_roots=(("claude", "/it's/\"quoted\""),), repo_roots=("/r'; DROP TABLE files; --",))
    query = search_sql("\"x\"", scope, evidence_types=["decision"], limit=1, now=0.0)
    assert "DROP" not in query.sql and "it's" not in query.sql
    assert query.params["repo_root_0"] == "/r'; DROP TABLE files; --"


def test_probe_sql():
    query = probe_sql("tests/a.py", cap=200)
    assert query.sql == 'SELECT count(*) FROM (SELECT 1 FROM "entry_text" WHERE "entry_text" MATCH :match LIMIT :cap)'
    assert query.params == {"match": '"tests/a.py"', "cap": 200}


def test_probe_cap_grows_with_the_index_within_bounds(fresh_index):
    assert probe_cap(fresh_index) == 200


def test_selective_phrases_drops_common_absent_and_weak_words(fresh_index):
    _rows(fresh_index, [("message", f"common word number {n}") for n in range(5)] + [("message", "rare word")])
    assert selective_phrases(fresh_index, ["common", "rare", "absent", "-x"], cap=3) == ["rare"]


SCOPE = ScopeFilter(source_roots=(("claude", "/root"),), repo_roots=("/repo",))


def test_search_ranks_commands_above_mentions_and_counts_all_matches(fresh_index):
    _rows(
        fresh_index,
        [
            ("message", "we might run pytest later"),
            ("tool_call", "", "pytest tests/test_auth.py -x"),
            ("message", "nothing relevant"),
        ],
    )
    found = search(fresh_index, search_sql('"pytest"', SCOPE, evidence_types=["decision", "tool_outcome"], limit=1, now=0.0))
    assert [row.kind for row in found.rows] == ["tool_call"]
    assert found.total == 2


def test_search_prefers_recent_rows_on_equal_text(fresh_index):
    _rows(fresh_index, [("message", "same words here", "", 0.0), ("message", "same words here", "", 1000.0)])
    query = search_sql('"same words"', SCOPE, evidence_types=["decision"], limit=5, now=1000.0)
    assert [row.uid for row in search(fresh_index, query).rows] == ["u2", "u1"]


def test_search_filters_evidence_types_in_sql(fresh_index):
    _rows(fresh_index, [("message", "alpha"), ("tool_call", "", "alpha")])
    query = search_sql('"alpha"', SCOPE, evidence_types=["tool_outcome"], limit=5, now=0.0)
    assert [row.evidence_type for row in search(fresh_index, query).rows] == ["tool_outcome"]


def test_search_returns_one_copy_of_a_record_found_in_two_files(fresh_index):
    _rows(fresh_index, [("message", "copied text")], file_id=1)
    _rows(fresh_index, [("message", "copied text")], file_id=2)
    found = search(fresh_index, search_sql('"copied"', SCOPE, evidence_types=["decision"], limit=5, now=0.0))
    assert (len(found.rows), found.total) == (1, 1)


@pytest.mark.parametrize(
    ("file_path", "cwd", "found"),
    [
        ("/root/p/s.jsonl", "/repo", True),
        ("/root/p/s.jsonl", "/repo/sub/dir", True),
        ("/root/p/s.jsonl", "/repository", False),
        ("/root/p/s.jsonl", None, False),
        ("/rootless/p/s.jsonl", "/repo", False),
        ("/other/p/s.jsonl", "/repo", False),
    ],
)
def test_search_applies_agent_and_repository_scope_in_sql(fresh_index, file_path, cwd, found):
    _rows(fresh_index, [("message", "scoped words")], path=file_path, cwd=cwd)
    rows = search(fresh_index, search_sql('"scoped"', SCOPE, evidence_types=["decision"], limit=5, now=0.0)).rows
    assert bool(rows) is found


def _rows(connection, rows, *, file_id: int = 1, path: str | None = None, cwd: str | None = "/repo") -> None:
    """Rows of (kind, body[, command[, epoch]]) in one session of one file."""
    with atomic(connection):
        connection.execute(
            "INSERT INTO files (id, source, root, path, signature, device, inode, size, mtime_ns, ctime_ns, indexed_at)"
            " VALUES (?, 'claude', '/root', ?, 'sig', 0, 0, 0, 0, 0, 0)",
            (file_id, path or f"/root/p/{file_id}.jsonl"),
        )
        connection.execute(
            "INSERT INTO sessions (id, file_id, source, session_id, cwd) VALUES (?, ?, 'claude', 's', ?)",
            (file_id, file_id, cwd),
        )
        (last,) = connection.execute("SELECT coalesce(max(id), 0) FROM entries").fetchone()
        for number, (kind, body, *rest) in enumerate(rows, start=1):
            command = rest[0] if rest else ""
            epoch = rest[1] if len(rest) > 1 else time.time()
            evidence_type = "decision" if kind == "message" else "tool_outcome"
            connection.execute(
                "INSERT INTO entries (id, file_id, session_row, kind, uid, evidence_type, observed_epoch)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (last + number, file_id, file_id, kind, f"u{number}", evidence_type, epoch),
            )
            connection.execute(
                "INSERT INTO entry_text (rowid, command, body, detail) VALUES (?, ?, ?, '')", (last + number, command, body)
            )


def test_selective_phrases_stops_at_keep(fresh_index):
    _rows(fresh_index, [("message", "alpha beta gamma delta")])
    assert selective_phrases(fresh_index, ["alpha", "beta", "gamma", "delta"], cap=10, keep=2) == ["alpha", "beta"]
