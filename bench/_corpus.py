"""Shared bench inputs: the real corpus's roots, and synthetic indexes grown from its parsed records."""

import dataclasses
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from fixtures.shared import REAL_CORPUS as SHARED_REAL_CORPUS
from obelisk_session_evidence.contracts.config import SourceKind
from obelisk_session_evidence.providers.native.index.repository import RepositoryResolver
from obelisk_session_evidence.providers.native.index.rows import OutcomeWriter
from obelisk_session_evidence.providers.native.index.store import atomic
from obelisk_session_evidence.providers.native.parsers import ParseOutcome, iter_session_paths, parse_session_file

REAL_CORPUS: Final = Path(os.environ.get("NATIVE_REAL_CORPUS", str(SHARED_REAL_CORPUS)))
REAL_ROOTS: Final[dict[SourceKind, list[Path]]] = {
    "claude": [REAL_CORPUS / "claude-spotter", REAL_CORPUS / "claude-codemie"],
    "codex": [REAL_CORPUS / "codex-codemie"],
    "pi": [REAL_CORPUS / "pi-badlogic"],
    "kimi": [REAL_CORPUS / "kimi-moonshotai"],
    "dsh": [REAL_CORPUS / "dsh-deepseek"],
}
SYNTHETIC_ROOT: Final = "/bench/sessions"
"""Synthetic rows claim files under `/bench/sessions/<source>/`, a folder that never exists."""
REPOSITORIES: Final = 4
"""Copies are spread over this many repositories (`/bench/repo-<n>`); a lookup binds to repo-0."""


def real_outcomes() -> list[tuple[SourceKind, ParseOutcome]]:
    """Every real corpus unit parsed once."""
    return [
        (source, parse_session_file(path, source))
        for source, roots in REAL_ROOTS.items()
        for root in roots
        for path in iter_session_paths(root, source)
    ]


def copied(outcome: ParseOutcome, copy: int) -> ParseOutcome:
    """One outcome re-keyed as copy `copy`: new session ids and uids, cwd in repository `copy % 4`."""
    suffix = f"~{copy}"
    cwd = f"/bench/repo-{copy % REPOSITORIES}/work"

    def rekey(record):
        changes = {"session_id": record.session_id + suffix}
        if hasattr(record, "record_uid"):
            changes["record_uid"] = record.record_uid + suffix
        return dataclasses.replace(record, **changes)

    sessions = tuple(dataclasses.replace(rekey(s), cwd=cwd, repository_url=None) for s in outcome.sessions)
    return dataclasses.replace(
        outcome,
        sessions=sessions,
        messages=tuple(rekey(m) for m in outcome.messages),
        tool_calls=tuple(rekey(c) for c in outcome.tool_calls),
        summaries=tuple(rekey(s) for s in outcome.summaries),
    )


def grow_index(
    connection, outcomes: list[tuple[SourceKind, ParseOutcome]], *, rows: int
) -> Iterator[tuple[int, float]]:
    """Write copies of the outcomes until the index holds `rows` entries; yields (entries, seconds)."""
    writer = OutcomeWriter(connection, RepositoryResolver())
    written, copy, started = 0, 0, time.monotonic()
    while written < rows:
        with atomic(connection):
            for number, (source, outcome) in enumerate(outcomes):
                path = f"{SYNTHETIC_ROOT}/{source}/copy{copy}/{number}.jsonl"
                cursor = connection.execute(
                    "INSERT INTO files (source, root, path, signature, device, inode, size, mtime_ns, ctime_ns,"
                    " indexed_at) VALUES (?, ?, ?, 'bench', 0, 0, 0, 0, 0, 0)",
                    (source, f"{SYNTHETIC_ROOT}/{source}", path),
                )
                counts = writer.write(cursor.lastrowid, source, copied(outcome, copy), fresh=True)
                written += counts.messages + counts.tool_calls + counts.summaries
        copy += 1
        yield written, time.monotonic() - started
