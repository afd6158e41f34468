"""A batch's input: stalled items read from a JSONL file or a folder, spooled privately, and the
manifest that lists them (the flow's only parameter is its digest).

Valid items are spooled as given; an invalid one is never spooled (its bytes may be anything, of
any size): the manifest keeps its digest, line, situation id and what was invalid, and the batch
records it as `invalid_input`. Identical items are one item. The manifest names the output
folder, so it stays in the spool.

Size: a manifest costs about 81 bytes per distinct item. A batch holds at most
`MAX_BATCH_ITEMS` (1,000,000: an 81 MB manifest that validates in 0.7 s, measured on 2 cores);
`MAX_MANIFEST_BYTES` is its read cap with room to spare. A larger input is refused when it is
spooled, saying so, never later as a digest that does not match.
"""

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from obelisk_session_evidence.batch.outputs import prepare_out_dir
from obelisk_session_evidence.contracts.batch import BatchManifest, InvalidItem
from obelisk_session_evidence.contracts.config import ProviderKind
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.contracts.json_input import MAX_DOCUMENT_BYTES, load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation, public_situation_id
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.spool import read_spooled, spool_document

MAX_BATCH_ITEMS: Final = 1_000_000
MAX_MANIFEST_BYTES: Final = 128 * 1024 * 1024
_UNSAFE_NAME: Final = re.compile(r"[^A-Za-z0-9._-]+")


def read_stalled_items(source: Path) -> list[bytes]:
    """The raw documents in a JSONL file, a `.json` file, or a folder of both (sorted by name)."""
    return [raw for _, raw in read_stalled_lines(source)]


def read_stalled_lines(source: Path) -> list[tuple[int, bytes]]:
    """`(line, document)` for every item: its 1-based line in the input, a folder's files read
    in name order as one stream (a `.json` file's item is on its first line)."""
    reading = source
    try:
        source.stat()  # a missing path fails here, with the OS's reason
        if source.is_dir():
            files = sorted(
                path
                for path in source.iterdir()
                if path.is_file() and path.suffix in (".json", ".jsonl") and not path.name.startswith(".")
            )
        elif source.is_file():
            files = [source]
        else:
            raise InvalidInput(f"cannot read {source}: not a file or a folder")
        items: list[tuple[int, bytes]] = []
        first_line = 1
        for reading in files:
            data = reading.read_bytes()
            items.extend((first_line + offset, raw) for offset, raw in _documents_in(reading, data))
            first_line += len(data.splitlines())
    except OSError as error:
        raise InvalidInput.unreadable(reading, error) from None
    if not items:
        raise InvalidInput("the batch input holds no items")
    return items


def _documents_in(path: Path, data: bytes) -> list[tuple[int, bytes]]:
    if path.suffix == ".json":
        return [(0, data)]
    return [(offset, line.strip()) for offset, line in enumerate(data.splitlines()) if line.strip()]


def spool_batch(
    paths: StatePaths,
    items: Sequence[bytes],
    *,
    out_dir: Path,
    provider_kind: ProviderKind | None = None,
    lines: Sequence[int] | None = None,
    name: str | None = None,
    max_items: int = MAX_BATCH_ITEMS,
) -> str:
    """Spool every valid item privately, keep what was wrong with the invalid ones, write the
    manifest; return its digest.

    `lines` are the items' input lines (default 1, 2, ...); a repeated item keeps its first.
    `name` (the input's file or folder name) names the batch's flow runs. More than `max_items`
    distinct items are refused. The output folder is checked first, so a refused target fails
    before any item is spooled."""
    prepare_out_dir(out_dir.expanduser())
    first_lines: dict[str, int] = {}
    invalid: dict[str, InvalidItem] = {}
    for raw, line in zip(items, lines or range(1, len(items) + 1), strict=True):
        reference = "sha256:" + hashlib.sha256(raw).hexdigest()
        if reference in first_lines:
            continue
        if len(first_lines) == max_items:
            raise InvalidInput(f"the input holds more than {max_items:,} distinct items; split it into batches")
        try:
            load_contract(ReplanSituation, raw)
        except InvalidInput as error:
            problems = [problem[:400] for problem in (error.problems or (error.detail,))[:5]]
            readable = len(raw) <= MAX_DOCUMENT_BYTES  # an oversize item is never parsed
            invalid[reference] = InvalidItem(
                problems=problems, situation_id=public_situation_id(raw) if readable else None
            )
        else:
            spool_document(paths, "situations", raw)
        first_lines[reference] = line
    manifest = BatchManifest(
        item_refs=list(first_lines),
        item_lines=list(first_lines.values()),
        input_count=len(items),
        out_dir=str(out_dir.expanduser().resolve()),
        provider_kind=provider_kind,
        name=batch_name(name),
        invalid=invalid,
    )
    return spool_document(paths, "manifests", manifest.model_dump_json().encode("utf-8"))


def batch_name(name: str | None) -> str | None:
    """The input's name with anything but letters, digits, `.`, `_` and `-` replaced by `-`."""
    cleaned = _UNSAFE_NAME.sub("-", name or "").strip("-._")[:64]
    return cleaned or None


def load_manifest(paths: StatePaths, manifest_ref: str) -> BatchManifest:
    """The spooled manifest, checked against its digest."""
    return load_contract(
        BatchManifest,
        read_spooled(paths, "manifests", manifest_ref, max_bytes=MAX_MANIFEST_BYTES),
        max_bytes=MAX_MANIFEST_BYTES,
    )
