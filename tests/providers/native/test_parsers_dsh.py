"""DSH sessions: the real snapshots placed in DSH's own layout, zstd frames, versions, fork seeds."""

import json
import shutil
from pathlib import Path

import pytest
import zstandard

from obelisk_session_evidence.providers.native.parsers import (
    canonical_session_file,
    iter_session_paths,
    parse_session_file,
)
from tests.providers.native.conftest import json_lines, place_dsh_snapshots, requires_real_corpus

pytestmark = requires_real_corpus

# Publisher: dsh-deepseek/SOURCE.md (snapshot, records after the header, tool/call, isError).
DSH_COUNTS = [
    ("fs-policy-reject/session.jsonl", 60, 3, 1),
    ("subagent-mixed/session.jsonl", 62, 2, 0),
    ("subagent-mixed/session.1.jsonl", 22, 0, 0),
    ("subagent-mixed/session.2.jsonl", 41, 0, 0),
    ("multi-turn/session.jsonl", 37, 0, 0),
]


@pytest.fixture
def dsh_root(tmp_path: Path) -> Path:
    """A DSH sessions root holding the real snapshots at `--<cwd>--/<id>/session.jsonl`."""
    place_dsh_snapshots(tmp_path / ".dsh" / "sessions")
    return tmp_path / ".dsh" / "sessions"


@pytest.mark.parametrize(("snapshot", "records", "calls", "errors"), DSH_COUNTS)
def test_parse_session_file_dsh_matches_publisher_and_scan(
    tmp_path: Path, snapshot: str, records: int, calls: int, errors: int
) -> None:
    placed = place_dsh_snapshots(tmp_path)[snapshot]
    lines = list(json_lines(placed))
    assert len(lines) - 1 == records
    seed = lines[0].get("seedLength", 0)
    events = [line for line in lines[1:] if line.get("seq", line.get("seq0")) >= seed]
    outcome = parse_session_file(placed.parent, "dsh")
    assert outcome.skipped_total == 0, dict(outcome.skipped_records)
    assert outcome.format_version == "dsh-v0" and outcome.resumable
    assert len(outcome.tool_calls) == calls == sum(e["type"] == "tool/call" for e in events)
    results = [e["data"] for e in events if e["type"] == "tool/result"]
    failed = [r for r in results if r.get("error") or any(b.get("isError") for b in r["message"]["content"])]
    assert sum(call.failed for call in outcome.tool_calls) == errors == len(failed)
    assert outcome.sessions[0].session_id == lines[0]["id"] == placed.parent.name


def test_iter_session_paths_dsh_finds_every_placed_session(dsh_root: Path) -> None:
    found = list(iter_session_paths(dsh_root, "dsh"))
    assert len(found) == 5 and all(path.name == "session.jsonl" for path in found)


def test_parse_session_file_dsh_reads_the_rejected_edit(tmp_path: Path) -> None:
    placed = place_dsh_snapshots(tmp_path)
    outcome = parse_session_file(placed["fs-policy-reject/session.jsonl"], "dsh")
    first_edit = outcome.tool_calls[0]
    assert (first_edit.name, first_edit.file_paths, first_edit.is_error) == ("edit", ("settings.txt",), True)
    assert (first_edit.output_excerpt or "").startswith("Error: edit requires reading")
    assert [c.evidence_type for c in outcome.tool_calls] == ["prior_failure", "file_history", "file_history"]
    assert outcome.sessions[0].title == "Do NOT use the read"
    # The runtime-context snapshot is plugin-injected: meta, not the user's instruction.
    assert [m.is_meta for m in outcome.messages if m.role == "user"] == [False, True]


def test_parse_session_file_dsh_skips_a_fork_childs_seed(dsh_root: Path) -> None:
    placed = {p.parent.name: p for p in iter_session_paths(dsh_root, "dsh")}
    parent = parse_session_file(placed["959ffdf5-03e2-465e-9482-009b704632dc"], "dsh")
    child = parse_session_file(placed["02b3a8dd-1d5e-4866-825f-5fbf5000a632"], "dsh")
    forked = child.sessions[0]
    assert forked.forked_from == forked.parent_session_id == parent.sessions[0].session_id
    assert not {m.record_uid for m in child.messages} & {m.record_uid for m in parent.messages}
    assert [m.text for m in child.messages if not m.is_meta] == [
        "What is the project codeword mentioned earlier in this conversation? "
        "Reply with exactly that one word and nothing else.",
        "SAFFRON",
    ]


def _compress_in_frames(source: Path, target: Path, *, frames: int) -> bytes:
    lines = source.read_bytes().splitlines(keepends=True)
    step = -(-len(lines) // frames)
    compressor = zstandard.ZstdCompressor(level=3)
    data = b"".join(compressor.compress(b"".join(lines[i : i + step])) for i in range(0, len(lines), step))
    target.write_bytes(data)
    return data


def test_parse_session_file_dsh_reads_zstd_frames_like_plain(dsh_root: Path) -> None:
    plain = next(p for p in iter_session_paths(dsh_root, "dsh") if p.parent.name.startswith("b3292503"))
    _compress_in_frames(plain, plain.with_name("session.jsonl.zstd"), frames=4)
    compressed = parse_session_file(plain.with_name("session.jsonl.zstd"), "dsh")
    expected = parse_session_file(plain, "dsh")
    assert not compressed.resumable and compressed.skipped_total == 0
    assert (compressed.messages, compressed.tool_calls) == (expected.messages, expected.tool_calls)


@pytest.mark.parametrize("cut", [1, 7, 40])
def test_parse_session_file_dsh_tolerates_a_torn_final_frame(dsh_root: Path, cut: int) -> None:
    plain = next(p for p in iter_session_paths(dsh_root, "dsh") if p.parent.name.startswith("b3292503"))
    data = _compress_in_frames(plain, plain.with_name("session.jsonl.zstd"), frames=3)
    torn = plain.with_name("session.jsonl.zstd")
    torn.write_bytes(data[:-cut])
    outcome = parse_session_file(torn, "dsh")
    assert outcome.skipped_records.get("torn_frame") == 1
    whole = parse_session_file(plain, "dsh")
    assert outcome.sessions[0].session_id == whole.sessions[0].session_id
    assert 0 < len(outcome.messages) <= len(whole.messages)
    complete = {call.call_id: call for call in whole.tool_calls}
    # What survived is exact; a call whose result was in the lost frame is still open.
    assert all(complete[c.call_id] == c or c.is_error is None for c in outcome.tool_calls)


def test_canonical_session_file_prefers_the_highest_version(tmp_path: Path) -> None:
    names = ("session.jsonl", "session.v2.jsonl", "session.v10.jsonl.zstd", "session.v10.jsonl", "notes.txt")
    for name in names:
        (tmp_path / name).write_bytes(b"")
    assert canonical_session_file(tmp_path) == tmp_path / "session.v10.jsonl.zstd"
    shutil.rmtree(tmp_path)
    tmp_path.mkdir()
    assert canonical_session_file(tmp_path) is None


def test_parse_session_file_dsh_reads_a_line_longer_than_a_read_chunk(tmp_path: Path) -> None:
    header = {"type": "session", "version": 0, "id": "long", "createdAt": 1783611702544, "cwd": "/r"}
    content = [{"type": "text", "text": "y" * 3_000_000}]
    event = {"type": "user/message", "seq": 0, "time": 1783611702545, "data": {"content": content, "id": "u1"}}
    data = "".join(json.dumps(record) + "\n" for record in (header, event)).encode()
    path = tmp_path / "long" / "session.jsonl.zstd"
    path.parent.mkdir()
    path.write_bytes(zstandard.ZstdCompressor(level=1).compress(data))
    outcome = parse_session_file(path.parent, "dsh")
    assert outcome.skipped_total == 0 and len(outcome.messages[0].text) == 3_000_000
