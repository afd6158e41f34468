"""Streaming line readers: complete lines only, one line in memory at a time, and never more than
`MAX_RECORD_BYTES` of one line: a longer record is skipped (counted as `oversize_record`) without
being held, so a 200 MB line costs a bounded amount of memory, not several times its size.

Lines are parsed from their bytes by msgspec (no UTF-8 decode into a `str` first, about twice as
fast as `json.loads`). Where msgspec refuses a line the `json` module would take (invalid UTF-8,
`NaN`, out-of-range floats, lone surrogate escapes, deeper nesting), the line takes the `json` path,
so every line is decided and counted exactly as `json.loads` decides it (a test builds the real
corpus both ways and compares every index row).
"""

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Final

import msgspec
import zstandard

from obelisk_session_evidence.contracts.json_input import read_at_most
from obelisk_session_evidence.providers.native.parsers._zstd_frames import ends_inside_a_frame

_ZSTD_CHUNK = 1 << 20
MAX_RECORD_BYTES: Final = 32 << 20
"""The longest line parsed. Longer ones are tool outputs or file dumps nobody searches for a command."""
_LINE_CHUNK: Final = 1 << 20
_READ_BUFFER: Final = 256 << 10
"""The buffer lines are read through: with Python's 8 KiB default, reading lines cost twice the CPU
(a read call per 8 KiB, and long lines joined from pieces); 1 MiB would gain only another 3%."""
_DECODER: Final = msgspec.json.Decoder()
LARGE_LINE: Final = 1 << 20
"""Lines from this size take the `json` path: msgspec holds the bytes, a scratch copy and the result
at once, the `json` path only the text and the result (the bytes are dropped after decoding)."""


class JsonLines:
    """Yields `(offset, object)` for each complete JSON-object line from `start_offset`.

    `end_offset` advances past every complete line read (parsed or skipped), never past a
    half-written last line, so a later parse from `end_offset` reads that line again once it ends.
    Read from offset 0, the lines are hashed as they are read (`prefix_sha256`), so the cursor's
    prefix digest needs no second read of the file. With `max_bytes`, reading stops after the line
    that reaches `start_offset + max_bytes` (a chunk; the next parse resumes at `end_offset`).
    """

    def __init__(self, path: Path, *, start_offset: int, skipped: Counter[str], max_bytes: int | None = None) -> None:
        self.path = path
        self.end_offset = start_offset
        self._skipped = skipped
        self._hasher = hashlib.sha256() if start_offset == 0 else None
        self._stop = start_offset + max_bytes if max_bytes is not None else None

    @property
    def prefix_sha256(self) -> str | None:
        """The sha256 of the bytes `[0, end_offset)`, exactly the lines read; None when read from past 0."""
        return None if self._hasher is None else self._hasher.hexdigest()

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        hasher, stop = self._hasher, self._stop
        if stop is not None and self.end_offset >= stop:
            return
        with open(self.path, "rb", buffering=_READ_BUFFER) as lines:
            lines.seek(self.end_offset)
            for length, raw in complete_lines(lines, self._skipped):
                offset = self.end_offset
                self.end_offset += length
                if raw is None:
                    if hasher is not None:
                        _hash_range(self.path, offset, length, hasher)
                    parsed = None
                else:
                    if hasher is not None:
                        hasher.update(raw)
                    if len(raw) < LARGE_LINE:
                        parsed = parse_line(raw, self._skipped)
                    else:
                        # A record of tens of MB must never be held three times: drop each form once used.
                        text = decode_line(raw, self._skipped)
                        del raw
                        parsed = parse_object(text, self._skipped) if text is not None else None
                        del text
                if parsed is not None:
                    yield offset, parsed
                if stop is not None and self.end_offset >= stop:
                    return


def _hash_range(path: Path, offset: int, length: int, hasher: Any) -> None:
    """Feed `length` bytes of the file from `offset` to `hasher` (a line too long to have been held),
    a chunk at a time."""
    with open(path, "rb") as handle:
        handle.seek(offset)
        while length > 0:
            chunk = handle.read(min(_LINE_CHUNK, length))
            if not chunk:
                raise OSError("the file shrank while it was read")
            hasher.update(chunk)
            length -= len(chunk)


class ZstdJsonLines:
    """Yields `(offset, object)` from concatenated zstd frames; a torn final frame is tolerated.

    Offsets are positions in the decompressed stream (stable uids), and `end_offset` is the
    compressed size consumed; zstd files are always re-read from the start.
    """

    def __init__(self, path: Path, *, skipped: Counter[str]) -> None:
        self.path = path
        self.end_offset = 0
        self._skipped = skipped

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        pending = bytearray()
        offset = 0
        oversize = False  # inside a line longer than `MAX_RECORD_BYTES`: dropped up to its newline
        for chunk in self._decompressed_chunks():
            start, searched = 0, len(pending)  # a long line is scanned once, not once per chunk
            pending += chunk
            if oversize:
                if (newline := pending.find(b"\n")) == -1:
                    offset += len(pending)
                    pending.clear()
                    continue
                self._skipped["oversize_record"] += 1
                oversize, start = False, newline + 1
                searched = start
            while (newline := pending.find(b"\n", searched)) != -1:
                parsed = parse_line(pending[start : newline + 1], self._skipped)
                if parsed is not None:
                    yield offset + start, parsed
                start = searched = newline + 1
            del pending[:start]
            offset += start
            if len(pending) > MAX_RECORD_BYTES:
                oversize = True
                offset += len(pending)
                pending.clear()

    def _decompressed_chunks(self) -> Iterator[bytes]:
        """At most `_ZSTD_CHUNK` decompressed bytes at a time, however well the data compresses (a few
        KB of frames can hold a 200 MB line); a frame that is corrupt or ends early counts `torn_frame`."""
        with open(self.path, "rb") as compressed:
            torn = ends_inside_a_frame(compressed)
            compressed.seek(0)
            decompressor = zstandard.ZstdDecompressor()
            reader = decompressor.stream_reader(compressed, read_size=_ZSTD_CHUNK, read_across_frames=True)
            try:
                while chunk := reader.read(_ZSTD_CHUNK):
                    yield chunk
            except zstandard.ZstdError:
                torn = True
            finally:
                self.end_offset = os.fstat(compressed.fileno()).st_size
        if torn:
            # The writer died mid-frame: what decompressed so far is kept, the rest is lost.
            self._skipped["torn_frame"] += 1


def complete_lines(handle: IO[bytes], skipped: Counter[str]) -> Iterator[tuple[int, bytes | None]]:
    """`(length, line)` for each complete line from the handle's position; `line` is None for one
    longer than `MAX_RECORD_BYTES`, read past in chunks and counted as `oversize_record`. A last
    line without its newline is not yielded: its writer may still be writing it."""
    while piece := handle.readline(_LINE_CHUNK):
        if piece.endswith(b"\n"):
            yield len(piece), piece  # nearly every line: one read, no copy
            continue
        pieces, length = [piece], len(piece)
        while length <= MAX_RECORD_BYTES and not pieces[-1].endswith(b"\n"):
            if not (piece := handle.readline(_LINE_CHUNK)):
                return
            pieces.append(piece)
            length += len(piece)
        if pieces[-1].endswith(b"\n") and length <= MAX_RECORD_BYTES:
            joined = [b"".join(pieces)]
            del pieces
            yield length, joined.pop()  # not held here while the caller decodes and parses it
            continue
        del pieces
        while not piece.endswith(b"\n"):
            if not (piece := handle.readline(_LINE_CHUNK)):
                return
            length += len(piece)
        skipped["oversize_record"] += 1
        yield length, None


def decode_line(raw: bytes | bytearray, skipped: Counter[str]) -> str | None:
    """Decode one line as UTF-8 (invalid bytes become U+FFFD and are counted); None if blank."""
    if raw.isspace():
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        skipped["bad_encoding"] += 1
        return raw.decode("utf-8", errors="replace")


def parse_object(text: str, skipped: Counter[str]) -> dict[str, Any] | None:
    """Parse one decoded line as a JSON object, counting why it was skipped when it is not one."""
    try:
        parsed = json.loads(text)
    except ValueError:
        skipped["invalid_json"] += 1
        return None
    if not isinstance(parsed, dict):
        skipped["not_an_object"] += 1
        return None
    return parsed


def parse_line(raw: bytes | bytearray, skipped: Counter[str]) -> dict[str, Any] | None:
    """One line's JSON object, parsed from its bytes; None (and counted) when it is not one."""
    if raw.isspace():
        return None
    try:
        parsed = _DECODER.decode(raw)
    except (msgspec.DecodeError, ValueError, RecursionError):  # ValueError: invalid UTF-8
        return parse_line_with_json(raw, skipped)
    if not isinstance(parsed, dict):
        skipped["not_an_object"] += 1
        return None
    return parsed


def parse_line_with_json(raw: bytes | bytearray, skipped: Counter[str]) -> dict[str, Any] | None:
    """The reference path: decode as UTF-8 (counting bad bytes), then `json.loads`."""
    text = decode_line(raw, skipped)
    return parse_object(text, skipped) if text is not None else None


def read_json_object(path: Path) -> dict[str, Any] | None:
    """Read a small whole-file JSON object (Kimi `state.json`), or None when absent, invalid or
    longer than `MAX_RECORD_BYTES`."""
    try:
        with open(path, "rb") as handle:
            data = read_at_most(handle, MAX_RECORD_BYTES)
        if len(data) > MAX_RECORD_BYTES:
            return None
        parsed = json.loads(data.decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    return parsed if isinstance(parsed, dict) else None
