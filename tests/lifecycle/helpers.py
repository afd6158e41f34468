"""Builders shared by the lifecycle tests."""

import hashlib
from pathlib import Path

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY
from obelisk_session_evidence.contracts.base import TRIGGERS
from obelisk_session_evidence.lifecycle.enablement import EnableRequest

FIXTURE_GONE_ROOT = Path("/nonexistent/fixture-repo")
"""A historical repository root: `enable` requires one root, and this one needs no folder."""


def enable_request(**overrides) -> EnableRequest:
    """The fixture scope, overridable per field (a historical root when no root is given). Its
    triggers are named (all four), as an operator overriding the promotion gate names them."""
    fields = {
        "triggers": TRIGGERS,
        "agent_ids": (FIXTURE_AGENT,),
        "project_ids": (FIXTURE_PROJECT,),
        "repository_ids": (FIXTURE_REPOSITORY,),
        **overrides,
    }
    if not fields.get("repo_roots") and not fields.get("historical_repo_roots"):
        fields["historical_repo_roots"] = (FIXTURE_GONE_ROOT,)
    return EnableRequest(**fields)


def tree_digest(root: Path) -> str:
    """sha256 over every path, file mode and byte under `root` (symbolic links by target)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            digest.update(f"L {relative} -> {path.readlink()}\n".encode())
        elif path.is_file():
            digest.update(f"F {relative} {path.stat().st_mode:o}\n".encode())
            digest.update(path.read_bytes())
        else:
            digest.update(f"D {relative}\n".encode())
    return digest.hexdigest()


def populate(root: Path, files: dict[str, bytes]) -> Path:
    """Write `files` (relative path → bytes) under `root`; return `root`."""
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root
