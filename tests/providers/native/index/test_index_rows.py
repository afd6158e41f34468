"""`call_details` and `call_sessions` follow the tool calls they describe: written, appended, re-read, deleted."""

import pytest

from obelisk_session_evidence.providers.native.index.deferred_indexes import DEFERRED_KEY
from obelisk_session_evidence.providers.native.index.refresh import refresh_locked


def _counts(connection) -> tuple[int, int, int, int]:
    """(tool calls, call_details rows, orphan call_details rows, orphan call_sessions rows)."""
    (calls,) = connection.execute("SELECT count(*) FROM entries WHERE kind = 'tool_call'").fetchone()
    (details,) = connection.execute("SELECT count(*) FROM call_details").fetchone()
    (orphans,) = connection.execute(
        "SELECT count(*) FROM call_details WHERE entry_id NOT IN (SELECT id FROM entries)"
    ).fetchone()
    (lost,) = connection.execute(
        "SELECT count(*) FROM call_sessions WHERE session_row NOT IN (SELECT id FROM sessions)"
    ).fetchone()
    return calls, details, orphans, lost


def test_call_details_follow_appends_rereads_and_deletes(fresh_index, tmp_path, transcript):
    roots = {"claude": [tmp_path / "claude"]}
    session = transcript("s1", "/work/alpha")
    session.bash("make test", "ok").call("Read", {"file_path": "/work/alpha/a.py"}, "x").write()
    refresh_locked(fresh_index, roots)
    assert _counts(fresh_index) == (2, 2, 0, 0)
    assert fresh_index.execute("SELECT program, command_key, paths FROM call_details ORDER BY entry_id").fetchall() == [
        ("make", "make test", ""),
        (None, None, "/work/alpha/a.py"),
    ]
    session.bash("make test", "again").write()  # appended: one more run of the same command
    refresh_locked(fresh_index, roots)
    assert _counts(fresh_index) == (3, 3, 0, 0)
    newest = fresh_index.execute(
        "SELECT newest_epoch FROM call_sessions WHERE lane = 'command_key' AND value = 'make test'"
    ).fetchall()
    (latest,) = fresh_index.execute("SELECT max(observed_epoch) FROM entries WHERE kind = 'tool_call'").fetchone()
    assert newest == [(latest,)]
    session.path.write_text(session.path.read_text().splitlines()[0] + "\n")  # shrunk: re-read whole
    refresh_locked(fresh_index, roots)
    assert _counts(fresh_index)[2:] == (0, 0)
    session.path.unlink()
    refresh_locked(fresh_index, roots)
    assert _counts(fresh_index) == (0, 0, 0, 0)
    assert fresh_index.execute("SELECT count(*) FROM call_sessions").fetchone() == (0,)


def _call_indexes(connection) -> list[tuple[str, str]]:
    return connection.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('call_details', 'call_sessions')"
        " AND sql IS NOT NULL ORDER BY name"
    ).fetchall()


def test_a_first_build_makes_the_call_indexes_it_deferred(fresh_index, tmp_path, transcript):
    migrated = _call_indexes(fresh_index)
    assert len(migrated) == 4
    transcript("s1", "/work/alpha").bash("make test", "ok").bash("make lint", "ok").write()
    refresh_locked(fresh_index, {"claude": [tmp_path / "claude"]})
    assert _call_indexes(fresh_index) == migrated
    assert fresh_index.execute("SELECT count(*) FROM meta WHERE key = ?", (DEFERRED_KEY,)).fetchone() == (0,)
    plan = fresh_index.execute(
        "EXPLAIN QUERY PLAN SELECT entry_id FROM call_details WHERE command_key = 'make test' ORDER BY session_row"
    ).fetchall()
    assert "call_details_command" in str(plan)


def test_a_first_build_that_died_midway_has_its_call_indexes_made_by_the_next_refresh(
    fresh_index, tmp_path, transcript
):
    migrated = _call_indexes(fresh_index)
    transcript("s1", "/work/alpha").bash("make test", "ok").write()
    transcript("s2", "/work/alpha").bash("make lint", "ok").write()
    roots = {"claude": [tmp_path / "claude"]}

    def dies_after_the_first_unit(done: int, total: int) -> None:
        assert (done, total) == (1, 2)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        refresh_locked(fresh_index, roots, progress=dies_after_the_first_unit)
    assert _call_indexes(fresh_index) == []
    refresh_locked(fresh_index, roots)
    assert _call_indexes(fresh_index) == migrated
    assert _counts(fresh_index) == (2, 2, 0, 0)
