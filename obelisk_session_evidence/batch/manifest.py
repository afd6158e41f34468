"""A batch's input: stalled items read from a JSONL file or a folder, spooled privately, and the
manifest that lists them (the flow's only parameter is its digest).

Every item is spooled as given, invalid ones too (the batch records them as `invalid_input`);
identical items are one item. The manifest names the output folder, so it stays in the spool.
"""

from collections.abc import Sequence
from pathlib import Path

from contracts.batch import BatchManifest
from contracts.config import ProviderKind
from contracts.errors import InvalidInput
from contracts.json_input import MAX_DOCUMENT_BYTES, load_contract
from obelisk_session_evidence.batch.outputs import prepare_out_dir
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.spool import read_spooled, spool_document


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
    """Spool every item privately (invalid ones too) and the manifest; return the manifest digest.

    The output folder is checked first, so a refused target fails before any item is spooled."""
    prepare_out_dir(out_dir.expanduser())
    refs = list(dict.fromkeys(spool_document(paths, "situations", raw) for raw in items))
    manifest = BatchManifest(
        item_refs=refs,
        input_count=len(items),
        out_dir=str(out_dir.expanduser().resolve()),
        provider_kind=provider_kind,
    )
    return spool_document(paths, "manifests", manifest.model_dump_json().encode("utf-8"))


def load_manifest(paths: StatePaths, manifest_ref: str) -> BatchManifest:
    """The spooled manifest, checked against its digest."""
    return load_contract(
        BatchManifest, read_spooled(paths, "manifests", manifest_ref, max_bytes=MAX_DOCUMENT_BYTES)
    )
