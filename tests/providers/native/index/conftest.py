"""Index test inputs: an in-memory index, and a factory of Claude Code transcripts."""

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.index.store import MEMORY, connect
from tests.providers.native.index.transcripts import ClaudeTranscript


@pytest.fixture
def fresh_index() -> Iterator[sqlite3.Connection]:
    """A private, migrated, in-memory index."""
    connection = connect(MEMORY)
    yield connection
    connection.close()


@pytest.fixture
def transcript(tmp_path: Path):
    """A factory of Claude transcripts under `tmp_path/claude` (the Claude root)."""

    def make(session_id: str = "s1", cwd: str = "/work/repo") -> ClaudeTranscript:
        return ClaudeTranscript(tmp_path / "claude", session_id, cwd)

    return make
