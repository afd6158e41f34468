"""Streaming line readers: complete lines only, one line in memory at a time.

Lines are parsed from their bytes by msgspec (no UTF-8 decode into a `str` first, about twice as
fast as `json.loads`). Where msgspec refuses a line the `json` module would take (invalid UTF-8,
`NaN`, out-of-range floats, lone surrogate escapes, deeper nesting), the line takes the `json` path,
so every line is decided and counted exactly as `json.loads` decides it (a test builds the real
corpus both ways and compares every index row).
"""

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import msgspec
import zstandard

_ZSTD_CHUNK = 1 << 20
_DECODER: Final = msgspec.json.Decoder()
LARGE_LINE: Final = 1 << 20
"""Lines from this size take the `json` path: msgspec holds the bytes, a scratch copy and the result
at once, the `json` path only the text and the result (the bytes are dropped after decoding)."""


class JsonLines:
    """Yields `(offset, object)` for each complete JSON-object line from `start_offset`.

    `end_offset` advances past every complete line read (parsed or skipped), never past a
    half-written last line, so a later parse from `end_offset` reads that line again once it ends.
    """

    def __init__(self, path: Path, *, start_offset: int, skipped: Counter[str]) -> None:
        self.path = path
        self.end_offset = start_offset
        self._skipped = skipped

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        with open(self.path, "rb") as lines:
            lines.seek(self.end_offset)
            for raw in lines:
                if not raw.endswith(b"\n"):
                    return
                offset = self.end_offset
                self.end_offset += len(raw)
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
        for chunk in self._decompressed_chunks():
            start, searched = 0, len(pending)  # a long line is scanned once, not once per chunk
            pending += chunk
            while (newline := pending.find(b"\n", searched)) != -1:
                parsed = parse_line(pending[start : newline + 1], self._skipped)
                if parsed is not None:
                    yield offset + start, parsed
                start = searched = newline + 1
            del pending[:start]
            offset += start

    def _decompressed_chunks(self) -> Iterator[bytes]:
        decompressor = zstandard.ZstdDecompressor().decompressobj()
        frame_started = False
        with open(self.path, "rb") as compressed:
            while chunk := compressed.read(_ZSTD_CHUNK):
                self.end_offset += len(chunk)
                while chunk:
                    frame_started = True
                    try:
                        yield decompressor.decompress(chunk)
                    except zstandard.ZstdError:
                        self._skipped["torn_frame"] += 1
                        return
                    if not decompressor.eof:
                        break
                    chunk = decompressor.unused_data
                    decompressor = zstandard.ZstdDecompressor().decompressobj()
                    frame_started = False
        if frame_started:
            # The writer died mid-frame: what decompressed so far is kept, the rest is lost.
            self._skipped["torn_frame"] += 1


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


def read_json_object(path: Path) -> dict[str, Any] | None:
    """Read a small whole-file JSON object (Kimi `state.json`), or None when absent or invalid."""
    try:
        parsed = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    return parsed if isinstance(parsed, dict) else None
