"""A batch's input: stalled items read from a JSONL file or a folder, spooled privately, and the
manifest that lists them (the flow's only parameter is its digest).

Every item is spooled as given, invalid ones too (the batch records them as `invalid_input`);
identical items are one item. The manifest names the output folder, so it stays in the spool.
"""

import hashlib
from collections.abc import Sequence
from pathlib import Path

from contracts.batch import BatchManifest
from contracts.config import ProviderKind
from contracts.errors import InvalidInput
from contracts.json_input import load_contract
from obelisk_session_evidence.state import StatePaths, spool_situation, write_private


def read_stalled_items(source: Path) -> list[bytes]:
    """The raw documents in a JSONL file, a `.json` file, or a folder of both (sorted by name)."""
    try:
        if source.is_dir():
            files = sorted(
                path
                for path in source.iterdir()
                if path.is_file() and path.suffix in (".json", ".jsonl") and not path.name.startswith(".")
            )
        elif source.is_file():
            files = [source]
        else:
            raise InvalidInput("the batch input does not exist")
        items = [document for path in files for document in _documents_in(path)]
    except OSError:
        raise InvalidInput("the batch input cannot be read") from None
    if not items:
        raise InvalidInput("the batch input holds no items")
    return items


def _documents_in(path: Path) -> list[bytes]:
    data = path.read_bytes()
    if path.suffix == ".json":
        return [data]
    return [line.strip() for line in data.splitlines() if line.strip()]


def spool_batch(
    paths: StatePaths,
    items: Sequence[bytes],
    *,
    out_dir: Path,
    provider_kind: ProviderKind | None = None,
) -> str:
    """Spool every item privately (invalid ones too) and the manifest; return the manifest digest."""
    refs = list(dict.fromkeys(spool_situation(paths, raw) for raw in items))
    manifest = BatchManifest(
        item_refs=refs,
        input_count=len(items),
        out_dir=str(out_dir.expanduser().resolve()),
        provider_kind=provider_kind,
    )
    raw = manifest.model_dump_json().encode("utf-8")
    reference = "sha256:" + hashlib.sha256(raw).hexdigest()
    target = manifest_path(paths, reference)
    if not target.exists():
        write_private(target, raw)
    return reference


def manifest_path(paths: StatePaths, manifest_ref: str) -> Path:
    """Where the spooled manifest with this digest lives."""
    return paths.spool_dir / "manifests" / (manifest_ref.removeprefix("sha256:") + ".json")


def load_manifest(paths: StatePaths, manifest_ref: str) -> BatchManifest:
    """The spooled manifest, checked against its digest."""
    try:
        raw = manifest_path(paths, manifest_ref).read_bytes()
    except OSError:
        raise InvalidInput("no spooled manifest has this digest") from None
    if "sha256:" + hashlib.sha256(raw).hexdigest() != manifest_ref:
        raise InvalidInput("the spooled manifest does not match its digest")
    return load_contract(BatchManifest, raw)
