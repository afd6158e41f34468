"""Incremental refresh: only what changed is read, and the index ends up as a full rebuild would."""

import hashlib
import json
import os
import threading
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.errors import IndexUnavailable
from obelisk_session_evidence.providers.native.index.changes import pending_changes
from obelisk_session_evidence.providers.native.index.refresh import refresh_index, refresh_locked
from obelisk_session_evidence.providers.native.index.store import connect, index_file, writer_lock
from obelisk_session_evidence.providers.native.parsers._reading import MAX_RECORD_BYTES


def _roots(tmp_path: Path) -> dict:
    return {"claude": [tmp_path / "claude"]}


def _texts(connection) -> list[str]:
    return [
        (command + " | " + body).strip(" |")
        for command, body in connection.execute(
            "SELECT t.command, t.body FROM entry_text t JOIN entries e ON e.id = t.rowid ORDER BY e.kind, t.body, t.command"
        )
    ]


def _rebuilt(tmp_path: Path) -> list[str]:
    """What a full rebuild of the same folders indexes."""
    connection = connect(":memory:")
    try:
        refresh_locked(connection, _roots(tmp_path))
        return _texts(connection)
    finally:
        connection.close()


def test_refresh_index_reads_a_new_file(fresh_index, transcript, tmp_path):
    transcript().user("Fix the login bug").bash("pytest -x", "1 failed", exit_code=1).write()
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert (report.files_added, report.messages_written, report.tool_calls_written) == (1, 1, 1)
    assert report.freshness == "fresh" and report.content_changed
    assert _texts(fresh_index) == ["Fix the login bug", "pytest -x | Exit code 1\n1 failed"]


def test_refresh_index_with_nothing_changed_reads_nothing(fresh_index, transcript, tmp_path):
    transcript().user("first").write()
    first = refresh_locked(fresh_index, _roots(tmp_path))
    second = refresh_locked(fresh_index, _roots(tmp_path))
    assert (second.files_unchanged, second.bytes_read, second.messages_written) == (1, 0, 0)
    assert (second.content_changed, second.index_revision) == (False, first.index_revision)


def test_refresh_index_append_reads_only_the_new_bytes(fresh_index, transcript, tmp_path):
    session = transcript()
    path = session.user("first message").write()
    refresh_locked(fresh_index, _roots(tmp_path))
    before = path.stat().st_size
    session.user("second message").write()
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert (report.files_appended, report.files_reread) == (1, 0)
    assert report.bytes_read == path.stat().st_size - before
    assert report.messages_written == 1
    assert _texts(fresh_index) == ["first message", "second message"] == _rebuilt(tmp_path)


def test_refresh_index_append_completes_an_open_tool_call(fresh_index, transcript, tmp_path):
    session = transcript()
    call_id = session.call_without_result("Bash", {"command": "make test"})
    session.write()
    refresh_locked(fresh_index, _roots(tmp_path))
    assert fresh_index.execute("SELECT evidence_type, exit_code FROM entries").fetchall() == [("tool_outcome", None)]
    session.result(call_id, "Exit code 2\nboom", is_error=True).write()
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert report.files_appended == 1
    assert fresh_index.execute("SELECT evidence_type, exit_code FROM entries").fetchall() == [("prior_failure", 2)]
    assert _texts(fresh_index) == _rebuilt(tmp_path)


def test_refresh_index_same_size_rewrite_with_unchanged_mtime_is_reread(fresh_index, transcript, tmp_path):
    path = transcript().user("original text").write()
    refresh_locked(fresh_index, _roots(tmp_path))
    status = path.stat()
    path.write_bytes(path.read_bytes().replace(b"original text", b"replaced text"))
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (status.st_size, status.st_mtime_ns)
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert (report.files_reread, report.files_unchanged) == (1, 0)
    assert _texts(fresh_index) == ["replaced text"]


def test_refresh_index_truncated_file_is_reread(fresh_index, transcript, tmp_path):
    session = transcript()
    path = session.user("kept").write()
    keep = path.stat().st_size
    session.user("dropped later").write()
    refresh_locked(fresh_index, _roots(tmp_path))
    with open(path, "r+b") as handle:
        handle.truncate(keep)
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert report.files_reread == 1
    assert _texts(fresh_index) == ["kept"] == _rebuilt(tmp_path)


def test_refresh_index_file_replaced_by_rename_is_reread(fresh_index, transcript, tmp_path):
    path = transcript().user("old content").write()
    refresh_locked(fresh_index, _roots(tmp_path))
    replacement = path.with_suffix(".tmp")
    replacement.write_bytes(path.read_bytes().replace(b"old content", b"new content, longer than before"))
    os.replace(replacement, path)
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert (report.files_reread, report.files_appended) == (1, 0)
    assert _texts(fresh_index) == ["new content, longer than before"]


def test_refresh_index_grown_file_with_changed_earlier_bytes_is_reread(fresh_index, transcript, tmp_path):
    session = transcript()
    path = session.user("alpha").write()
    refresh_locked(fresh_index, _roots(tmp_path))
    with open(path, "r+b") as handle:  # same inode: rewrite in place, then grow
        data = handle.read().replace(b"alpha", b"omega")
        handle.seek(0)
        handle.write(data)
    session.user("appended").write()
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert report.files_reread == 1
    assert _texts(fresh_index) == ["appended", "omega"] == _rebuilt(tmp_path)


def test_prefix_digest_hashed_while_reading_covers_every_byte_before_the_cursor(fresh_index, transcript, tmp_path):
    oversize = "x" * (MAX_RECORD_BYTES + 1)  # a record past the bound, read in many chunks
    path = transcript().user("before").user(oversize).user("after").write()
    with open(path, "ab") as handle:
        handle.write(b'{"type": "user", "half-written')
    refresh_locked(fresh_index, _roots(tmp_path))
    end_offset, digest, reasons = fresh_index.execute(
        "SELECT end_offset, prefix_digest, skipped_by_reason FROM files"
    ).fetchone()
    data = path.read_bytes()
    assert "oversize_record=1" in reasons
    assert end_offset == data.rindex(b"\n") + 1
    assert digest == hashlib.sha256(data[:end_offset]).hexdigest()


def test_refresh_index_deleted_file_loses_its_rows(fresh_index, transcript, tmp_path):
    gone = transcript("gone").user("going away").write()
    transcript("kept").user("staying").write()
    refresh_locked(fresh_index, _roots(tmp_path))
    gone.unlink()
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert (report.files_deleted, report.content_changed) == (1, True)
    assert _texts(fresh_index) == ["staying"]
    assert fresh_index.execute("SELECT count(*) FROM sessions").fetchone() == (1,)


def test_refresh_index_half_written_tail_is_not_consumed(fresh_index, transcript, tmp_path):
    session = transcript()
    path = session.user("complete line").write()
    session.user("the tail")
    tail = (session.lines.pop() + "\n").encode()
    with open(path, "ab") as handle:
        handle.write(tail[:20])
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert (report.messages_written, report.skipped_records) == (1, 0)
    stored = fresh_index.execute("SELECT end_offset, size FROM files").fetchone()
    assert stored[0] == stored[1] - 20
    with open(path, "ab") as handle:
        handle.write(tail[20:])
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert (report.files_appended, report.messages_written) == (1, 1)
    assert _texts(fresh_index) == ["complete line", "the tail"]


def test_refresh_index_counts_a_failed_file_and_reports_incomplete(fresh_index, transcript, tmp_path):
    transcript().user("fine").write()
    broken = tmp_path / "claude" / "-broken" / "not-a-file.jsonl"
    broken.mkdir(parents=True)  # listed as a session file, cannot be opened as one
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert (report.files_failed, report.freshness) == (1, "incomplete")
    again = refresh_locked(fresh_index, _roots(tmp_path))
    assert (again.files_failed, again.freshness, again.content_changed) == (1, "incomplete", False)


def test_refresh_index_unlistable_root_is_incomplete_and_keeps_rows(fresh_index, transcript, tmp_path):
    transcript().user("kept").write()
    refresh_locked(fresh_index, _roots(tmp_path))
    report = refresh_locked(
        fresh_index, {"claude": [tmp_path / "claude", tmp_path / "claude" / "-work-repo" / "s1.jsonl"]}
    )
    assert (report.unreadable_roots, report.freshness) == (1, "incomplete")
    assert _texts(fresh_index) == ["kept"]


def test_refresh_index_missing_root_is_incomplete_never_fresh(fresh_index, tmp_path):
    report = refresh_locked(fresh_index, _roots(tmp_path))
    assert (report.files_seen, report.freshness, report.content_changed) == (0, "incomplete", False)


def test_refresh_index_kimi_folder_is_reread_when_a_member_changes(fresh_index, tmp_path):
    session = tmp_path / "kimi" / "wd" / "session-1"
    (session / "agents" / "main").mkdir(parents=True)
    (session / "state.json").write_text(json.dumps({"id": "session-1", "cwd": "/work/repo"}))
    wire = session / "agents" / "main" / "wire.jsonl"
    wire.write_text(_kimi_message("m1", "user", "first kimi message"))
    roots = {"kimi": [tmp_path / "kimi"]}
    assert refresh_locked(fresh_index, roots).messages_written == 1
    with open(wire, "a") as handle:
        handle.write(_kimi_message("m2", "assistant", "second kimi message"))
    report = refresh_locked(fresh_index, roots)
    assert (report.files_reread, report.files_appended) == (1, 0)
    assert _texts(fresh_index) == ["first kimi message", "second kimi message"]


def test_refresh_index_moves_the_revision_only_when_content_changes(fresh_index, transcript, tmp_path):
    session = transcript()
    session.user("one").write()
    first = refresh_locked(fresh_index, _roots(tmp_path)).index_revision
    assert refresh_locked(fresh_index, _roots(tmp_path)).index_revision == first
    session.user("two").write()
    second = refresh_locked(fresh_index, _roots(tmp_path)).index_revision
    assert second != first and second.startswith("2-") and first.startswith("1-")


def test_pending_changes_counts_without_reading(fresh_index, transcript, tmp_path):
    session = transcript()
    session.user("one").write()
    refresh_locked(fresh_index, _roots(tmp_path))
    assert pending_changes(fresh_index, _roots(tmp_path)) == 0
    session.user("two").write()
    transcript("other").user("new file").write()
    assert pending_changes(fresh_index, _roots(tmp_path)) == 2


def test_refresh_index_on_disk_waits_for_no_other_writer(tmp_path, transcript):
    transcript().user("hello").write()
    path = index_file(tmp_path / "index")
    with writer_lock(path, wait_s=0) as held:
        assert held
        with pytest.raises(IndexUnavailable) as raised:
            refresh_index(path, _roots(tmp_path), wait_s=0)
        assert raised.value.detail == "refresh_busy"
    assert refresh_index(path, _roots(tmp_path), wait_s=0).files_added == 1


def test_refresh_index_readers_do_not_block_on_a_writer(tmp_path, transcript):
    """WAL: a lookup's read runs while a refresh holds its write transaction open."""
    transcript().user("readable").write()
    path = index_file(tmp_path / "index")
    refresh_index(path, _roots(tmp_path))
    writer = connect(path)
    reader = connect(path)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("DELETE FROM entries")
        done = threading.Event()
        counts: list[int] = []

        def read() -> None:
            counts.append(reader.execute("SELECT count(*) FROM entries").fetchone()[0])
            done.set()

        threading.Thread(target=read).start()
        assert done.wait(2.0)
        assert counts == [1]
        writer.execute("ROLLBACK")
    finally:
        writer.close()
        reader.close()


def _kimi_message(message_id: str, role: str, text: str) -> str:
    record = {
        "type": "context.append_message",
        "time": 1772359200000,
        "message": {"id": message_id, "role": role, "content": [{"type": "text", "text": text}]},
    }
    return json.dumps(record) + "\n"


def test_refresh_index_out_of_budget_keeps_its_work_and_is_continued(fresh_index, transcript, tmp_path):
    for number in range(3):
        transcript(f"s{number}").user(f"message {number}").write()
    cut = refresh_locked(fresh_index, _roots(tmp_path), budget_s=0.0)
    assert (cut.freshness, cut.files_added) == ("stale", 0)
    assert fresh_index.execute("SELECT count(*) FROM roots").fetchone() == (0,)
    rest = refresh_locked(fresh_index, _roots(tmp_path))
    assert (rest.freshness, rest.files_added) == ("fresh", 3)
