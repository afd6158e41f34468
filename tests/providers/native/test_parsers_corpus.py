"""Every real session file of the five agents parses without an exception; skips are pinned."""

from pathlib import Path

import pytest

from fixtures.shared import REAL_CORPUS_SOURCES
from obelisk_session_evidence.contracts.config import SourceKind
from obelisk_session_evidence.providers.native.parsers import detect_source, iter_session_paths, parse_session_file
from tests.providers.native.conftest import REAL_CORPUS, real_files, requires_real_corpus

pytestmark = requires_real_corpus

SESSION_FILES = [
    path for path in real_files("*/**/*.json*") if path.relative_to(REAL_CORPUS).parts[0] in REAL_CORPUS_SOURCES
]
SKIPPED_BY_FILE: dict[str, dict[str, int]] = {}
"""Files with skipped records and why. Empty: every record of the real corpus is understood."""


def _source_of(path: Path) -> SourceKind:
    return REAL_CORPUS_SOURCES[path.relative_to(REAL_CORPUS).parts[0]]


def test_real_files_match_the_notice() -> None:
    folders = [p.relative_to(REAL_CORPUS).parts[0] for p in SESSION_FILES]
    assert {folder: folders.count(folder) for folder in REAL_CORPUS_SOURCES} == {
        "claude-spotter": 20,  # 8 sessions (5 long + 3 small) and 12 sub-agent files
        "claude-codemie": 7,  # 4 sessions, and a session with 2 sidechain agent files
        "codex-codemie": 2,
        "kimi-moonshotai": 8,  # sample-main (3 files), sample-compaction (2), legacy kimi-cli (3)
        "pi-badlogic": 2,
        "dsh-deepseek": 5,
    }


@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: str(p.relative_to(REAL_CORPUS)))
def test_parse_session_file_real_corpus_without_errors(path: Path) -> None:
    source = _source_of(path)
    outcome = parse_session_file(path, source)
    assert dict(outcome.skipped_records) == SKIPPED_BY_FILE.get(str(path.relative_to(REAL_CORPUS)), {})
    assert outcome.sessions and all(s.source == source for s in outcome.sessions)
    assert outcome.end_offset > 0
    assert all(m.text.strip() for m in outcome.messages)
    assert all(c.session_id in {s.session_id for s in outcome.sessions} for c in outcome.tool_calls)


@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: str(p.relative_to(REAL_CORPUS)))
def test_detect_source_real_corpus(path: Path) -> None:
    assert detect_source(path) == _source_of(path)


@pytest.mark.parametrize(
    ("folder", "source", "units"),
    [
        ("claude-spotter", "claude", 20),
        ("claude-codemie", "claude", 7),
        ("codex-codemie", "codex", 2),
        ("pi-badlogic", "pi", 2),
        ("kimi-moonshotai", "kimi", 3),
        ("dsh-deepseek", "dsh", 3),  # snapshot names: only `session.jsonl` is a DSH session file
    ],
)
def test_iter_session_paths_real_corpus(folder: str, source: SourceKind, units: int) -> None:
    assert len(list(iter_session_paths(REAL_CORPUS / folder, source))) == units
