"""Reading a session file a chunk at a time, so a refresh's memory is bounded by a chunk, not a session.

A parse reads at most `PARSE_CHUNK_BYTES` (it stops after the line that reaches the limit); the next
chunk resumes from the last one's end offset and `ResumeState`, exactly as the appended part of a
live session is read, and each chunk's rows are written before the next chunk is parsed. A file up
to one chunk is parsed in one go, as before. What the resume state does not carry applies within a
chunk only, as it does to a session indexed while it grew: Claude's set of uuids already seen (a
line repeated more than a chunk later replaces its row instead of being counted `duplicate`), its
fallback title from a `summary` line whose leaf comes more than a chunk later, and rows read
before any line names the session, which keep the file's name when that line comes a chunk later.
None of these occurs in the real corpus (`test_index_chunked.py` reads it one line per chunk).
"""

import dataclasses
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.native.parsers import ParseOutcome, ResumeState, parse_session_file

PARSE_CHUNK_BYTES: Final = 16 << 20
"""The session-file bytes one parse reads at most. A refresh holds one chunk's records and rows,
about 30 MB over the process's own for a Claude session (`bench/session_peak_memory.py`); the
largest file of the real corpus (4.7 MB) is read in one parse."""


class ParseFailed(Exception):
    """A parse raised: the unit is recorded as failed with `code`, the error's type name."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def parse_chunk(
    path: str, source: SourceKind, start: int, resume: ResumeState | None, chunk_bytes: int
) -> ParseOutcome:
    """Parse at most `chunk_bytes` of the unit from `start` (a failure becomes `ParseFailed`)."""
    try:
        return parse_session_file(Path(path), source, start_offset=start, resume=resume, max_bytes=chunk_bytes)
    except Exception as error:
        raise ParseFailed(type(error).__name__) from error


def named_so_far(outcome: ParseOutcome, more: bool) -> ParseOutcome:
    """The chunk as written: while the file's records have not named their session yet and more
    chunks follow, the stand-in session (the file's name) is not stored, as a parse in one go would
    not store it once a later line names the session."""
    if more and outcome.resume.session is None:
        return dataclasses.replace(outcome, sessions=())
    return outcome


def has_more(outcome: ParseOutcome, start: int, chunk_bytes: int) -> bool:
    """True when the parse from `start` stopped at its byte limit rather than at the end of the file."""
    return outcome.resumable and outcome.end_offset - start >= chunk_bytes
