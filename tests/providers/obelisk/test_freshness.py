"""Freshness from Obelisk's own index_state rows against the enablement's files on disk."""

import os
from pathlib import Path

import pytest

from fixtures.obelisk_stand_in import StandIn
from obelisk_session_evidence.providers.obelisk.answer import StateRow, TemplateAnswer
from obelisk_session_evidence.providers.obelisk.freshness import (
    FileState,
    SessionRoot,
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
