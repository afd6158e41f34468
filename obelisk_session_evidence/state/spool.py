"""The private spool: documents kept by content digest, so only the digest crosses into Prefect."""

import hashlib
from pathlib import Path
from typing import Literal

from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private

SpoolKind = Literal["situations", "manifests", "replays"]
"""Replan situations, batch manifests, and the text of a replay's listed calls (`--private-out`)."""


def spool_document(paths: StatePaths, kind: SpoolKind, raw: bytes) -> str:
    """Keep `raw` in the spool; return its content digest (the only public reference)."""
    reference = "sha256:" + hashlib.sha256(raw).hexdigest()
    target = spooled_path(paths, kind, reference)
    if not target.exists():
        write_private(target, raw)
    return reference


def spooled_path(paths: StatePaths, kind: SpoolKind, reference: str) -> Path:
    """Where the spooled document with this digest lives."""
    return paths.spool_dir / kind / (reference.removeprefix("sha256:") + ".json")


def read_spooled(paths: StatePaths, kind: SpoolKind, reference: str, *, max_bytes: int) -> bytes:
    """The spooled document, checked against its digest; `InvalidInput` when absent or altered."""
    try:
        with spooled_path(paths, kind, reference).open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError:
        raise InvalidInput(f"no spooled {kind[:-1]} has this digest") from None
    if len(raw) > max_bytes or "sha256:" + hashlib.sha256(raw).hexdigest() != reference:
        raise InvalidInput(f"the spooled {kind[:-1]} does not match its digest")
    return raw
