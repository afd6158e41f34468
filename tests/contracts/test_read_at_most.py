"""Bounded reads return what a size check needs, a chunk at a time, from files and pipes alike."""

import io
import os
import threading

import pytest

from obelisk_session_evidence.contracts.json_input import READ_CHUNK, read_at_most


@pytest.mark.parametrize("size", [0, 1, READ_CHUNK - 1, READ_CHUNK, READ_CHUNK + 1, 3 * READ_CHUNK + 7])
def test_a_document_within_the_limit_is_read_whole(size: int) -> None:
    data = bytes(range(256)) * (size // 256 + 1)
    assert read_at_most(io.BytesIO(data[:size]), 4 * READ_CHUNK) == data[:size]


@pytest.mark.parametrize("limit", [0, 10, READ_CHUNK, 2 * READ_CHUNK + 3])
def test_a_longer_document_yields_one_byte_past_the_limit(limit: int) -> None:
    assert read_at_most(io.BytesIO(b"x" * (limit + 5 * READ_CHUNK)), limit) == b"x" * (limit + 1)


def test_no_read_asks_for_more_than_a_chunk() -> None:
    asked: list[int] = []

    class Recording(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            asked.append(size)
            return super().read(size)

    read_at_most(Recording(b"y" * 100), 4 * 1024 * 1024)
    assert asked and max(asked) <= READ_CHUNK


def test_a_pipe_delivering_in_pieces_is_read_to_its_end() -> None:
    reading, writing = os.pipe()
    pieces = [b"a" * 1000, b"b" * (READ_CHUNK + 10), b"c"]

    def write() -> None:
        with os.fdopen(writing, "wb", buffering=0) as out:
            for piece in pieces:
                out.write(piece)

    writer = threading.Thread(target=write)
    writer.start()
    with os.fdopen(reading, "rb", buffering=0) as handle:
        assert read_at_most(handle, 10 * READ_CHUNK) == b"".join(pieces)
    writer.join()
