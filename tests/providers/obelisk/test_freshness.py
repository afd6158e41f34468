"""Freshness from Obelisk's own index_state rows against the enablement's files on disk."""

import os
from pathlib import Path

import pytest

from fixtures.obelisk_stand_in import StandIn
from obelisk_session_evidence.providers.obelisk.answer import StateRow, TemplateAnswer
from obelisk_session_evidence.providers.obelisk.freshness import (
    FileState,
    SessionRoot,
    ShrinkMemory,
    index_freshness,
    index_revision,
    session_files,
)
from obelisk_session_evidence.providers.obelisk.template import LAST_BUILD
from tests.providers.obelisk.conftest import SPOTTER_ROOT, enablement_for, provider_for, request_for

FILE = "/h/.claude/projects/p/s.jsonl"
ON_DISK = FileState(FILE, 1796107178868.556, 767593, 3309987)
ROW = StateRow(
    jsonl_path=FILE,
    mtime=1796107178868.556,
    lines_processed=233,
    cursor="1796107178868.556:233:767593:1796107178868.556:3309987",
)
BUILD = StateRow(jsonl_path=LAST_BUILD, mtime=1796107180000.0, lines_processed=0, cursor=None)


def _answer(state: list[StateRow], **changes: object) -> TemplateAnswer:
    fields = dict(
        template="obelisk-session-evidence/3",
        state=state,
        state_failed=False,
        calls=[],
        calls_failed=False,
        hits=[],
        hits_dropped=0,
        search_failed=0,
    )
    fields.update(changes)
    return TemplateAnswer(**fields)


@pytest.mark.parametrize(
    ("state", "files", "changes", "expected"),
    [
        ([BUILD, ROW], [ON_DISK], {}, "fresh"),
        ([BUILD, ROW], [FileState(FILE, ON_DISK.mtime_ms + 5000, 767600, 3309987)], {}, "stale"),
        ([BUILD, ROW], [FileState(FILE, ON_DISK.mtime_ms, 767593, 42)], {}, "stale"),
        ([BUILD, ROW], [], {}, "stale"),  # a file Obelisk indexed is gone
        ([BUILD], [ON_DISK], {}, "incomplete"),  # a file is missing from Obelisk's index
        ([ROW], [ON_DISK], {}, "incomplete"),  # never built
        ([BUILD, ROW], [ON_DISK], {"state_failed": True}, "unknown"),
        ([BUILD, ROW], None, {}, "unknown"),  # too many files to compare
        ([BUILD, ROW], [ON_DISK], {"calls_failed": True}, "incomplete"),
        ([BUILD, ROW], [ON_DISK], {"search_failed": 1}, "incomplete"),
    ],
)
def test_freshness_rules(state, files, changes, expected) -> None:
    assert index_freshness(_answer(state, **changes), files, state_cap=100) == expected


def test_a_full_state_read_is_unknown() -> None:
    assert index_freshness(_answer([BUILD, ROW]), [ON_DISK], state_cap=2) == "unknown"


def test_the_revision_follows_the_cursors() -> None:
    assert index_revision([]) == "unknown"
    moved = ROW.model_copy(update={"cursor": "1:2:3:4:5"})
    assert index_revision([BUILD, ROW]) != index_revision([BUILD, moved])


def test_fresh_after_the_query_refreshed(stand_in: StandIn, tmp_path: Path) -> None:
    """Each --query refreshes first (recording 4.04): an appended line is seen, and fresh."""
    import subprocess

    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    short = next(stand_in.home.rglob("short.jsonl"))
    with short.open("a") as handle:
        handle.write(short.read_text().splitlines()[-1] + "\n")
    enablement = enablement_for(stand_in.home, roots=[SPOTTER_ROOT], sources=["claude"])
    answer = provider_for(stand_in, enablement, tmp_path / "work").search(request_for("Phoenix"))
    assert answer.result.freshness == "fresh"
    assert session_files([SessionRoot("claude", str(stand_in.home / ".claude" / "projects"))])


def test_sources_obelisk_does_not_index_are_incomplete(stand_in: StandIn, tmp_path: Path) -> None:
    """The 0.2.3 build has no DSH provider: DSH session files never reach its index."""
    import subprocess

    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    dsh = stand_in.home / ".deepseek" / "sessions" / "--x--" / "id"
    dsh.mkdir(parents=True)
    (dsh / "session.jsonl").write_text("{}\n")
    enablement = enablement_for(stand_in.home, roots=[SPOTTER_ROOT], sources=["claude", "dsh"])
    answer = provider_for(stand_in, enablement, tmp_path / "work").search(request_for("Phoenix"))
    assert answer.result.freshness == "incomplete"


def test_an_empty_obelisk_index_answers_incomplete_at_once(stand_in: StandIn, tmp_path: Path) -> None:
    """No index yet: no --query (it would build the whole index inside the budget)."""
    enablement = enablement_for(stand_in.home, roots=[SPOTTER_ROOT], sources=["claude"])
    provider = provider_for(stand_in, enablement, tmp_path / "work")
    answer = provider.search(request_for("Phoenix"))
    assert (answer.result.freshness, answer.result.items, answer.prior_calls) == ("incomplete", [], [])
    assert stand_in.queries() == []
    provider.build_index(timeout_s=60)
    assert (stand_in.home / ".obelisk" / "obelisk.sqlite").is_file()
    assert provider.search(request_for("Phoenix")).result.freshness == "fresh"
    assert os.listdir(tmp_path / "work") == []


def test_a_shrunk_file_is_stale_until_a_full_build(stand_in: StandIn, tmp_path: Path) -> None:
    """Recordings 4.08-4.11: the refresh re-reads a shrunk file (its row matches the file again)
    but keeps the rows of the removed lines until a full `--build`."""
    import subprocess

    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    short = next(stand_in.home.rglob("short.jsonl"))
    original = short.read_bytes()
    enablement = enablement_for(stand_in.home, roots=[SPOTTER_ROOT], sources=["claude"])
    cache = tmp_path / "cache"
    provider = provider_for(stand_in, enablement, tmp_path / "work", probe_cache_dir=cache)
    with short.open("a") as handle:
        handle.write(original.decode().splitlines()[-1] + "\n")
    assert provider.search(request_for("Phoenix")).result.freshness == "fresh"
    short.write_bytes(original)
    assert provider.search(request_for("Phoenix")).result.freshness == "stale"
    again = provider_for(stand_in, enablement, tmp_path / "work", probe_cache_dir=cache)
    assert again.search(request_for("Phoenix")).result.freshness == "stale", "remembered in the cache folder"
    assert not any("/" in name or "home" in name for name in os.listdir(cache) if name.endswith(".json"))
    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    assert again.search(request_for("Phoenix")).result.freshness == "fresh"


def test_a_replaced_file_is_stale() -> None:
    memory = ShrinkMemory()
    full = StateRow(jsonl_path="__messages_fts_synced__", mtime=1.0, lines_processed=0, cursor=None)
    assert memory.observe([BUILD, full, ROW]) is False
    replaced = ROW.model_copy(update={"cursor": "1796107178868.556:233:767593:1796107178868.556:42"})
    assert memory.observe([BUILD, full, replaced]) is True
    rebuilt = full.model_copy(update={"mtime": 2.0})
    assert memory.observe([BUILD, rebuilt, replaced]) is False


def test_kimi_sessions_are_compared_by_folder(tmp_path: Path) -> None:
    """Inferred (no recording indexed Kimi): Obelisk keys a Kimi session by its folder."""
    root = tmp_path / ".kimi-code" / "sessions"
    session = root / "workspace-1" / "session-1"
    (session / "agents" / "main").mkdir(parents=True)
    (session / "state.json").write_text("{}")
    wire = session / "agents" / "main" / "wire.jsonl"
    wire.write_text("{}\n")
    files = session_files([SessionRoot("kimi", str(root))])
    assert [file.path for file in files] == [str(session)]
    newest = max(file.stat().st_mtime_ns for file in (wire, session / "state.json")) / 1_000_000
    row = StateRow(jsonl_path=str(session), mtime=newest, lines_processed=1, cursor=None)
    assert index_freshness(_answer([BUILD, row]), files, state_cap=100) == "fresh"
    behind = row.model_copy(update={"mtime": newest - 5000})
    assert index_freshness(_answer([BUILD, behind]), files, state_cap=100) == "stale"
    assert index_freshness(_answer([BUILD]), files, state_cap=100) == "incomplete"


def test_paths_are_compared_after_resolving_links_and_the_home_folder(stand_in: StandIn, tmp_path: Path) -> None:
    """Obelisk records paths as it walked them from its HOME; the enablement names the session
    folder through a link: the same files, so fresh (not `incomplete`)."""
    import subprocess

    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    link = tmp_path / "linked-projects"
    link.symlink_to(stand_in.home / ".claude" / "projects")
    enablement = enablement_for(stand_in.home, roots=[SPOTTER_ROOT], sources=["claude"]).model_copy(
        update={"source_roots": {"claude": str(link)}}
    )
    answer = provider_for(stand_in, enablement, tmp_path / "work").search(request_for("Phoenix"))
    assert answer.result.freshness == "fresh"
