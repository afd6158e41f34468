"""Incremental reading: resume from `end_offset`, half-written tails, damaged lines, huge records."""

import gc
import json
import tracemalloc
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.config import SourceKind
from obelisk_session_evidence.providers.native.parsers import ParseOutcome, ResumeState, parse_session_file
from obelisk_session_evidence.providers.native.parsers._reading import MAX_RECORD_BYTES
from obelisk_session_evidence.qualify.session_writers import FixtureManifest
from tests.providers.native.conftest import REAL_CORPUS, requires_real_corpus


def _records_by_key(outcomes: list[ParseOutcome]) -> tuple[dict, dict, list]:
    """Fold outcomes the way the index upserts them: later versions of a uid or call id win."""
    messages, calls, summaries = {}, {}, []
    for outcome in outcomes:
        messages.update((m.record_uid, m) for m in outcome.messages)
        calls.update((c.call_id, c) for c in outcome.tool_calls)
        summaries.extend(outcome.summaries)
    return messages, calls, summaries


def _parse_in_two(path: Path, source: SourceKind, split_line: int, tmp_path: Path) -> list[ParseOutcome]:
    """Parse the first `split_line` lines, append the rest, and resume from where parsing stopped."""
    lines = path.read_bytes().splitlines(keepends=True)
    tmp_path.mkdir(parents=True, exist_ok=True)
    growing = tmp_path / path.name
    growing.write_bytes(b"".join(lines[:split_line]))
    first = parse_session_file(growing, source)
    with open(growing, "ab") as tail:
        tail.write(b"".join(lines[split_line:]))
    second = parse_session_file(growing, source, start_offset=first.end_offset, resume=first.resume)
    assert second.end_offset == growing.stat().st_size
    return [first, second]


def _assert_resumed_equals_whole(path: Path, source: SourceKind, parts: list[ParseOutcome]) -> None:
    whole = parse_session_file(path, source)
    assert _records_by_key(parts) == _records_by_key([whole])
    assert parts[-1].sessions == whole.sessions
    first, second = parts
    earlier = {m.record_uid: m for m in first.messages} | {c.call_id: c for c in first.tool_calls}
    for record in second.messages + second.tool_calls:
        key = getattr(record, "record_uid", None) or record.call_id
        # Only new records, or records the new lines completed (a call's output, a message block).
        assert earlier.get(key) != record


@pytest.mark.parametrize("source", ["claude", "codex", "pi", "dsh"])
def test_parse_session_file_resumes_at_every_line(
    generated: FixtureManifest, source: SourceKind, tmp_path: Path
) -> None:
    expectation = generated.for_source(source)[1]
    path = expectation.path
    if source == "dsh":  # DSH resumes plain files; the generated ones are zstd, so decompress one.
        plain = tmp_path / "plain" / "session.jsonl"
        plain.parent.mkdir()
        plain.write_bytes(b"".join(line for line in _zstd_lines(path)))
        path = plain
    for split_line in range(1, len(path.read_bytes().splitlines())):
        parts = _parse_in_two(path, source, split_line, tmp_path / f"split-{split_line}")
        _assert_resumed_equals_whole(path, source, parts)


@pytest.mark.parametrize("source", ["claude", "codex", "pi"])
def test_parse_session_file_resumes_one_line_at_a_time(
    generated: FixtureManifest, source: SourceKind, tmp_path: Path
) -> None:
    path = generated.for_source(source)[1].path
    growing = tmp_path / path.name
    growing.write_bytes(b"")
    outcomes = [parse_session_file(growing, source)]
    for line in path.read_bytes().splitlines(keepends=True):
        with open(growing, "ab") as tail:
            tail.write(line)
        previous = outcomes[-1]
        resumed = parse_session_file(growing, source, start_offset=previous.end_offset, resume=previous.resume)
        outcomes.append(resumed)
    whole = parse_session_file(path, source)
    assert _records_by_key(outcomes) == _records_by_key([whole])
    assert outcomes[-1].sessions == whole.sessions


def _zstd_lines(path: Path) -> list[bytes]:
    import zstandard

    data = zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes())
    return data.splitlines(keepends=True)


REAL_RESUMABLE = [
    ("claude", "claude-codemie/session-9eda1058.jsonl"),
    ("claude", "claude-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"),
    ("codex", "codex-codemie/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"),
    ("codex", "codex-codemie/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"),
    ("pi", "pi-badlogic/--Users-badlogic-workspaces-pi-mono--/before-compaction.jsonl"),
    ("dsh", "dsh-deepseek/fs-policy-reject/session.jsonl"),
]


@requires_real_corpus
@pytest.mark.parametrize(("source", "relative"), REAL_RESUMABLE)
@pytest.mark.parametrize("fraction", [0.2, 0.5, 0.77])
def test_parse_session_file_resumes_real_files(
    source: SourceKind, relative: str, fraction: float, tmp_path: Path
) -> None:
    path = REAL_CORPUS / relative
    split_line = max(1, int(len(path.read_bytes().splitlines()) * fraction))
    _assert_resumed_equals_whole(path, source, _parse_in_two(path, source, split_line, tmp_path))


def test_parse_session_file_codex_resume_joins_a_poll_across_the_boundary(
    generated: FixtureManifest, tmp_path: Path
) -> None:
    # Stop right after "Process running with session ID …": the exit code arrives after resuming.
    path = generated.for_source("codex")[0].path
    lines = path.read_bytes().splitlines(keepends=True)
    split = next(i for i, line in enumerate(lines) if b"Process running with session ID" in line) + 1
    first, second = _parse_in_two(path, "codex", split, tmp_path)
    assert first.resume.process_calls and first.resume.open_calls
    (call,) = [c for c in second.tool_calls if c.command_text == "pytest tests/test_auth.py -x"][:1]
    assert (call.exit_code, call.failed) == (1, True)


def test_parse_session_file_does_not_consume_a_half_written_line(tmp_path: Path) -> None:
    line = {
        "type": "message",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "second"}]},
    }
    header = {"type": "session", "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/r"}
    complete = json.dumps(header) + "\n"
    half = json.dumps(line)[:40]
    path = tmp_path / "x_s.jsonl"
    path.write_text(complete + half)
    first = parse_session_file(path, "pi")
    assert first.end_offset == len(complete.encode()) and first.messages == () and first.skipped_total == 0
    path.write_text(complete + json.dumps(line) + "\n")
    second = parse_session_file(path, "pi", start_offset=first.end_offset, resume=first.resume)
    assert [m.text for m in second.messages] == ["second"]
    assert second.messages[0].session_id == "s"


def test_parse_session_file_resume_without_state_keeps_the_session_id(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2026-01-01T00-00-00-00000000-0000-4000-a000-000000000001.jsonl"
    meta = {"type": "session_meta", "payload": {"id": "thread-1", "cwd": "/r"}}
    path.write_text(json.dumps({"timestamp": "2026-01-01T00:00:00.000Z"} | meta) + "\n")
    first = parse_session_file(path, "codex")
    event = {"type": "event_msg", "payload": {"type": "user_message", "message": "go"}}
    with open(path, "a") as tail:
        tail.write(json.dumps({"timestamp": "2026-01-01T00:00:01.000Z"} | event) + "\n")
    restored = ResumeState(session=first.sessions[0])  # what an index can rebuild from its rows
    second = parse_session_file(path, "codex", start_offset=first.end_offset, resume=restored)
    assert [(m.session_id, m.text) for m in second.messages] == [("thread-1", "go")]


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (b'{"type": "user", "uuid": \n', "invalid_json"),
        (b"[1, 2, 3]\n", "not_an_object"),
        (b'{"type": "brand-new-record", "x": 1}\n', "unknown_type"),
        (b'{"type": "user", "message": {"role": "user", "content": "no uuid"}}\n', "missing_fields"),
    ],
)
def test_parse_session_file_counts_damaged_lines_and_continues(tmp_path: Path, damage: bytes, reason: str) -> None:
    def user(uuid: str, text: str) -> bytes:
        record = {"type": "user", "uuid": uuid, "sessionId": "s", "timestamp": "2026-01-01T00:00:00.000Z"}
        return json.dumps(record | {"message": {"role": "user", "content": text}}).encode() + b"\n"

    path = tmp_path / "s.jsonl"
    path.write_bytes(user("u1", "before") + damage + user("u2", "after"))
    outcome = parse_session_file(path, "claude")
    assert dict(outcome.skipped_records) == {reason: 1}
    assert [m.text for m in outcome.messages] == ["before", "after"]


def test_parse_session_file_replaces_invalid_utf8_and_counts_it(tmp_path: Path) -> None:
    record = b'{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-01-01T00:00:00.000Z",'
    record += b'"message":{"role":"user","content":"caf\xe9 \xff ok"}}\n'
    path = tmp_path / "s.jsonl"
    path.write_bytes(record)
    outcome = parse_session_file(path, "claude")
    assert dict(outcome.skipped_records) == {"bad_encoding": 1}
    assert outcome.messages[0].text == "caf\ufffd \ufffd ok"


def test_parse_session_file_streams_a_record_just_under_the_size_cap(tmp_path: Path) -> None:
    size = MAX_RECORD_BYTES - 1024 * 1024
    path = tmp_path / "rollout-2026-01-01T00-00-00-00000000-0000-4000-a000-000000000002.jsonl"
    call = {"type": "function_call", "name": "exec_command", "call_id": "c1"}
    call["arguments"] = json.dumps({"cmd": "cat big.log"})
    head = [
        {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": {"id": "big"}},
        {"timestamp": "2026-01-01T00:00:01.000Z", "type": "response_item", "payload": call},
    ]
    with open(path, "w") as out:
        out.writelines(json.dumps(record) + "\n" for record in head)
        out.write('{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":')
        out.write('{"type":"function_call_output","call_id":"c1",')
        out.write('"output":"Process exited with code 3\\nOutput:\\n')
        out.write("x" * size)
        out.write('"}}\n')
    gc.collect()
    tracemalloc.start()
    try:
        outcome = parse_session_file(path, "codex")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    (call,) = outcome.tool_calls
    assert (call.exit_code, call.failed) == (3, True)
    assert call.output_excerpt is not None and len(call.output_excerpt) < 2100
    # A generous bound: the line is held as bytes, then as text, then parsed - never all three.
    assert peak < 3 * size, f"peak {peak / size:.2f}x the line size"


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"session": {"unknown_field": 1}}'])
def test_resume_state_from_json_rejects_what_it_did_not_write(text: str) -> None:
    assert ResumeState.from_json(text) is None


def test_resume_state_json_round_trip_resumes_the_same(generated: FixtureManifest, tmp_path: Path) -> None:
    path = generated.for_source("codex")[0].path
    lines = path.read_bytes().splitlines(keepends=True)
    split = next(i for i, line in enumerate(lines) if b"Process running with session ID" in line) + 1
    first, second = _parse_in_two(path, "codex", split, tmp_path)
    restored = ResumeState.from_json(first.resume.to_json())
    assert restored == first.resume
    again = parse_session_file(tmp_path / path.name, "codex", start_offset=first.end_offset, resume=restored)
    assert again == second
