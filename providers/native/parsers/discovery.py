"""Where each agent keeps its sessions, and how to tell a session file's agent from the file."""

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.config import SourceKind

_SNIFF_BYTES: Final = 65536
_DSH_SESSION_FILE: Final = re.compile(r"^session(?:\.v(\d+))?\.jsonl(\.zstd)?$")
_HOME_MARKERS: Final[tuple[tuple[str, SourceKind], ...]] = (
    (".claude", "claude"),
    (".codex", "codex"),
    (".kimi-code", "kimi"),
    (".kimi", "kimi"),
    (".dsh", "dsh"),
    (".pi", "pi"),
)


def default_roots(home: Path) -> dict[SourceKind, Path]:
    """Each agent's sessions root under `home`, honouring the agents' own environment overrides."""
    return {
        "claude": home / ".claude" / "projects",
        "codex": home / ".codex" / "sessions",
        "kimi": Path(os.environ.get("KIMI_CODE_HOME") or home / ".kimi-code") / "sessions",
        "pi": Path(os.environ.get("PI_CODING_AGENT_SESSION_DIR") or home / ".pi" / "agent" / "sessions"),
        "dsh": home / ".dsh" / "sessions",
    }


def iter_session_paths(root: Path, source: SourceKind) -> Iterator[Path]:
    """Every parseable unit under a sessions root, in sorted order (a file, or a Kimi directory)."""
    if not root.is_dir():
        return
    if source == "claude":
        yield from sorted(root.rglob("*.jsonl"))
    elif source == "codex":
        yield from sorted(root.rglob("rollout-*.jsonl"))
    elif source == "pi":
        yield from sorted(root.glob("*/*.jsonl"))
    elif source == "kimi":
        markers = {p.parent for name in ("state.json", "context.jsonl") for p in root.rglob(name)}
        yield from sorted(markers)
    else:
        session_dirs = {p.parent for p in root.rglob("session*.jsonl*")}
        yield from sorted(chosen for d in session_dirs if (chosen := canonical_session_file(d)) is not None)


def detect_source(path: Path) -> SourceKind | None:
    """Guess which agent wrote `path`: from its home folder if visible, else from its first line."""
    for part in reversed(path.parts):
        for marker, source in _HOME_MARKERS:
            if part == marker:
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
