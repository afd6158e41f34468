"""`ends_inside_a_frame` against real zstd output: whole frames are whole, every other cut is torn."""

import io
import struct

import pytest
import zstandard

from obelisk_session_evidence.providers.native.parsers._zstd_frames import ends_inside_a_frame

SKIPPABLE = struct.pack("<II", 0x184D2A53, 5) + b"notes"


def _frames() -> list[bytes]:
    """Frames of every kind the walk must step over: content size or not, checksum, RLE blocks, skippable."""
    lines = b"".join(b'{"seq": %d, "text": "%s"}\n' % (n, b"y" * (n * 37)) for n in range(200))
    return [
        zstandard.ZstdCompressor(level=3).compress(lines[:4000]),
        SKIPPABLE,
        zstandard.ZstdCompressor(level=1, write_checksum=True, write_content_size=False).compress(lines[4000:]),
        zstandard.ZstdCompressor(level=19).compress(b"z" * 300_000),
    ]


@pytest.mark.parametrize("data", [b"".join(_frames()), b""], ids=["whole", "empty"])
def test_whole_frames_are_not_torn(data):
    assert ends_inside_a_frame(io.BytesIO(data)) is False


def test_every_cut_between_frame_ends_is_torn():
    frames = _frames()
    data = b"".join(frames)
    frame_ends = {sum(len(frame) for frame in frames[: count + 1]) for count in range(len(frames))}
    for cut in range(1, len(data)):
        assert ends_inside_a_frame(io.BytesIO(data[:cut])) is (cut not in frame_ends), cut


def test_bytes_that_are_not_zstd_are_torn():
    assert ends_inside_a_frame(io.BytesIO(b"not a zstd frame at all")) is True
