"""What makes a replay fast without changing a verdict: one connection and one freshness reading
for all of a replay's as-of lookups, prior calls built once per row, token counts remembered."""

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.replay.encoder import REMEMBERED_TEXTS, RememberingEncoder
from obelisk_session_evidence.state.paths import state_paths
from tests.replay.history import History, enable

TEST = "pytest tests/test_auth.py"


@pytest.fixture
def provider(tmp_path: Path) -> NativeIndexProvider:
    root = tmp_path / "claude"
    sessions = History(root)
    sessions.session("one").bash(TEST, "FAILED test_login", exit_code=1).bash("ls", "src").write()
    sessions.session("two").bash(TEST, "FAILED test_login", exit_code=1).bash(TEST, "1 passed").write()
    paths = state_paths()
    source = NativeIndexProvider(paths.index_dir, enable(paths, root))
    assert source.refresh() == "fresh"
    return source


def _request() -> HistoricalEvidenceRequest:
    return HistoricalEvidenceRequest(
        request_id="req-1",
        situation_id="situation-1",
        trigger="operator_requested_history",
        scope={"agent_id": "agent-a", "project_id": "project-a", "repository_id": "repo-a"},
        evidence_types=["prior_failure", "decision", "file_history", "tool_outcome", "summary"],
        query_terms=[TEST],
        limits={"max_sessions": 20, "max_items": 50, "max_snippet_chars": 600, "max_total_chars": 20000},
    )


def test_lookups_while_reading_open_the_index_once_and_answer_alike(provider, monkeypatch):
    cuts = [timed.cut for timed in provider.timed_calls(provider.timeline())]
    alone = [provider.as_of(cut).search(_request()) for cut in cuts]
    opened = _count_opens(monkeypatch)
    with provider.reading():
        shared = [provider.as_of(cut).search(_request()) for cut in cuts]
        own = [provider.as_of(replace(cut, own_session_only=True)).search(_request()) for cut in cuts]
    assert len(opened) == 1
    assert shared == alone
    assert [len(answer.prior_calls) for answer in shared] == [0, 1, 1, 2]
    assert [len(answer.prior_calls) for answer in own] == [0, 1, 0, 1]


def test_a_lookup_after_reading_opens_the_index_again(provider, monkeypatch):
    cut = next(iter(provider.timed_calls(provider.timeline()))).cut
    with provider.reading():
        pass
    opened = _count_opens(monkeypatch)
    provider.as_of(cut).search(_request())
    assert len(opened) == 1


def _count_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The databases opened from now on, counted at the sqlite3 boundary: the provider keeps no count."""
    opened: list[str] = []
    real_connect = sqlite3.connect

    def counted(database, *args, **kwargs):
        opened.append(database)
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", counted)
    return opened


class _Counting:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode_ordinary(self, text: str) -> list[int]:
        self.texts.append(text)
        return [ord(character) for character in text]


def test_the_remembering_encoder_counts_a_text_once_and_forgets_the_least_recent():
    inner = _Counting()
    encoder = RememberingEncoder(inner)
    first = encoder.encode_ordinary("ab")
    first.append(0)  # a caller's change is its own
    assert encoder.encode_ordinary("ab") == [97, 98]
    others = [f"text {number}" for number in range(REMEMBERED_TEXTS - 1)]
    for text in others:  # now as many texts as it remembers
        encoder.encode_ordinary(text)
    encoder.encode_ordinary("ab")  # used last: the first other text is now the least recent
    encoder.encode_ordinary("d")  # forgets it
    encoder.encode_ordinary("ab")
    encoder.encode_ordinary(others[0])
    assert inner.texts == ["ab", *others, "d", others[0]]
