"""Whether a file of concatenated zstd frames ends inside a frame, found by walking frame and block
headers (RFC 8878) without decompressing anything.

The decompressing reader (`zstandard`'s `stream_reader`) bounds its output per read, which a
highly compressible line needs (a few KB of input can hold a 200 MB line), but it ends a torn final
frame silently. This walk says when it was torn, reading a few header bytes per block.
"""

import os
from typing import IO, Final

_FRAME_MAGIC: Final = 0xFD2FB528
_SKIPPABLE_MASK: Final = 0xFFFFFFF0
_SKIPPABLE_MAGIC: Final = 0x184D2A50
_DICTIONARY_ID_BYTES: Final = (0, 1, 2, 4)
_CONTENT_SIZE_BYTES: Final = (0, 2, 4, 8)
_RLE_BLOCK: Final = 1
_RESERVED_BLOCK: Final = 3


def ends_inside_a_frame(handle: IO[bytes]) -> bool:
    """True when the data from the handle's position ends before its last frame does (or is not zstd)."""
    start = handle.tell()
    end = handle.seek(0, os.SEEK_END)
    handle.seek(start)
    while magic_bytes := handle.read(4):
        if len(magic_bytes) < 4:
            return True
        magic = int.from_bytes(magic_bytes, "little")
        if magic & _SKIPPABLE_MASK == _SKIPPABLE_MAGIC:
            size = handle.read(4)
            if len(size) < 4 or not _skip(handle, int.from_bytes(size, "little"), end):
                return True
        elif magic != _FRAME_MAGIC or not _frame_body_is_whole(handle, end):
            return True
    return False


def _frame_body_is_whole(handle: IO[bytes], end: int) -> bool:
    descriptor = handle.read(1)
    if not descriptor:
        return False
    flags = descriptor[0]
    single_segment = bool(flags >> 5 & 1)
    content_size = _CONTENT_SIZE_BYTES[flags >> 6] or (1 if single_segment else 0)
    header = (0 if single_segment else 1) + _DICTIONARY_ID_BYTES[flags & 3] + content_size
    if not _skip(handle, header, end):
        return False
    while True:
        block = handle.read(3)
        if len(block) < 3:
            return False
        value = int.from_bytes(block, "little")
        kind, size = value >> 1 & 3, value >> 3
        if kind == _RESERVED_BLOCK or not _skip(handle, 1 if kind == _RLE_BLOCK else size, end):
            return False
        if value & 1:
            return _skip(handle, 4 if flags >> 2 & 1 else 0, end)


def _skip(handle: IO[bytes], count: int, end: int) -> bool:
    """Move `count` bytes on; False when the data (`end` bytes long) ends first."""
    position = handle.tell()
    if end - position < count:
        return False
    handle.seek(position + count)
    return True
