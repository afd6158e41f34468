"""What changed under the session roots since the last refresh, seen by one `stat` pass.

The scan of the roots (`scan_roots`) and the comparison of what it finds with the stored cursors
(`pending_changes`) live apart from `refresh` so that a lookup can check its scope's files on
every call without loading the refresh machinery (parsers, parser workers, row writers): the
check lists folders only where their signature changed (`listings.py`), `stat`s each unit once,
and reads each root's stored signatures in one query. A refresh starts from the same scan.
"""

import hashlib
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from obelisk_session_evidence.contracts.index_status import RootState
from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.native.index.cursor import FileSignature
from obelisk_session_evidence.providers.native.index.last_scan import as_last_refresh_left, read_last_scan
from obelisk_session_evidence.providers.native.index.listings import Listings, load_listings
from obelisk_session_evidence.providers.native.index.revision import current_revision
from obelisk_session_evidence.providers.native.index.roots import Roots, root_text
from obelisk_session_evidence.providers.native.index.scan import scan_root
from obelisk_session_evidence.providers.native.index.store import index_errors


@dataclass(frozen=True, slots=True)
class Unit:
    """One parseable unit found under a root, with its signature when the scan could `stat` it."""

    source: SourceKind
    root: str
    path: str
    signature: FileSignature | None


@dataclass(slots=True)
class ScannedRoots:
    """What listing the roots found: units, per-root state, and which roots were listed fully."""

    units: list[Unit] = field(default_factory=list)
    states: dict[tuple[str, str], RootState] = field(default_factory=dict)

    @property
    def listed(self) -> list[tuple[str, str]]:
        """Roots whose listing is complete. A missing root is not one: an unmounted home, a rename or
        a sync in progress looks the same as a deletion, so its rows are kept, never read as gone."""
        return [key for key, state in self.states.items() if state == "indexed"]

    @property
    def unlisted(self) -> int:
        """Roots that are missing or could not be listed: the index is `incomplete` for them."""
        return sum(state != "indexed" for state in self.states.values())


def scan_roots(roots: Roots, listings: Listings | None = None) -> ScannedRoots:
    """List every unit under the roots (first root wins a path listed twice) and each root's state."""
    scanned = ScannedRoots()
    claimed: set[str] = set()
    for source, paths in roots.items():
        for root in paths:
            key = root_text(root)
            state, found = scan_root(Path(key), source, listings)
            scanned.states[(source, key)] = state
            for unit in found:
                if unit.path not in claimed:
                    claimed.add(unit.path)
                    scanned.units.append(Unit(source, key, unit.path, unit.signature))
    return scanned


class Known(NamedTuple):
    """What the change check needs of a stored cursor."""

    id: int
    source: str
    root: str
    signature: str
    failure: str | None


_KNOWN = "SELECT path, id, source, root, signature, failure FROM files"


def known_files(connection: sqlite3.Connection, scanned: ScannedRoots) -> dict[str, Known]:
    """The stored cursor of every file under the scanned roots, and of any unit listed elsewhere.

    Only what the change check needs is read here (a no-change refresh of 10,000 files reads no
    more); a changed unit's full cursor is read when it is refreshed.
    """
    known: dict[str, Known] = {}
    for source, root in scanned.states:
        for path, *row in connection.execute(_KNOWN + " WHERE source = ? AND root = ?", (source, root)):
            known[path] = Known(*row)
    for unit in scanned.units:
        if unit.path not in known:
            found = connection.execute(_KNOWN + " WHERE path = ?", (unit.path,)).fetchone()
            if found is not None:
                known[unit.path] = Known(*found[1:])
    return known


def scan_digest(scanned: ScannedRoots) -> str:
    """Every root's state and every unit's path and signature, as one digest."""
    parts = [f"{source}\x1f{root}\x1f{state}" for (source, root), state in scanned.states.items()]
    parts += [
        f"{unit.source}\x1f{unit.root}\x1f{unit.path}\x1f{unit.signature.digest if unit.signature else '-'}"
        for unit in scanned.units
    ]
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def same_scan_as_last(connection: sqlite3.Connection, scanned: ScannedRoots) -> tuple[int, int] | None:
    """`(unchanged, failed)` when the roots look exactly as at the end of the last complete refresh and
    the index has not changed since: then no unit's cursor needs reading (a no-change refresh).

    A complete refresh leaves every unit's stored signature equal to its scanned one (read, failed or
    unchanged), and any content change advances the revision, so an equal scan and an equal revision
    mean every unit is unchanged and none was deleted; the counts are those that refresh left.
    """
    last = read_last_scan(connection)
    if last is None or any(state == "unreadable" for state in scanned.states.values()):
        return None
    if last.revision != current_revision(connection).text or last.digest != scan_digest(scanned):
        return None
    return last.units, last.failed


def pending_changes(connection: sqlite3.Connection, roots: Roots) -> int:
    """How many units were added, changed or deleted, and how many roots changed state (appeared,
    went missing, became unreadable), since the last refresh: `stat` only, nothing parsed. One
    `stat` per stored folder and unit answers 0 first where it can (`last_scan.py`)."""
    with index_errors():
        now_ns = time.time_ns()
        if as_last_refresh_left(connection, roots, now_ns=now_ns):
            return 0
        scanned = scan_roots(roots, load_listings(connection, now_ns=now_ns))
        if same_scan_as_last(connection, scanned) is not None:
            return 0
        changed = _changed_root_states(connection, scanned)
        known = known_files(connection, scanned)
        listed = set(scanned.listed)
        seen = set()
        for unit in scanned.units:
            seen.add(unit.path)
            row = known.get(unit.path)
            changed += row is None or unit.signature is None or row.signature != unit.signature.digest
        changed += sum(1 for path, row in known.items() if path not in seen and (row.source, row.root) in listed)
        return changed


def _changed_root_states(connection: sqlite3.Connection, scanned: ScannedRoots) -> int:
    """Roots whose state differs from the one the last refresh stored (a root never refreshed counts):
    a root that went missing lists no units, so only its state says that its rows are behind."""
    changed = 0
    for (source, root), state in scanned.states.items():
        stored = connection.execute("SELECT state FROM roots WHERE source = ? AND path = ?", (source, root)).fetchone()
        changed += stored is None or stored[0] != state
    return changed
