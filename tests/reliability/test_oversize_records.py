"""A session line far larger than any record worth searching must cost bounded memory.

The attack: one line of hundreds of MB (a pasted dump, a tool output) in a session file. It cost
several times its size in refresh and in a lookup's automatic refresh. Now a line longer than
`MAX_RECORD_BYTES` is skipped and counted as `oversize_record`; the lines around it are indexed.
The figures on a 200 MB line come from `bench/oversize_record_peak.py`; these tests use a line
just over the cap and check the traced peak stays below the line's own size.
"""

import gc
import json
import tracemalloc
from pathlib import Path

import pytest
import zstandard

from obelisk_session_evidence.providers.native.index.refresh import refresh_locked
from obelisk_session_evidence.providers.native.index.store import MEMORY, connect
from obelisk_session_evidence.providers.native.parsers import parse_session_file

pytestmark = pytest.mark.reliability

OVERSIZE = 40 << 20
"""A line over the 32 MiB cap (`_reading.MAX_RECORD_BYTES`)."""


def _claude_record(number: int, text: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": f"u{number}",
            "parentUuid": None,
            "sessionId": "huge",
            "cwd": "/work/repo",
            "timestamp": f"2026-03-01T10:0{number}:00.000Z",
            "message": {"role": "user", "content": text},
        }
    )


def _write_claude_session(root: Path) -> Path:
    path = root / "-work-repo" / "huge.jsonl"
    path.parent.mkdir(parents=True)
    head, tail = _claude_record(2, "\x00").split("\\u0000")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(_claude_record(1, "before the huge line") + "\n")
        handle.write(head + "y" * OVERSIZE + tail + "\n")
        handle.write(_claude_record(3, "after the huge line") + "\n")
    return path


def _traced_peak(action):
    gc.collect()
    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_refresh_skips_a_line_over_the_cap_in_bounded_memory(tmp_path):
    root = tmp_path / "claude"
    _write_claude_session(root)
    connection = connect(MEMORY)
    try:
        report, peak = _traced_peak(lambda: refresh_locked(connection, {"claude": [root]}))
        bodies = sorted(body for (body,) in connection.execute("SELECT body FROM entry_text"))
        (reasons,) = connection.execute("SELECT skipped_by_reason FROM files").fetchone()
    finally:
        connection.close()
    assert peak < OVERSIZE, f"peak {peak / OVERSIZE:.2f}x the line"
    assert bodies == ["after the huge line", "before the huge line"]
    assert (report.skipped_records, reasons, report.freshness) == (1, "oversize_record=1", "fresh")


def test_zstd_session_skips_a_line_over_the_cap_in_bounded_memory(tmp_path):
    header = {"type": "session", "version": 0, "id": "huge", "createdAt": 1783611702544, "cwd": "/r"}

    def event(seq: int, text: str) -> dict:
        content = [{"type": "text", "text": text}]
        data = {"content": content, "id": f"u{seq}"}
        return {"type": "user/message", "seq": seq, "time": 1783611702545 + seq, "data": data}

    path = tmp_path / "huge" / "session.jsonl.zstd"
    path.parent.mkdir()
    compressor = zstandard.ZstdCompressor(level=1)
    with open(path, "wb") as raw, compressor.stream_writer(raw) as compressed:
        # One repeated letter: a few KB of frames that decompress to a line over the cap.
        records = (header, event(0, "before the huge line"), event(1, "y" * OVERSIZE), event(2, "after the huge line"))
        for record in records:
            compressed.write((json.dumps(record) + "\n").encode())
    outcome, peak = _traced_peak(lambda: parse_session_file(path.parent, "dsh"))
    assert peak < OVERSIZE, f"peak {peak / OVERSIZE:.2f}x the line"
    assert [message.text for message in outcome.messages] == ["before the huge line", "after the huge line"]
    assert dict(outcome.skipped_records) == {"oversize_record": 1}
