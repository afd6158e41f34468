"""Streaming parsers for the five native session formats, behind one dispatch function.

The parsers load on a format's first parse: a lookup only names roots and reads stored outcomes
(`default_roots`, `ResumeState`), and never pays for the readers (zstandard, msgspec) it does not use.
"""

from importlib import import_module
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.config import SourceKind
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

_PARSERS: Final[dict[SourceKind, tuple[str, str]]] = {
    "claude": (f"{__name__}.claude", "parse_claude"),
    "codex": (f"{__name__}.codex", "parse_codex"),
    "kimi": (f"{__name__}.kimi", "parse_kimi"),
    "pi": (f"{__name__}.pi", "parse_pi"),
    "dsh": (f"{__name__}.dsh", "parse_dsh"),
}
"""Each format's parser: its module and function."""
PARSER_MODULES: Final = tuple(module for module, _ in _PARSERS.values())
"""What a process that will parse can load ahead (a forkserver's preload)."""


def parse_session_file(
    path: Path, source: SourceKind, *, start_offset: int = 0, resume: ResumeState | None = None
) -> ParseOutcome:
    """Parse one session file (a directory for Kimi, and optionally for DSH) from `start_offset`.

    Pass the previous outcome's `end_offset` and `resume` to read only what was appended; when
    the previous outcome was not `resumable`, or the file shrank or changed inode, parse from 0.
    """
    module, function = _PARSERS[source]
    parser = getattr(import_module(module), function)
    return parser(Path(path), start_offset=start_offset, resume=resume)
