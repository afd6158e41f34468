"""Streaming parsers for the five native session formats, behind one dispatch function."""

from collections.abc import Callable
from pathlib import Path
from typing import Final

from contracts.config import SourceKind
from providers.native.parsers.claude import parse_claude
from providers.native.parsers.codex import parse_codex, read_thread_names
from providers.native.parsers.discovery import default_roots, detect_source, iter_session_paths
from providers.native.parsers.dsh import canonical_session_file, parse_dsh
from providers.native.parsers.kimi import parse_kimi
from providers.native.parsers.outcome import SKIP_REASONS, ParseOutcome, ResumeState
from providers.native.parsers.pi import parse_pi

__all__ = [
    "SKIP_REASONS",
    "ParseOutcome",
    "ResumeState",
    "canonical_session_file",
    "default_roots",
    "detect_source",
    "iter_session_paths",
    "parse_session_file",
    "read_thread_names",
]

_PARSERS: Final[dict[SourceKind, Callable[..., ParseOutcome]]] = {
    "claude": parse_claude,
    "codex": parse_codex,
    "kimi": parse_kimi,
    "pi": parse_pi,
    "dsh": parse_dsh,
}


def parse_session_file(
    path: Path, source: SourceKind, *, start_offset: int = 0, resume: ResumeState | None = None
) -> ParseOutcome:
    """Parse one session file (a directory for Kimi, and optionally for DSH) from `start_offset`.

    Pass the previous outcome's `end_offset` and `resume` to read only what was appended; when
    the previous outcome was not `resumable`, or the file shrank or changed inode, parse from 0.
    """
    return _PARSERS[source](Path(path), start_offset=start_offset, resume=resume)
