"""One session file reached through many links is indexed once, and a root's links are capped.

Before: 1,000 symbolic links inside the root to one 1.8 MB file made a 1.71 GB index and a 181 s
refresh (each link was a unit of its own).
"""

import os
import sqlite3
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.scan import MAX_LINKS
from obelisk_session_evidence.providers.native.index.store import index_file
from tests.providers.native.index.transcripts import ClaudeTranscript
from tests.reliability.figures import FIGURES, FULL

pytestmark = pytest.mark.reliability

LINKS = 1000 if FULL else 200


def _session(root: Path) -> Path:
    transcript = ClaudeTranscript(root, "linked-once", "/work/alpha").user("deploy the service")
    for number in range(20):
        transcript = transcript.bash(f"make deploy-{number}", "error: deploy failed\n" * 50, exit_code=2)
    return transcript.write()


def _counts(path: Path) -> tuple[int, int]:
    connection = sqlite3.connect(path)
    try:
        (files,) = connection.execute("SELECT count(*) FROM files").fetchone()
        (entries,) = connection.execute("SELECT count(*) FROM entries").fetchone()
    finally:
        connection.close()
    return files, entries


def test_a_file_behind_many_links_is_one_unit(tmp_path: Path) -> None:
    root = tmp_path / "claude"
    session = _session(root)
    single = refresh_index(index_file(tmp_path / "single"), {"claude": [root]})
    links = root / "links"
    links.mkdir()
    for number in range(LINKS):
        os.symlink(session, links / f"copy-{number:04d}.jsonl")
    os.link(session, links / "hard.jsonl")
    FIGURES.cases["linked_session_files"] += LINKS + 1
    report = refresh_index(index_file(tmp_path / "linked"), {"claude": [root]})
    assert report.freshness == single.freshness == "fresh"
    assert _counts(index_file(tmp_path / "linked")) == _counts(index_file(tmp_path / "single"))
    assert _counts(index_file(tmp_path / "linked"))[0] == 1


def test_past_the_cap_links_are_not_followed_and_the_root_is_incomplete(tmp_path: Path) -> None:
    root = tmp_path / "claude"
    targets = [ClaudeTranscript(root / "real", f"s{number}", "/work/alpha").user("hi").write() for number in range(5)]
    links = root / "links"
    links.mkdir()
    for number in range(MAX_LINKS + 2):  # past the cap
        os.symlink(targets[number % len(targets)], links / f"link-{number:04d}.jsonl")
    report = refresh_index(index_file(tmp_path / "index"), {"claude": [root]})
    assert report.freshness == "incomplete"
    assert report.unreadable_roots == 1
