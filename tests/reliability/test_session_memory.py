"""One long session must not cost memory in proportion to its length (issue 27: 1M lines took 687 MB).

The attack: a session file of hundreds of MB (a day-long agent run). A refresh parsed it whole and
held every record, then every row, at once. Now a file is parsed a chunk at a time (`chunked`,
`refresh_index(chunk_bytes=...)`), each chunk's rows written before the next is read. The figures
for 10k-1M lines, in separate processes, come from `bench/session_peak_memory.py`; this test
indexes two sessions, one eight times the other, with the same chunk, and compares the traced
peaks (Python's allocations: the records and rows, where the growth was).
"""

import gc
import json
import tracemalloc
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from tests.reliability.figures import FIGURES
from tests.reliability.index_dump import open_plain

pytestmark = pytest.mark.reliability

CHUNK = 64 << 10
SMALL_BYTES = 1 << 20
"""Sixteen chunks; the large session is eight times longer."""


def _write_claude_session(root: Path, size: int) -> Path:
    """A Claude session of about `size` bytes: rounds of a user turn, a reply and a failing test run."""
    path = root / "-work-repo" / "long-session.jsonl"
    path.parent.mkdir(parents=True)
    head = {"sessionId": "long-session", "cwd": "/work/repo", "version": "2.1.0"}
    written, round_ = 0, 0
    with open(path, "w", encoding="utf-8") as handle:
        while written < size:
            stamp = f"2026-03-01T{round_ // 3600 % 24:02d}:{round_ // 60 % 60:02d}:{round_ % 60:02d}.000Z"
            call = f"toolu-{round_}"
            use = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": f"pytest -k case{round_}"}}
            output = f"Exit code 1\nFAILED tests/test_case{round_}.py " + "assert 200 == 401 " * 40
            result = {"type": "tool_result", "tool_use_id": call, "content": output, "is_error": True}
            records = [
                ("user", {"role": "user", "content": f"Run case {round_} again."}),
                ("assistant", {"id": f"msg-{round_}-a", "role": "assistant", "content": [use]}),
                ("user", {"role": "user", "content": [result]}),
                ("assistant", {"id": f"msg-{round_}-b", "role": "assistant", "content": f"Case {round_} fails."}),
            ]
            for number, (kind, message) in enumerate(records):
                line = head | {"type": kind, "uuid": f"u-{round_}-{number}", "timestamp": stamp, "message": message}
                written += handle.write(json.dumps(line) + "\n")
            round_ += 1
    return path


def _traced_refresh(tmp_path: Path, name: str, size: int) -> tuple[int, int]:
    """Index one session of `size` bytes from nothing: (traced peak bytes, tool calls indexed)."""
    root = tmp_path / name / "claude"
    _write_claude_session(root, size)
    index = index_file(tmp_path / name / "index")
    gc.collect()
    tracemalloc.start()
    try:
        refresh_index(index, {"claude": [root]}, chunk_bytes=CHUNK)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    connection = open_plain(index)
    try:
        (calls,) = connection.execute("SELECT count(*) FROM entries WHERE kind = 'tool_call'").fetchone()
    finally:
        connection.close()
    return peak, calls


def test_refresh_peak_memory_does_not_grow_with_one_sessions_length(tmp_path: Path) -> None:
    small_peak, small_calls = _traced_refresh(tmp_path, "small", SMALL_BYTES)
    large_peak, large_calls = _traced_refresh(tmp_path, "large", 8 * SMALL_BYTES)
    FIGURES.peaks_mb["refresh-traced-1MB-session"] = small_peak / 1e6
    FIGURES.peaks_mb["refresh-traced-8MB-session"] = large_peak / 1e6
    assert large_calls >= 7 * small_calls  # every round of the long session was indexed
    # Held whole, eight times the session cost about eight times the memory; a chunk at a time, the same.
    assert large_peak < 1.25 * small_peak, f"peak {large_peak / small_peak:.2f}x for 8x the session"
