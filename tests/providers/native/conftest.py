"""Shared inputs for the native parser tests: the real corpus, DSH's own layout, generated histories."""

import json
import os
import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures.shared import REAL_CORPUS as SHARED_REAL_CORPUS
from obelisk_session_evidence.qualify.session_writers import FixtureManifest, write_native_histories

REAL_CORPUS = Path(os.environ.get("NATIVE_REAL_CORPUS", str(SHARED_REAL_CORPUS)))
"""Third-party session files kept byte-for-byte (see its NOTICE.md); never modified by tests."""

requires_real_corpus = pytest.mark.skipif(not REAL_CORPUS.is_dir(), reason=f"real corpus not present at {REAL_CORPUS}")


REAL_ROOTS = {
    "claude": [REAL_CORPUS / "claude-spotter", REAL_CORPUS / "claude-codemie"],
    "codex": [REAL_CORPUS / "codex-codemie"],
    "pi": [REAL_CORPUS / "pi-badlogic"],
    "kimi": [REAL_CORPUS / "kimi-moonshotai"],
    "dsh": [REAL_CORPUS / "dsh-deepseek"],
}
"""The real corpus's folders as refresh roots."""
_VOLATILE = {"files": {"indexed_at"}, "roots": {"refreshed_at"}, "schema_migrations": {"applied_at"}}
"""Columns that hold the time of the build, not what was read."""


def real_files(pattern: str) -> list[Path]:
    """Real corpus files matching a glob, sorted (empty when the corpus is absent)."""
    return sorted(REAL_CORPUS.glob(pattern)) if REAL_CORPUS.is_dir() else []


def json_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The straightforward reading the independent scans use: every line through `json.loads`."""
    with open(path, "rb") as lines:
        for raw in lines:
            if raw.strip():
                yield json.loads(raw)


def place_dsh_snapshots(sessions_root: Path) -> dict[str, Path]:
    """Copy the DSH snapshots into DSH's layout `<root>/--<cwd>--/<id>/session.jsonl`; name -> path."""
    placed = {}
    for snapshot in real_files("dsh-deepseek/*/session*.jsonl"):
        header = next(json_lines(snapshot))
        project = "--" + re.sub(r"[/\\:]", "-", header["cwd"].lstrip("/")) + "--"
        target = sessions_root / project / header["id"] / "session.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(snapshot, target)
        placed[f"{snapshot.parent.name}/{snapshot.name}"] = target
    return placed


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> FixtureManifest:
    """One generated five-agent history (default seed), shared read-only by the whole session."""
    return write_native_histories(tmp_path_factory.mktemp("native-histories"), rounds_per_session=2)


def index_rows(connection: sqlite3.Connection) -> dict[str, list[tuple]]:
    """Every row of every index table, sorted, without the columns that hold the time of the build."""
    tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    dumped = {}
    for table in tables:
        if table.startswith("entry_text_") or table == "entry_vocab":
            continue  # FTS5's own shadow tables and the vocabulary view follow from entry_text
        columns = [row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')]
        kept = [column for column in columns if column not in _VOLATILE.get(table, set())]
        rowid = "rowid, " if table == "entry_text" else ""
        query = f'SELECT {rowid}{", ".join(kept)} FROM "{table}"'
        if table == "meta":
            query += " WHERE key NOT IN ('last_refresh_at')"
        dumped[table] = sorted(connection.execute(query), key=repr)
    vocabulary = connection.execute("SELECT term, doc, cnt FROM entry_vocab ORDER BY term")
    dumped["entry_vocab"] = list(vocabulary)
    return dumped
