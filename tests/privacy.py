"""The canary scan: where in Prefect's database, storage, logs or outputs a private string landed.

It reports places (table names, file names), never the matching rows, so a failing assertion
cannot itself leak the content it found.
"""

import base64
import re
import sqlite3
import time
import uuid
from pathlib import Path

_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/]{16,}={0,2}")
PERSIST_DEADLINE_S = 120.0
"""How long the server may take to persist what was sent (its event persister flushes every 5 s)."""
MARKER_EVENT = "obelisk-session-evidence.test.drained"


def drain_prefect_workers() -> None:
    """Flush Prefect's background log and event writers, then wait until the server has persisted
    everything sent: a marker event sent last reaches its database (the persister writes in order)."""
    from prefect.events import emit_event
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    APILogWorker.instance().drain()
    marker = f"obelisk-session-evidence.test.{uuid.uuid4().hex}"
    assert emit_event(event=MARKER_EVENT, resource={"prefect.resource.id": marker}) is not None
    EventsWorker.drain_all()
    database = prefect_database_path()
    deadline = time.monotonic() + PERSIST_DEADLINE_S
    while not _has_marker(database, marker):
        assert time.monotonic() < deadline, f"the server persisted no marker event within {PERSIST_DEADLINE_S} s"
        time.sleep(0.05)


def _has_marker(database: Path, marker: str) -> bool:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        found = connection.execute(
            "SELECT 1 FROM events WHERE event = ? AND resource_id = ? LIMIT 1", (MARKER_EVENT, marker)
        ).fetchone()
    return found is not None


def prefect_database_path() -> Path:
    """The harness server's SQLite file."""
    from prefect.settings import PREFECT_SERVER_DATABASE_CONNECTION_URL

    url = PREFECT_SERVER_DATABASE_CONNECTION_URL.value()
    return Path(url.split(":///", 1)[1])


def canary_places_in_database(canary: str, database: Path) -> list[str]:
    """Tables with a row whose text holds the canary."""
    places = []
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            quoted = '"' + table.replace('"', '""') + '"'
            for row in connection.execute(f"SELECT * FROM {quoted}"):
                if any(_holds(value, canary) for value in row):
                    places.append(f"table:{table}")
                    break
    return places


def canary_places_in_files(canary: str, *folders: Path) -> list[str]:
    """Files whose raw bytes, or any base64 run inside them decoded, hold the canary."""
    needle = canary.encode("utf-8")
    places = []
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            if needle in data or any(needle in _decoded(run) for run in _BASE64_RUN.findall(data)):
                places.append(f"file:{path.name}")
    return places


def _holds(value: object, canary: str) -> bool:
    if isinstance(value, bytes):
        return canary.encode() in value or any(canary.encode() in _decoded(r) for r in _BASE64_RUN.findall(value))
    text = str(value)
    return canary in text or any(canary.encode() in _decoded(r) for r in _BASE64_RUN.findall(text.encode()))


def _decoded(run: bytes) -> bytes:
    try:
        return base64.b64decode(run + b"=" * (-len(run) % 4))
    except ValueError:
        return b""
