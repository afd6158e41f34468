"""`plan_search` probes every phrase; `search` runs bounded lanes and a ranked pass, scoped in SQL."""

import time

import pytest

from obelisk_session_evidence.providers.native.index.fts import command_key, program_of
from obelisk_session_evidence.providers.native.index.lanes import CALL_LANE_ROWS, LANE_WALK, SESSION_WINDOW
from obelisk_session_evidence.providers.native.index.query import (
    COMMON_TERM_ROWS,
    MIN_PROBE_ROWS,
    RANKED_ROWS,
    ScopeFilter,
    plan_search,
    probe_cap,
    probe_sql,
    ranked_sql,
    search,
    selective_phrases,
)
from obelisk_session_evidence.providers.native.index.store import atomic

FULL_SCOPE = ScopeFilter(
    source_roots=(("claude", "/h/.claude/projects"),),
    repo_roots=("/w/repo",),
    identities=("rootcommit:ab",),
    url_keys=("github.com/o/r",),
    checkouts=("/w/repo",),
    enclosing=("/w",),
    remotes_known=True,
)

EXPECTED_SQL = """SELECT e.id, s.source, e.kind, e.uid FROM "entry_text"
JOIN "entries" AS e ON e.id = "entry_text".rowid
JOIN "sessions" AS s ON s.id = e.session_row
JOIN "files" AS f ON f.id = e.file_id
WHERE "entry_text" MATCH :match
  AND e.evidence_type IN (:evidence_type_0, :evidence_type_1)
  AND ((f.source = :source_0 AND substr(f.path, 1, length(:source_root_0)) = :source_root_0))
  AND ((s.repository_url_key IS NULL OR s.repository_url_key IN (:url_0)) AND (s.checkout_root IN (:checkout_0) OR s.repository_identity IN (:identity_0) OR ((s.checkout_root IS NULL OR s.checkout_root IN (:enclosing_0)) AND (s.cwd = :repo_root_0 OR substr(s.cwd, 1, length(:repo_prefix_0)) = :repo_prefix_0)) OR (s.checkout_root IS NULL AND s.repository_url_key IN (:url_0))))
  AND NOT EXISTS (SELECT 1 FROM call_details AS place WHERE place.entry_id = e.id AND place.checkout_root IS NOT NULL AND NOT (place.checkout_root IN (:place_checkout_0) OR place.repository_identity IN (:place_identity_0) OR (place.checkout_root IN (:place_enclosing_0) AND (place.cwd = :place_root_0 OR substr(place.cwd, 1, length(:place_prefix_0)) = :place_prefix_0))))
  AND NOT EXISTS (SELECT 1 FROM "sessions" AS twin JOIN "files" AS twin_file ON twin_file.id = twin.file_id WHERE twin.source = s.source AND twin.session_id = s.session_id AND twin_file.id != f.id AND NOT ((twin_file.source = :source_0 AND substr(twin_file.path, 1, length(:source_root_0)) = :source_root_0)))
ORDER BY bm25("entry_text", :command_weight, :body_weight, :detail_weight) * (1.0 + :recency_weight * max(0.0, 1.0 - (:now - coalesce(e.observed_epoch, 0.0)) / :recency_horizon)), e.id LIMIT :bound"""


def test_ranked_sql():
    query = ranked_sql('"a"', FULL_SCOPE, evidence_types=["prior_failure", "decision"], bound=50, now=1000.0)
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
        "place_checkout_0": "/w/repo",
        "place_identity_0": "rootcommit:ab",
        "place_enclosing_0": "/w",
        "place_root_0": "/w/repo",
        "place_prefix_0": "/w/repo/",
        "command_weight": 4.0,
        "body_weight": 1.0,
        "detail_weight": 0.0,
        "recency_weight": 0.5,
        "recency_horizon": 90 * 86400.0,
        "now": 1000.0,
        "bound": 50,
    }


def test_ranked_sql_fails_closed_without_scope():
    query = ranked_sql('"a"', ScopeFilter(source_roots=(), repo_roots=()), evidence_types=[], bound=5, now=0.0)
    assert "AND 0\n  AND 0\n  AND 0" in query.sql


def test_ranked_sql_binds_every_value():
    hostile = "x'); DROP TABLE entries; --"
    scope = ScopeFilter(source_roots=(("claude", hostile),), repo_roots=(hostile,), identities=(hostile,))
    query = ranked_sql('"a"', scope, evidence_types=[hostile], bound=5, now=0.0)
    assert hostile not in query.sql


def test_probe_sql():
    query = probe_sql('say "hi"', cap=7)
    assert query.sql == 'SELECT count(*) FROM (SELECT 1 FROM "entry_text" WHERE "entry_text" MATCH :match LIMIT :cap)'
    assert query.params == {"match": '"say ""hi"""', "cap": 7}


def test_probe_cap_grows_with_the_index_within_bounds(fresh_index):
    assert probe_cap(fresh_index) == 200


def test_selective_phrases_drops_common_absent_and_weak_words(fresh_index):
    _rows(fresh_index, [("message", f"common word number {n}") for n in range(5)] + [("message", "rare word")])
    assert selective_phrases(fresh_index, ["common", "rare", "absent", "-x"], cap=3) == ["rare"]


def test_selective_phrases_stops_at_keep(fresh_index):
    _rows(fresh_index, [("message", "alpha beta gamma delta")])
    assert selective_phrases(fresh_index, ["alpha", "beta", "gamma", "delta"], cap=10, keep=2) == ["alpha", "beta"]


def test_plan_search_probes_whole_terms_too(fresh_index):
    """A common single-word term (a subject stem in every row) is dropped; a common path keeps its newest
    rows; a common command keeps its call lanes (newest by time) and no second newest-rows pass."""
    _rows(
        fresh_index,
        [("tool_call", "", f"make auth src/auth.py step{n}") for n in range(MIN_PROBE_ROWS)]
        + [("message", "rare word")],
    )
    assert probe_cap(fresh_index) == MIN_PROBE_ROWS  # the shipped cap of a small index: the rows reach it
    plan = plan_search(fresh_index, ["auth", "make auth", "src/auth.py", "rare", "absent words"])
    assert plan.ranked == ("rare",)
    assert plan.common_terms == ("src/auth.py",)
    assert [shape.program for shape in plan.shapes] == ["make", "absent"]


SCOPE = ScopeFilter(source_roots=(("claude", "/root"),), repo_roots=("/repo",))
TYPES = ["decision", "tool_outcome", "prior_failure"]


def test_search_ranks_commands_above_mentions_and_counts_all_matches(fresh_index):
    _rows(
        fresh_index,
        [
            ("message", "we might run pytest later"),
            ("tool_call", "", "pytest tests/test_auth.py -x"),
            ("message", "nothing relevant"),
        ],
    )
    found = _search(fresh_index, ["pytest"], limit=1)
    assert [row.kind for row in found.rows] == ["tool_call"]
    assert (found.matched, found.bounded) == (2, False)


def test_search_prefers_recent_rows_on_equal_text(fresh_index):
    _rows(fresh_index, [("message", "same words here", "", 0.0), ("message", "same words here", "", 1000.0)])
    assert [row.uid for row in _search(fresh_index, ["same words"], now=1000.0).rows] == ["u2", "u1"]


def test_search_filters_evidence_types_in_sql(fresh_index):
    _rows(fresh_index, [("message", "alpha"), ("tool_call", "", "alpha")])
    found = _search(fresh_index, ["alpha"], types=["tool_outcome"])
    assert [row.evidence_type for row in found.rows] == ["tool_outcome"]


def test_search_returns_one_copy_of_a_record_found_in_two_files(fresh_index):
    _rows(fresh_index, [("message", "copied text")], file_id=1)
    _rows(fresh_index, [("message", "copied text")], file_id=2)
    found = _search(fresh_index, ["copied"])
    assert (len(found.rows), found.matched) == (1, 1)


def test_search_puts_the_commands_prior_failures_first_whatever_the_path_words(fresh_index):
    """Issue 13 item 6: many Read/Glob rows matching path words do not push the one prior failure out."""
    reads = [("tool_call", "", f"Read src/auth/token.py part {n}") for n in range(30)]
    _rows(
        fresh_index,
        [*reads, ("tool_call", "FAILED test_expiry", "pytest tests/test_token.py -x", None, "prior_failure")],
    )
    terms = ["pytest tests/test_token.py -q", "src/auth/token.py", "token"]
    found = _search(fresh_index, terms, limit=4, front=2)
    assert found.rows[0].command == "pytest tests/test_token.py -x"
    assert [row.command for row in found.calls] == ["pytest tests/test_token.py -x"]


def test_search_orders_a_lane_newest_first(fresh_index):
    """The newest outcomes of a repeated command come first, so a later fix arrives with the failure it resolved."""
    _rows(
        fresh_index,
        [
            ("tool_call", "ok", "git push origin main", 100.0),
            ("tool_call", "rejected", "git push origin main", 50.0, "prior_failure"),
            ("tool_call", "ok", "git push origin main", 200.0),
            ("tool_call", "rejected", "git push origin main", 250.0, "prior_failure"),
        ],
    )
    found = _search(fresh_index, ["git push origin main"], now=300.0)
    assert [row.uid for row in found.calls] == ["u4", "u3", "u1", "u2"]


def test_search_bounds_a_common_term_to_its_newest_rows(fresh_index):
    count = MIN_PROBE_ROWS + 10  # common: past the probe cap
    _rows(fresh_index, [("message", f"ran tests/check.py at step {n}", "", float(n)) for n in range(count)])
    found = _search(fresh_index, ["tests/check.py"], limit=COMMON_TERM_ROWS + 5, now=float(count))
    assert [row.uid for row in found.rows] == [f"u{n}" for n in range(count, count - COMMON_TERM_ROWS, -1)]
    assert found.bounded and found.matched == COMMON_TERM_ROWS


def test_a_call_lane_walks_past_newer_sessions_of_other_scopes(fresh_index):
    """Newer runs of the same command in another repository do not hide this scope's older ones."""
    _rows(fresh_index, [("tool_call", "FAILED", "pytest tests/test_auth.py -x", 10.0, "prior_failure")], file_id=1)
    for number in range(2, SESSION_WINDOW + 3):  # past the first window of sessions
        run = ("tool_call", "FAILED", "pytest tests/test_auth.py -x", 100.0 + number, "prior_failure")
        _rows(fresh_index, [run, run], file_id=number, cwd="/elsewhere")
    found = _search(fresh_index, ["pytest tests/test_auth.py -x"], now=200.0)
    assert [row.cwd for row in found.calls] == ["/repo"]
    assert not found.bounded


def test_a_call_lane_stops_after_its_walk(fresh_index):
    _rows(fresh_index, [("tool_call", "FAILED", "pytest tests/test_auth.py -x", 10.0, "prior_failure")], file_id=1)
    for number in range(2, LANE_WALK + 2):  # the walk ends on these newer sessions of another scope
        run = ("tool_call", "FAILED", "pytest tests/test_auth.py -x", 100.0 + number, "prior_failure")
        _rows(fresh_index, [run], file_id=number, cwd="/elsewhere")
    found = _search(fresh_index, ["pytest tests/test_auth.py -x"], now=200.0)
    assert found.calls == [] and found.bounded


def test_the_newest_runs_come_from_the_sessions_with_the_newest_runs(fresh_index):
    """Runs are read a group of sessions at a time; the newest runs overall come back, newest first."""
    older = [float(epoch) for epoch in range(1, CALL_LANE_ROWS + 1)]  # entries 1..N
    _rows(fresh_index, [("tool_call", "ok", "make check now", epoch) for epoch in (*older, 50.0)], file_id=1)
    _rows(fresh_index, [("tool_call", "ok", "make check now", epoch) for epoch in (40.0, 60.0)], file_id=2)
    found = _search(fresh_index, ["make check now"], now=100.0)
    # 60 (entry N+3), 50 (N+1), 40 (N+2), then the first session's newest older runs.
    newest_older = list(range(CALL_LANE_ROWS, 3, -1))
    assert [row.entry_id for row in found.calls] == [
        CALL_LANE_ROWS + 3,
        CALL_LANE_ROWS + 1,
        CALL_LANE_ROWS + 2,
        *newest_older,
    ]


def test_search_count_is_a_lower_bound_past_the_ranked_bound(fresh_index):
    """Three selective words (each under the probe cap) together match more rows than are ranked."""
    words = ("unusual", "peculiar", "singular")
    each = MIN_PROBE_ROWS - 1
    assert len(words) * each > RANKED_ROWS
    _rows(fresh_index, [("message", f"{word} phrase {n}") for word in words for n in range(each)])
    found = _search(fresh_index, list(words), limit=2)
    assert (len(found.rows), found.matched, found.bounded) == (2, RANKED_ROWS, True)


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
    _rows(fresh_index, [("message", "scoped words"), ("tool_call", "", "grep scoped words")], path=file_path, cwd=cwd)
    result = _search(fresh_index, ["scoped", "grep scoped words"])
    assert bool(result.rows) is found
    assert bool(result.calls) is found


def _search(connection, terms, *, types=TYPES, limit: int = 5, front: int = 2, now: float = 0.0):
    plan = plan_search(connection, terms)
    return search(connection, plan, SCOPE, evidence_types=types, limit=limit, front=front, now=now)


def _rows(connection, rows, *, file_id: int = 1, path: str | None = None, cwd: str | None = "/repo") -> None:
    """Rows of (kind, body[, command[, epoch[, evidence type]]]) in one session of one file.

    A tool call whose command starts with a capital (`Read …`) is that file tool's; others are Bash
    calls, with the `call_details` row the index writes for them.
    """
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
            epoch = rest[1] if len(rest) > 1 and rest[1] is not None else time.time()
            evidence_type = rest[2] if len(rest) > 2 else "decision" if kind == "message" else "tool_outcome"
            tool = (command.split()[0] if command[:1].isupper() else "Bash") if kind == "tool_call" else None
            connection.execute(
                "INSERT INTO entries (id, file_id, session_row, kind, uid, evidence_type, tool_name, observed_epoch)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (last + number, file_id, file_id, kind, f"u{number}", evidence_type, tool, epoch),
            )
            if tool == "Bash":
                program, key = program_of(command), command_key(command)
                connection.execute(
                    "INSERT INTO call_details (entry_id, session_row, program, command_key, observed_epoch)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (last + number, file_id, program, key, epoch),
                )
                for lane, value in (("command_key", key), ("program", program)):
                    connection.execute(
                        "INSERT INTO call_sessions (lane, value, session_row, newest_epoch) VALUES (?, ?, ?, ?)"
                        " ON CONFLICT DO UPDATE SET newest_epoch = max(newest_epoch, excluded.newest_epoch)",
                        (lane, value, file_id, epoch),
                    )
            connection.execute(
                "INSERT INTO entry_text (rowid, command, body, detail) VALUES (?, ?, ?, '')",
                (last + number, command, body),
            )
