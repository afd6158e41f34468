"""A refresh whose scan equals the last complete refresh's reads no cursor, and reports what reading them would."""

import os
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.index import changes, refresh
from obelisk_session_evidence.providers.native.index.changes import pending_changes
from obelisk_session_evidence.providers.native.index.refresh import refresh_locked
from obelisk_session_evidence.providers.native.index.revision import write_meta


def _roots(tmp_path: Path) -> dict:
    return {"claude": [tmp_path / "claude"]}


def _without_cursor_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: object) -> None:
        raise AssertionError("a cursor was read")

    monkeypatch.setattr(refresh, "known_files", fail)
    monkeypatch.setattr(changes, "known_files", fail)


def _report_fields(report) -> dict:
    return report.model_dump(exclude={"seconds"})


def _by_reading(connection, roots, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as patched:
        patched.setattr(refresh, "same_scan_as_last", lambda *_: None)
        return refresh_locked(connection, roots)


def test_a_no_change_refresh_reads_no_cursor_and_reports_the_same(fresh_index, transcript, tmp_path, monkeypatch):
    transcript("a").user("first").write()
    transcript("b").bash("pytest -x", "1 failed", exit_code=1).write()
    unreadable = tmp_path / "claude" / "-work-repo" / "dangling.jsonl"
    unreadable.symlink_to(tmp_path / "claude" / "nowhere.jsonl")  # inside the root: a link leaving it is not counted
    roots = _roots(tmp_path)
    built = refresh_locked(fresh_index, roots)
    assert built.files_failed == 1
    expected = _report_fields(_by_reading(fresh_index, roots, monkeypatch))
    steps = []
    with monkeypatch.context() as patched:
        _without_cursor_reads(patched)
        repeated = refresh_locked(fresh_index, roots, progress=lambda done, total: steps.append((done, total)))
    assert _report_fields(repeated) == expected
    assert steps == [(3, 3)]  # the progress a caller shows still completes
    assert (repeated.files_unchanged, repeated.files_failed, repeated.content_changed) == (2, 1, False)
    assert repeated.freshness == "incomplete" and repeated.index_revision == built.index_revision


@pytest.mark.parametrize("change", ["append", "new_file", "delete", "touch"])
def test_any_change_on_disk_takes_the_reading_path(fresh_index, transcript, tmp_path, monkeypatch, change):
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
    read = []
    original = refresh.known_files
    monkeypatch.setattr(refresh, "known_files", lambda *a: read.append(1) or original(*a))
    report = refresh_locked(fresh_index, roots)
    assert read == [1]
    assert report.files_appended + report.files_added + report.files_deleted + report.files_reread == 1


def test_other_roots_or_another_index_revision_take_the_reading_path(fresh_index, transcript, tmp_path, monkeypatch):
    transcript("a").user("first").write()
    roots = _roots(tmp_path)
    refresh_locked(fresh_index, roots)
    read = []
    original = refresh.known_files
    monkeypatch.setattr(refresh, "known_files", lambda *a: read.append(1) or original(*a))
    refresh_locked(fresh_index, {**roots, "codex": [tmp_path / "codex"]})  # one more (missing) root
    assert read == [1]
    refresh_locked(fresh_index, roots)  # the scan differs from the last one again
    assert read == [1, 1]
    fresh_index.execute("UPDATE meta SET value = '99' WHERE key = 'revision_counter'")  # the index moved on
    refresh_locked(fresh_index, roots)
    assert read == [1, 1, 1]
    write_meta(fresh_index, "last_complete_scan", "not what a refresh writes")
    report = refresh_locked(fresh_index, roots)
    assert read == [1, 1, 1, 1] and report.files_unchanged == 1


def test_an_interrupted_refresh_leaves_nothing_to_repeat(fresh_index, transcript, tmp_path, monkeypatch):
    transcript("a").user("first").write()
    roots = _roots(tmp_path)
    refresh_locked(fresh_index, roots)
    transcript("b").user("second").write()
    interrupted = refresh_locked(fresh_index, roots, budget_s=-1.0)
    assert interrupted.freshness == "stale"
    read = []
    original = refresh.known_files
    monkeypatch.setattr(refresh, "known_files", lambda *a: read.append(1) or original(*a))
    finished = refresh_locked(fresh_index, roots)
    assert read == [1] and finished.files_added == 1 and finished.freshness == "fresh"


def test_pending_changes_after_a_complete_refresh_reads_no_cursor(fresh_index, transcript, tmp_path, monkeypatch):
    session = transcript("a")
    session.user("first").write()
    roots = _roots(tmp_path)
    refresh_locked(fresh_index, roots)
    with monkeypatch.context() as patched:
        _without_cursor_reads(patched)
        assert pending_changes(fresh_index, roots) == 0
    session.user("second").write()
    assert pending_changes(fresh_index, roots) == 1
