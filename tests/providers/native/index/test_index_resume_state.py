"""The resume state a cursor stores: MessagePack that decodes to the same state, or to None."""

import json
from pathlib import Path

import msgspec
import pytest

from obelisk_session_evidence.providers.native.index.cursor import decode_resume, encode_resume
from obelisk_session_evidence.providers.native.index.refresh import refresh_locked
from obelisk_session_evidence.providers.native.parsers import parse_session_file
from obelisk_session_evidence.providers.native.parsers.outcome import ResumeState
from obelisk_session_evidence.providers.native.records import MessageRecord, SessionRecord, ToolCallRecord
from tests.providers.native.conftest import real_files


def test_resume_state_round_trips_every_field() -> None:
    state = ResumeState(
        session=SessionRecord("codex", "s1", cwd="/work/repo", git_branch="main", title="Fix it"),
        open_calls=(ToolCallRecord("s1", "c1", "exec_command", "make test", ("a.py", "b.py"), True, 2, "boom"),),
        open_messages=(MessageRecord("s1", "m1", "assistant", "2026-01-01T00:00:00Z", "partial", False),),
        process_calls=(("41", "c1"),),
        stdin_calls=(("c2", "c1"),),
        unpaired_messages=("m2",),
        format_version="codex-0.125.0",
    )
    stored = encode_resume(state)
    assert isinstance(stored, bytes)
    assert decode_resume(stored) == state
    assert isinstance(decode_resume(stored).open_calls[0].file_paths, tuple)


@pytest.mark.parametrize("path", real_files("codex-codemie/*.jsonl") + real_files("pi-badlogic/*/*.jsonl"), ids=str)
def test_resume_state_of_real_sessions_round_trips(path: Path) -> None:
    source = "codex" if "codex" in str(path) else "pi"
    outcome = parse_session_file(path, source)
    assert decode_resume(encode_resume(outcome.resume)) == outcome.resume


@pytest.mark.parametrize(
    "stored",
    [
        None,
        b"",
        b"\x93\x01",  # truncated
        msgspec.msgpack.encode({"session": {"source": "not-an-agent", "session_id": "s"}}),
        msgspec.msgpack.encode({"open_calls": [{"call_id": "c"}]}),  # required fields missing
        msgspec.msgpack.encode([1, 2, 3]),
        json.dumps({"session": None}),  # the JSON text earlier versions stored
    ],
)
def test_decode_resume_rejects_what_it_did_not_write(stored) -> None:
    assert decode_resume(stored) is None


def test_refresh_after_an_older_json_resume_state_rereads_the_file(fresh_index, transcript, tmp_path):
    session = transcript()
    session.user("first message").write()
    roots = {"claude": [tmp_path / "claude"]}
    refresh_locked(fresh_index, roots)
    fresh_index.execute("UPDATE files SET resume_state = ?", (json.dumps({"session": None}),))
    session.user("second message").write()
    report = refresh_locked(fresh_index, roots)
    assert (report.files_appended, report.files_reread) == (0, 1)
    bodies = sorted(body for (body,) in fresh_index.execute("SELECT body FROM entry_text"))
    assert bodies == ["first message", "second message"]
    (stored,) = fresh_index.execute("SELECT resume_state FROM files").fetchone()
    assert isinstance(stored, bytes) and decode_resume(stored) is not None
