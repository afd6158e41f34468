"""Streaming parsers for the five native session formats, behind one dispatch function.

The parsers load on a format's first parse: a lookup only names roots and reads stored outcomes
(`default_roots`, `ResumeState`), and never pays for the readers (zstandard, msgspec) it does not use.
"""

from importlib import import_module
from pathlib import Path
from typing import Final, assert_never

from obelisk_session_evidence.contracts.sources import SOURCE_KINDS, SourceKind
from obelisk_session_evidence.providers.native.parsers.discovery import (
    canonical_session_file,
    default_roots,
    detect_source,
    iter_session_paths,
)
from obelisk_session_evidence.providers.native.parsers.outcome import SKIP_REASONS, ParseOutcome, ResumeState

__all__ = [
    "PARSER_MODULES",
    "SKIP_REASONS",
    "ParseOutcome",
    "ResumeState",
    "canonical_session_file",
    "default_roots",
    "detect_source",
    "iter_session_paths",
    "parse_session_file",
]


def _parser(source: SourceKind) -> tuple[str, str]:
    """Each format's parser: its module and function."""
    match source:
        case "claude":
            return f"{__name__}.claude", "parse_claude"
        case "codex":
            return f"{__name__}.codex", "parse_codex"
        case "kimi":
            return f"{__name__}.kimi", "parse_kimi"
        case "pi":
            return f"{__name__}.pi", "parse_pi"
        case "dsh":
            return f"{__name__}.dsh", "parse_dsh"
        case _:
            assert_never(source)


_PARSERS: Final[dict[SourceKind, tuple[str, str]]] = {source: _parser(source) for source in SOURCE_KINDS}
"""Built at import: a source without a parser fails here, before anything is read."""
PARSER_MODULES: Final = tuple(module for module, _ in _PARSERS.values())
"""What a process that will parse can load ahead (a forkserver's preload)."""


def parse_session_file(
    path: Path,
    source: SourceKind,
    *,
    start_offset: int = 0,
    resume: ResumeState | None = None,
    max_bytes: int | None = None,
) -> ParseOutcome:
    """Parse one session file (a directory for Kimi, and optionally for DSH) from `start_offset`.

    Pass the previous outcome's `end_offset` and `resume` to read only what was appended; when
    the previous outcome was not `resumable`, or the file shrank or changed inode, parse from 0.
    With `max_bytes`, a resumable parse stops after the line that reaches `start_offset +
    max_bytes` (the rest is read by resuming from `end_offset`); others read everything.
    """
    module, function = _PARSERS[source]
    parser = getattr(import_module(module), function)
    return parser(Path(path), start_offset=start_offset, resume=resume, max_bytes=max_bytes)
