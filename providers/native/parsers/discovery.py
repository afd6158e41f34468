"""Where each agent keeps its sessions, and how to tell a session file's agent from the file."""

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final, assert_never

from obelisk_session_evidence.contracts.sources import SOURCES, SourceKind, SourceSpec

_SNIFF_BYTES: Final = 65536
_DSH_SESSION_FILE: Final = re.compile(r"^session(?:\.v(\d+))?\.jsonl(\.zstd)?$")
_HOME_MARKERS: Final[dict[str, SourceKind]] = {
    marker: kind for kind, spec in SOURCES.items() for marker in spec.home_markers
}
"""A folder name in a session's path that says which agent's home it is in (`.claude`, `.kimi-code`)."""


def default_roots(home: Path) -> dict[SourceKind, Path]:
    """Each agent's sessions root under `home`, honouring the agents' own environment overrides."""
    return {kind: default_root(spec, home) for kind, spec in SOURCES.items()}


def default_root(spec: SourceSpec, home: Path) -> Path:
    """One agent's sessions root: its data folder (or its own override of it), then its sessions folder."""
    override = os.environ.get(spec.data_env) if spec.data_env else None
    data = Path(override) if override else home.joinpath(*spec.data_folder)
    return data.joinpath(*spec.sessions_folder)


def iter_session_paths(root: Path, source: SourceKind) -> Iterator[Path]:
    """Every parseable unit under a sessions root, in sorted order (a file, or a Kimi directory)."""
    if not root.is_dir():
        return
    match source:
        case "claude":
            yield from sorted(root.rglob("*.jsonl"))
        case "codex":
            yield from sorted(root.rglob("rollout-*.jsonl"))
        case "pi":
            yield from sorted(root.glob("*/*.jsonl"))
        case "kimi":
            markers = {p.parent for name in ("state.json", "context.jsonl") for p in root.rglob(name)}
            yield from sorted(markers)
        case "dsh":
            session_dirs = {p.parent for p in root.rglob("session*.jsonl*")}
            yield from sorted(chosen for d in session_dirs if (chosen := canonical_session_file(d)) is not None)
        case _:
            assert_never(source)


def detect_source(path: Path) -> SourceKind | None:
    """Guess which agent wrote `path`: from its home folder if visible, else from its first line."""
    for part in reversed(path.parts):
        if (source := _HOME_MARKERS.get(part)) is not None:
            return source
    if path.is_dir():
        if (path / "state.json").is_file() or (path / "context.jsonl").is_file():
            return "kimi"
        chosen = canonical_session_file(path)
        return "dsh" if chosen is not None else None
    if path.name.endswith(".zstd"):
        return "dsh"
    if path.name in ("state.json", "context.jsonl"):
        return "kimi"
    return _source_from_first_line(path)


def _source_from_first_line(path: Path) -> SourceKind | None:
    try:
        with open(path, "rb") as head:
            first = head.readline(_SNIFF_BYTES)
        record = json.loads(first)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    kind = record.get("type")
    if kind == "session_meta":
        return "codex"
    if kind == "session":
        return "dsh" if "createdAt" in record else "pi"
    if kind == "metadata" or "message" in record and "timestamp" in record and "type" not in record:
        return "kimi"
    if "sessionId" in record or kind in ("summary", "file-history-snapshot", "user", "assistant"):
        return "claude"
    return None


def canonical_session_file(session_dir: Path) -> Path | None:
    """The highest-`vN` session file in a DSH session directory (compressed wins a tie)."""
    ranked = []
    for candidate in session_dir.iterdir():
        if matched := _DSH_SESSION_FILE.match(candidate.name):
            version, compressed = int(matched.group(1) or 0), matched.group(2) is not None
            ranked.append((version, compressed, candidate.name, candidate))
    return max(ranked)[3] if ranked else None
