"""A refresh whose scan equals the last complete refresh's reads no cursor, and reports what reading them would."""

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.index.changes import pending_changes
from obelisk_session_evidence.providers.native.index.refresh import refresh_locked
from obelisk_session_evidence.providers.native.index.revision import write_meta

CURSOR_READ = "SELECT path, id, source, root, signature, failure FROM files"
"""How a refresh reads the stored cursors of its roots' files (seen through SQLite's trace)."""


def _roots(tmp_path: Path) -> dict:
    return {"claude": [tmp_path / "claude"]}


@contextmanager
def _statements(connection: sqlite3.Connection) -> Iterator[list[str]]:
    """Every SQL statement the block runs on `connection`."""
    seen: list[str] = []
    connection.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        connection.set_trace_callback(None)


def _reads_cursors(statements: list[str]) -> bool:
    return any(statement.startswith(CURSOR_READ) for statement in statements)


def _report_fields(report) -> dict:
    return report.model_dump(exclude={"seconds"})


def _by_reading(connection, roots):
    """A refresh that must read the cursors: the last scan on record is not this one."""
    write_meta(connection, "last_complete_scan", "not this scan")
    with _statements(connection) as seen:
        report = refresh_locked(connection, roots)
    assert _reads_cursors(seen)
    return report


def test_a_no_change_refresh_reads_no_cursor_and_reports_the_same(fresh_index, transcript, tmp_path):
    transcript("a").user("first").write()
    transcript("b").bash("pytest -x", "1 failed", exit_code=1).write()
    unreadable = tmp_path / "claude" / "-work-repo" / "dangling.jsonl"
    unreadable.symlink_to(tmp_path / "claude" / "nowhere.jsonl")  # inside the root: a link leaving it is not counted
    roots = _roots(tmp_path)
    built = refresh_locked(fresh_index, roots)
    assert built.files_failed == 1
    expected = _report_fields(_by_reading(fresh_index, roots))
    steps = []
    with _statements(fresh_index) as seen:
        repeated = refresh_locked(fresh_index, roots, progress=lambda done, total: steps.append((done, total)))
    assert not _reads_cursors(seen)
    assert _report_fields(repeated) == expected
    assert steps == [(3, 3)]  # the progress a caller shows still completes
    assert (repeated.files_unchanged, repeated.files_failed, repeated.content_changed) == (2, 1, False)
    assert repeated.freshness == "incomplete" and repeated.index_revision == built.index_revision


@pytest.mark.parametrize("change", ["append", "new_file", "delete", "touch"])
def test_any_change_on_disk_takes_the_reading_path(fresh_index, transcript, tmp_path, change):
    session = transcript("a")
    path = session.user("first").write()
    transcript("b").user("other").write()
    roots = _roots(tmp_path)
    refresh_locked(fresh_index, roots)
    if change == "append":
        session.user("second").write()
    elif change == "new_file":
        transcript("c").user("third").write()
    elif change == "delete":
        path.unlink()
    else:
        status = path.stat()
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000))
    with _statements(fresh_index) as seen:
        report = refresh_locked(fresh_index, roots)
    assert _reads_cursors(seen)
    assert report.files_appended + report.files_added + report.files_deleted + report.files_reread == 1


def test_other_roots_or_another_index_revision_take_the_reading_path(fresh_index, transcript, tmp_path):
    transcript("a").user("first").write()
    roots = _roots(tmp_path)
    refresh_locked(fresh_index, roots)
    read = []

    def refreshed(roots: dict):
        with _statements(fresh_index) as seen:
            report = refresh_locked(fresh_index, roots)
        read.append(_reads_cursors(seen))
        return report

    refreshed({**roots, "codex": [tmp_path / "codex"]})  # one more (missing) root
    refreshed(roots)  # the scan differs from the last one again
    refreshed(roots)  # the same scan: nothing to read
    fresh_index.execute("UPDATE meta SET value = '99' WHERE key = 'revision_counter'")  # the index moved on
    refreshed(roots)
    write_meta(fresh_index, "last_complete_scan", "not what a refresh writes")
    report = refreshed(roots)
    assert read == [True, True, False, True, True] and report.files_unchanged == 1


def test_an_interrupted_refresh_leaves_nothing_to_repeat(fresh_index, transcript, tmp_path):
    transcript("a").user("first").write()
    roots = _roots(tmp_path)
    refresh_locked(fresh_index, roots)
    transcript("b").user("second").write()
    interrupted = refresh_locked(fresh_index, roots, budget_s=-1.0)
    assert interrupted.freshness == "stale"
    with _statements(fresh_index) as seen:
        finished = refresh_locked(fresh_index, roots)
    assert _reads_cursors(seen) and finished.files_added == 1 and finished.freshness == "fresh"


def test_pending_changes_after_a_complete_refresh_reads_no_cursor(fresh_index, transcript, tmp_path):
    session = transcript("a")
    session.user("first").write()
    roots = _roots(tmp_path)
    refresh_locked(fresh_index, roots)
    with _statements(fresh_index) as seen:
        assert pending_changes(fresh_index, roots) == 0
    assert not _reads_cursors(seen)
    session.user("second").write()
    with _statements(fresh_index) as seen:
        assert pending_changes(fresh_index, roots) == 1
    assert _reads_cursors(seen)
