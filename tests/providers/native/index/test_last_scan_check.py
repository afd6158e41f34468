"""The one-`stat`-per-entry check (`last_scan.as_last_refresh_left`) that lets a lookup inside the
refresh window skip the full scan: it says "as the last refresh left them" only when a refresh
would then find nothing, and anything it cannot vouch for sends the lookup to the full scan."""

import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.index.changes import _KNOWN, pending_changes
from obelisk_session_evidence.providers.native.index.last_scan import _UNITS, as_last_refresh_left
from obelisk_session_evidence.providers.native.index.listings import Listings
from obelisk_session_evidence.providers.native.index.refresh import refresh_index, refresh_locked
from obelisk_session_evidence.providers.native.index.revision import advance_revision
from obelisk_session_evidence.providers.native.index.scan import scan_root, stored_kimi_digest
from obelisk_session_evidence.providers.native.index.status import PROBLEM_FILES
from obelisk_session_evidence.providers.native.index.store import connect, index_file
from obelisk_session_evidence.providers.native.parsers import default_roots
from tests.providers.native.index.older_index import before_migration

SETTLED_NS = 10 * 10**9
"""How far past now a check looks from, so that folders written by the test count as settled."""


@pytest.fixture
def home(generated, tmp_path) -> Path:
    """A private copy of the generated five-agent histories (the shared one is read-only)."""
    return Path(shutil.copytree(generated.home, tmp_path / "home", symlinks=True))


def _roots(home: Path) -> dict:
    return {source: [root] for source, root in default_roots(home).items()}


def _settled_check(connection, roots) -> bool:
    return as_last_refresh_left(connection, roots, now_ns=time.time_ns() + SETTLED_NS)


def _units_refreshed(report) -> int:
    return report.files_added + report.files_appended + report.files_reread + report.files_deleted


def _one(home: Path, pattern: str) -> Path:
    return sorted(home.glob(pattern))[0]


def _append(path: Path) -> None:
    with open(path, "ab") as handle:
        handle.write(b'{"type":"note"}\n')


def _appended_claude(home: Path) -> None:
    _append(_one(home, ".claude/projects/*/*.jsonl"))


def _appended_codex(home: Path) -> None:
    _append(_one(home, ".codex/sessions/*/*/*/rollout-*.jsonl"))


def _appended_kimi_wire(home: Path) -> None:
    _append(_one(home, ".kimi-code/sessions/*/*/agents/main/wire.jsonl"))


def _kimi_agent_added(home: Path) -> None:
    agent = _one(home, ".kimi-code/sessions/*/*/agents") / "helper"
    agent.mkdir()
    (agent / "wire.jsonl").write_text('{"type":"note"}\n')


def _kimi_context_added(home: Path) -> None:
    (_one(home, ".kimi-code/sessions/*/*/state.json").parent / "context.jsonl").write_text('{"role":"user"}\n')


def _dsh_version_added(home: Path) -> None:
    session = _one(home, ".dsh/sessions/*/*/session.v1.jsonl.zstd")
    shutil.copyfile(session, session.with_name("session.v2.jsonl.zstd"))


def _pi_removed(home: Path) -> None:
    _one(home, ".pi/agent/sessions/*/*.jsonl").unlink()


def _claude_added(home: Path) -> None:
    source = _one(home, ".claude/projects/*/*.jsonl")
    shutil.copyfile(source, source.with_name("00000000-0000-4000-8000-000000000000.jsonl"))


def _claude_folder_renamed(home: Path) -> None:
    folder = _one(home, ".claude/projects/*")
    folder.rename(folder.with_name(folder.name + "-moved"))


def _codex_day_removed(home: Path) -> None:
    shutil.rmtree(_one(home, ".codex/sessions/*/*/*"))


def _claude_replaced_same_size(home: Path) -> None:
    """Rewritten in place to the same size (only the times and, for a new file, the inode move)."""
    path = _one(home, ".claude/projects/*/*.jsonl")
    path.write_bytes(path.read_bytes())


CHANGES: list[Callable[[Path], None]] = [
    _appended_claude,
    _appended_codex,
    _appended_kimi_wire,
    _kimi_agent_added,
    _kimi_context_added,
    _dsh_version_added,
    _pi_removed,
    _claude_added,
    _claude_folder_renamed,
    _codex_day_removed,
    _claude_replaced_same_size,
]


def test_right_after_a_complete_refresh_the_roots_are_as_it_left_them(fresh_index, home):
    roots = _roots(home)
    refresh_locked(fresh_index, roots)
    assert _settled_check(fresh_index, roots)
    assert pending_changes(fresh_index, roots) == 0
    assert _units_refreshed(refresh_locked(fresh_index, roots)) == 0


@pytest.mark.parametrize("change", CHANGES, ids=lambda change: change.__name__.strip("_"))
def test_any_change_a_refresh_would_find_sends_the_check_to_the_scan(fresh_index, home, change):
    roots = _roots(home)
    refresh_locked(fresh_index, roots)
    change(home)
    assert not _settled_check(fresh_index, roots)
    assert pending_changes(fresh_index, roots) >= 1
    assert _units_refreshed(refresh_locked(fresh_index, roots)) >= 1
    assert _settled_check(fresh_index, roots)  # and the refresh records its scan again


def test_folders_changed_too_recently_to_trust_their_times_are_not_vouched_for(fresh_index, home):
    roots = _roots(home)
    refresh_locked(fresh_index, roots)
    assert not as_last_refresh_left(fresh_index, roots, now_ns=time.time_ns())  # all written just now
    assert pending_changes(fresh_index, roots) == 0  # the scan, which lists them again, finds nothing


def test_a_refresh_of_other_roots_since_is_not_this_scan(fresh_index, home):
    roots = _roots(home)
    refresh_locked(fresh_index, roots)
    refresh_locked(fresh_index, {"claude": roots["claude"]})
    assert not _settled_check(fresh_index, roots)
    assert _settled_check(fresh_index, {"claude": roots["claude"]})


def test_roots_in_another_order_are_another_scan(fresh_index, home):
    """The first root to list a path claims it, so the order is part of what was scanned."""
    roots = _roots(home)
    refresh_locked(fresh_index, roots)
    assert not _settled_check(fresh_index, dict(reversed(list(roots.items()))))


def test_a_write_to_the_index_since_the_refresh_is_not_vouched_for(fresh_index, home):
    roots = _roots(home)
    refresh_locked(fresh_index, roots)
    advance_revision(fresh_index, "another writer")
    assert not _settled_check(fresh_index, roots)


def test_a_folder_holding_a_link_is_left_to_the_scan(fresh_index, home):
    """A scan resolves every link's target again; the check does not, so it does not vouch for one."""
    roots = _roots(home)
    session = _one(home, ".claude/projects/*/*.jsonl")
    os.symlink(session, session.with_name("linked.jsonl"))
    refresh_locked(fresh_index, roots)
    assert not _settled_check(fresh_index, roots)
    assert pending_changes(fresh_index, roots) == 0


def test_a_missing_root_is_left_to_the_scan(fresh_index, home):
    roots = _roots(home)
    refresh_locked(fresh_index, roots)
    shutil.rmtree(home / ".pi")
    assert not _settled_check(fresh_index, roots)
    assert pending_changes(fresh_index, roots) >= 1


def test_a_unit_stored_under_another_root_is_not_left_unchecked(fresh_index, home):
    """A refresh of a narrower root stored its units under that root; a later refresh of the wider
    root finds them unchanged and leaves them there, so the wider root's rows alone are not all."""
    roots = _roots(home)
    session = _one(home, ".claude/projects/*/*.jsonl")
    refresh_locked(fresh_index, {"claude": [session.parent]})
    refresh_locked(fresh_index, roots)
    _append(session)
    assert not _settled_check(fresh_index, roots)
    assert pending_changes(fresh_index, roots) >= 1


def _plan(connection, sql: str, parameters: tuple) -> str:
    return " ".join(row[-1] for row in connection.execute(f"EXPLAIN QUERY PLAN {sql}", parameters))


def test_the_check_reads_units_from_an_index_that_holds_them(tmp_path, home):
    """A `files` row holds its resume state (kilobytes): the check must not read one per unit."""
    roots = _roots(home)
    path = index_file(tmp_path / "index")
    refresh_index(path, roots)
    before_migration(
        path,
        "0013_files_scan_index",
        undo=("DROP INDEX files_scan", "CREATE INDEX files_root ON files (source, root)"),
    )
    older = sqlite3.connect(path)
    assert "COVERING INDEX" not in _plan(older, _UNITS, ("kimi", "/"))
    older.close()
    connection = connect(path)  # the migration
    try:
        assert "COVERING INDEX files_scan" in _plan(connection, _UNITS, ("kimi", "/"))
        indexes = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "files_scan" in indexes and "files_root" not in indexes  # it serves what that one did
        assert "files_scan" in _plan(connection, _KNOWN + " WHERE source = ? AND root = ?", ("kimi", "/"))
        # a lookup's few problem files are still found through their own partial index
        assert "INDEX files_problems" in _plan(connection, PROBLEM_FILES, ("kimi", "/"))
        assert _settled_check(connection, roots)  # the migration changed no content
    finally:
        connection.close()


def test_the_check_digests_a_kimi_session_as_the_scan_does(home):
    """Every shape `_kimi_members` reads: a `context.jsonl` and a top-level `wire.jsonl`, several
    agents, one without `wire.jsonl`, a file among the agents, an agent's `wire.jsonl` linked to
    another inside the session: the same digest from the stored listings as from the scan."""
    session = _one(home, ".kimi-code/sessions/*/*/state.json").parent
    (session / "context.jsonl").write_text('{"role":"user"}\n')
    (session / "wire.jsonl").write_text('{"type":"note"}\n')
    agents = session / "agents"
    for agent in ("helper", "empty", "linked"):
        (agents / agent).mkdir()
    (agents / "helper" / "wire.jsonl").write_text('{"type":"note"}\n')
    (agents / "notes.txt").write_text("not an agent\n")
    os.symlink(agents / "helper" / "wire.jsonl", agents / "linked" / "wire.jsonl")
    root = default_roots(home)["kimi"]
    listings = Listings()
    state, units = scan_root(root, "kimi", listings)
    assert state == "indexed" and session.as_posix() in {unit.path for unit in units}
    for unit in units:
        assert unit.signature is not None
        assert stored_kimi_digest(unit.path, listings.updated) == unit.signature.digest


def test_a_kimi_listing_with_a_link_is_left_to_the_scan(home):
    session = _one(home, ".kimi-code/sessions/*/*/state.json").parent
    os.symlink(session / "state.json", session / "context.jsonl")
    listings = Listings()
    scan_root(default_roots(home)["kimi"], "kimi", listings)
    assert stored_kimi_digest(str(session), listings.updated) is None
