"""Attacks on the session folders a refresh reads: each test is the attack that once broke it.

A root that disappears, cannot be listed or changes type must never read as "no history"; a unit
that is no longer a session file must not keep its rows searchable; a change that keeps a folder's
mtime (as `cp -a`, `tar` and `rsync` restore it) or an in-place edit hidden behind an append must
still be seen. Every stand-in is built under `tmp_path`.
"""

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.providers.native.index.changes import pending_changes
from obelisk_session_evidence.providers.native.index.refresh import refresh_locked
from obelisk_session_evidence.providers.native.index.status import status_of
from obelisk_session_evidence.providers.native.index.store import MEMORY, connect
from tests.providers.native.index.transcripts import ClaudeTranscript

HOUR_NS = 3600 * 10**9


@pytest.fixture
def fresh_index():
    connection = connect(MEMORY)
    yield connection
    connection.close()


def _texts(connection) -> list[str]:
    return sorted(body for (body,) in connection.execute("SELECT body FROM entry_text"))


def _claude(tmp_path: Path) -> Path:
    return tmp_path / "sessions" / "claude"


def test_root_moved_away_keeps_its_rows_and_is_incomplete_until_it_is_back(fresh_index, tmp_path):
    root = _claude(tmp_path)
    ClaudeTranscript(root, "s1", "/work/repo").user("pytest failed on the login test").write()
    roots = {"claude": [root]}
    assert refresh_locked(fresh_index, roots).freshness == "fresh"
    root.rename(tmp_path / "sessions" / "moved-away")  # an unmounted home, a rename, a sync in progress
    report = refresh_locked(fresh_index, roots)
    assert (report.freshness, report.files_deleted) == ("incomplete", 0)
    assert _texts(fresh_index) == ["pytest failed on the login test"]
    status = status_of(fresh_index, roots=roots)
    assert (status.freshness, [r.state for r in status.roots]) == ("incomplete", ["missing"])
    (tmp_path / "sessions" / "moved-away").rename(root)
    assert refresh_locked(fresh_index, roots).freshness == "fresh"
    assert _texts(fresh_index) == ["pytest failed on the login test"]


def test_cli_refresh_of_a_root_that_does_not_exist_does_not_report_fresh(tmp_path):
    result = CliRunner().invoke(
        main, ["index", "refresh", "--root", f"claude={tmp_path / 'does' / 'not' / 'exist'}", "--format", "json"]
    )
    assert result.exit_code != 0
    assert json.loads(result.stdout)["freshness"] == "incomplete"


def _make_fifo(path: Path, tmp_path: Path) -> None:
    os.mkfifo(path)


def _make_dangling_link(path: Path, tmp_path: Path) -> None:
    path.symlink_to(path.with_name("deleted-target.txt"))  # inside the root, so the link would count


def _make_folder(path: Path, tmp_path: Path) -> None:
    path.mkdir()


@pytest.mark.parametrize(
    "replacement", [_make_folder, _make_dangling_link, _make_fifo], ids=["folder", "dangling-link", "fifo"]
)
def test_session_file_replaced_by_a_non_file_loses_its_rows(replacement, fresh_index, tmp_path):
    root = _claude(tmp_path)
    path = ClaudeTranscript(root, "s1", "/work/repo").user("rows of a file that is gone").write()
    refresh_locked(fresh_index, {"claude": [root]})
    path.unlink()
    replacement(path, tmp_path)
    report = refresh_locked(fresh_index, {"claude": [root]})
    assert report.freshness == "incomplete"
    assert _texts(fresh_index) == []


def test_session_file_linked_from_another_agents_folder_does_not_count(fresh_index, tmp_path):
    root = _claude(tmp_path)
    ClaudeTranscript(root, "own", "/work/repo").user("agent A's own session").write()
    theirs = ClaudeTranscript(tmp_path / "agent-b" / "claude", "theirs", "/work/repo")
    theirs.user("agent B's private session").write()
    (root / "-work-repo" / "theirs.jsonl").symlink_to(theirs.path)
    report = refresh_locked(fresh_index, {"claude": [root]})
    assert _texts(fresh_index) == ["agent A's own session"]
    assert (report.files_seen, report.freshness) == (1, "fresh")


def _kimi_session(folder: Path, session_id: str, text: str) -> Path:
    (folder / "agents" / "main").mkdir(parents=True)
    (folder / "state.json").write_text(json.dumps({"id": session_id, "cwd": "/work/repo"}))
    record = {
        "type": "context.append_message",
        "time": 1772359200000,
        "message": {"id": "m1", "role": "user", "content": [{"type": "text", "text": text}]},
    }
    wire = folder / "agents" / "main" / "wire.jsonl"
    wire.write_text(json.dumps(record) + "\n")
    return wire


def test_kimi_session_whose_wire_links_to_another_agents_folder_does_not_count(fresh_index, tmp_path):
    root = tmp_path / "sessions" / "kimi"
    _kimi_session(root / "wd" / "own", "own", "agent A's own kimi session")
    theirs = _kimi_session(tmp_path / "agent-b" / "kimi" / "wd" / "theirs", "theirs", "agent B's private kimi session")
    stolen = root / "wd" / "stolen"
    (stolen / "agents" / "main").mkdir(parents=True)
    (stolen / "state.json").write_text(json.dumps({"id": "stolen", "cwd": "/work/repo"}))
    (stolen / "agents" / "main" / "wire.jsonl").symlink_to(theirs)
    refresh_locked(fresh_index, {"kimi": [root]})
    assert _texts(fresh_index) == ["agent A's own kimi session"]


def test_new_file_in_a_folder_whose_mtime_was_restored_is_seen(fresh_index, tmp_path):
    root = _claude(tmp_path)
    ClaudeTranscript(root, "s1", "/work/repo").user("first session").write()
    folder = root / "-work-repo"
    old = folder.stat().st_mtime_ns - HOUR_NS  # old enough that the listing is reused
    os.utime(folder, ns=(old, old))
    refresh_locked(fresh_index, {"claude": [root]})
    ClaudeTranscript(root, "s2", "/work/repo").user("copied in with cp -a").write()
    os.utime(folder, ns=(old, old))  # what `cp -a`, `tar` and `rsync` do to the folder
    assert pending_changes(fresh_index, {"claude": [root]}) == 1
    report = refresh_locked(fresh_index, {"claude": [root]})
    assert report.files_added == 1
    assert _texts(fresh_index) == ["copied in with cp -a", "first session"]


def test_in_place_edit_followed_by_an_append_is_reread(fresh_index, tmp_path):
    root = _claude(tmp_path)
    session = ClaudeTranscript(root, "s1", "/work/repo")
    session.user("alpha was the first word")
    for number in range(60):  # far more than the bytes an append check looks at just before the cursor
        session.user(f"filler message number {number} " + "x" * 100)
    path = session.write()
    refresh_locked(fresh_index, {"claude": [root]})
    with open(path, "r+b") as handle:  # same inode, same size: the first line edited in place
        data = handle.read()
        handle.seek(0)
        handle.write(data.replace(b"alpha was", b"omega was", 1))
    session.user("then one more line").write()
    report = refresh_locked(fresh_index, {"claude": [root]})
    assert report.freshness == "fresh"
    texts = _texts(fresh_index)
    assert "omega was the first word" in texts and "alpha was the first word" not in texts
    assert "then one more line" in texts
