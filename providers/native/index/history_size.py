"""How much in-scope history lies before an as-of cut: what a prompt holding all of it would pay.

RFC §10's third arm (the full same-scope history, the cost ceiling) is measured on a replay as the
size of every in-scope entry before each call, counted once per entry up front, then summed per
cut by binary search: rows of other sessions observed before the cut's time, and rows of the
call's own session indexed before the call (`scoped_sql.as_of_sql`'s rule). A record a resumed
session's file copied counts once, as in the timeline.
"""

import bisect
import itertools
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from obelisk_session_evidence.providers.base import AsOf
from obelisk_session_evidence.providers.native.index.scoped_sql import JOINS, TEXT, ScopeFilter, scope_clauses
from obelisk_session_evidence.providers.native.index.store import quote_identifier

Count = Callable[[str], int]
"""An entry's size from its text (characters, or tokens)."""


@dataclass(frozen=True, slots=True)
class _Sorted:
    """Keys in order and the running sums of the sizes up to each."""

    keys: list[float]
    sums: list[int]

    @classmethod
    def of(cls, pairs: list[tuple[float, int]]) -> "_Sorted":
        pairs.sort()
        return cls([key for key, _ in pairs], [0, *itertools.accumulate(size for _, size in pairs)])

    def below(self, key: float) -> int:
        """The sum of the sizes whose key is below `key`."""
        return self.sums[bisect.bisect_left(self.keys, key)]


class HistorySizes:
    """The size of the scope's history before any cut, from one read of its entries."""

    def __init__(self, connection: sqlite3.Connection, scope: ScopeFilter, count: Count) -> None:
        params: dict[str, object] = {}
        where = scope_clauses(scope, None, params)
        sql = (
            f"SELECT e.id, e.session_row, e.observed_epoch, s.source, e.kind, e.uid,"
            f" coalesce(t.command, '') || ' ' || coalesce(t.body, '') || ' ' || coalesce(t.detail, '')"
            f" FROM {quote_identifier('entries')} AS e\n{JOINS}\nJOIN {TEXT} AS t ON t.rowid = e.id\n"
            f"WHERE {where}\nORDER BY e.id"
        )
        dated: list[tuple[float, int]] = []
        by_session_time: dict[int, list[tuple[float, int]]] = {}
        by_session_row: dict[int, list[tuple[float, int]]] = {}
        seen: set[tuple[str, str, str]] = set()
        for row_id, session_row, epoch, source, kind, uid, text in connection.execute(sql, params):
            if (source, kind, uid) in seen:
                continue
            seen.add((source, kind, uid))
            size = count(text.strip())
            by_session_row.setdefault(session_row, []).append((row_id, size))
            if epoch is not None:
                dated.append((epoch, size))
                by_session_time.setdefault(session_row, []).append((epoch, size))
        self._dated = _Sorted.of(dated)
        self._session_time = {key: _Sorted.of(pairs) for key, pairs in by_session_time.items()}
        self._session_rows = {key: _Sorted.of(pairs) for key, pairs in by_session_row.items()}

    def before(self, cut: AsOf) -> int:
        """The size of the history strictly before `cut` (its own session alone when it says so)."""
        own_rows = self._session_rows.get(cut.session_key)
        own = own_rows.below(cut.call_key) if own_rows else 0
        if cut.own_session_only:
            return own
        own_time = self._session_time.get(cut.session_key)
        return self._dated.below(cut.epoch) - (own_time.below(cut.epoch) if own_time else 0) + own
