"""Scoped full-text search whose work is bounded by constants, not by how many rows match.

A lookup is a handful of statements, each touching a bounded number of rows:

1. **Probe.** Every phrase (each whole term, then each word) is counted up to `probe_cap` rows.
   A phrase in no row is dropped. A phrase in fewer rows is *selective*. A phrase in `probe_cap`
   rows or more (0.2% of the index, 200..2000 rows) is *common*: its bm25 weight (IDF) is near
   zero, and ranking it would cost a pass over all of its rows. So
   - a common single word is dropped (`auth`, `src`, `head` say nothing on their own);
   - a common command gets its call lanes (2.), whose newest runs are found by time;
   - any other common term of several tokens (a path, a phrase) contributes its newest rows:
     of the last `SCAN_ROWS` indexed rows holding it, the in-scope ones, most recently observed
     first, at most `COMMON_TERM_ROWS` ("newest indexed": rows appended by later refreshes
     always have higher rowids; within a first build they follow file order).
2. **Call lanes** (`lanes.py`), for each term that reads as a command (`fts.call_shape`): the
   newest in-scope runs of the same command, then of the same program naming one of its
   subjects, found by time over an index of calls. The first of them rank before everything
   else, so path words in the query cannot push the proposed command's prior failures and
   outcomes out of the cap. Then the change lane: the newest in-scope changes (edits,
   file-changing commands) after the oldest of those runs, for compare-route only.
3. **Ranked.** bm25 over the selective phrases only (at most phrases x `probe_cap` rows; tool
   commands weigh more than bodies), scaled up by recency: a row observed now scores up to
   `1 + RECENCY_WEIGHT` times its bm25, decaying linearly to 1 over `RECENCY_HORIZON_S`. Scope
   is a predicate of the same statement, so only in-scope rows are scored; the best
   `RANKED_ROWS` ids come back.
4. **Rows.** Text and columns for the chosen ids only.

Scope is part of every statement (`scoped_sql.py`), never a filter applied afterwards.

A record copied into several files is one item: candidates are de-duplicated by (source, kind,
uid) over ids and keys in Python, not by grouping every hit. `SearchResult.matched` counts the
distinct in-scope items found; `bounded` says a bound cut it (a lane or the ranked pass came back
full), and then it is a lower bound: "at least `matched`".
"""

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from obelisk_session_evidence.contracts.base import EvidenceType
from obelisk_session_evidence.providers.native.index.fts import (
    CallShape,
    call_shape,
    fts_query,
    is_weak_word,
    query_phrases,
    quote_fts_string,
    token_words,
)
from obelisk_session_evidence.providers.native.index.lanes import call_lane, change_lane
from obelisk_session_evidence.providers.native.index.scoped_sql import (
    JOINS,
    SESSION_FILES,
    TEXT,
    BuiltQuery,
    Candidate,
    ScopeFilter,
    candidates,
    newest_sql,
    scope_clauses,
)
from obelisk_session_evidence.providers.native.index.store import quote_identifier

COMMAND_WEIGHT: Final = 4.0
"""bm25 weight of the command column (tool commands, tool names, file paths)."""
BODY_WEIGHT: Final = 1.0
"""bm25 weight of the body column (message text, tool output, summaries)."""
DETAIL_WEIGHT: Final = 0.0
"""The detail column is not indexed; bm25 still takes a weight for it."""
RECENCY_WEIGHT: Final = 0.5
RECENCY_HORIZON_S: Final = 90 * 86400.0
MIN_PROBE_ROWS: Final = 200
MAX_PROBE_ROWS: Final = 2000
MAX_WORD_PHRASES: Final = 12
SCAN_ROWS: Final = 1000
"""Newest indexed matches of a common phrase looked at (then the in-scope ones are kept)."""
COMMON_TERM_ROWS: Final = 8
"""Rows a common multi-token term contributes."""
MAX_CALL_SHAPES: Final = 3
"""Command terms that get call lanes (`admit` puts the route's commands first)."""
RANKED_ROWS: Final = 400
"""Best ranked ids fetched (and counted) per lookup."""

_COLUMNS: Final = (
    "e.id",
    "e.kind",
    "e.uid",
    "e.evidence_type",
    "e.tool_name",
    "e.exit_code",
    "e.is_error",
    "e.observed_at",
    "s.source",
    "s.session_id",
    "s.cwd",
    "s.checkout_root",
    "s.repository_identity",
    "s.repository_url_key",
    "s.git_commit",
    "f.path",
)


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """What a lookup's terms turn into after probing (see the module docstring)."""

    ranked: tuple[str, ...]
    """Selective phrases, ranked by bm25."""
    common_terms: tuple[str, ...]
    """Common multi-token terms, which contribute their newest rows."""
    shapes: tuple[CallShape, ...]
    """Command terms, which get call lanes."""


@dataclass(frozen=True, slots=True)
class SearchRow:
    """One candidate row with what the provider needs to build and re-check an item."""

    entry_id: int
    kind: str
    uid: str
    evidence_type: EvidenceType
    tool_name: str | None
    exit_code: int | None
    is_error: int | None
    observed_at: str | None
    source: str
    session_id: str
    cwd: str | None
    checkout_root: str | None
    repository_identity: str | None
    repository_url_key: str | None
    git_commit: str | None
    file_path: str
    command: str
    body: str
    detail: str
    session_files: tuple[str, ...]
    """Every file the index holds this row's session from (its own file among them), for the
    re-check that the session is the agent's alone (`scoped_sql.elsewhere_sql`)."""
    session_row: int = 0
    """The index's row of the row's session (replay's as-of re-check)."""
    observed_epoch: float | None = None
    """When the row was observed, as a Unix time (replay's as-of re-check)."""
    call_cwd: str | None = None
    """The folder a tool call ran in, where its source records one; else the session's `cwd` stands."""
    call_checkout_root: str | None = None
    """`call_cwd`'s checkout (main working tree), resolved at refresh; None without one."""
    call_identity: str | None = None
    """`call_cwd`'s repository identity, resolved at refresh; None without one."""
    call_escalated: bool = False
    """The tool call asked to run outside the agent's sandbox."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The best rows of a search, the prior calls of its call lanes, and how many items matched."""

    rows: list[SearchRow]
    """Distinct in-scope rows, best first (call lanes' front, ranked, common terms, other calls)."""
    calls: list[SearchRow]
    """The call lanes' rows, best first."""
    changes: list[SearchRow]
    """The change lane's rows: edits and file-changing commands after the call lanes' runs, newest first."""
    matched: int
    """Distinct in-scope items found; a lower bound when `bounded`."""
    bounded: bool


def plan_search(connection: sqlite3.Connection, terms: Sequence[str]) -> SearchPlan:
    """Probe every phrase of `terms` and sort them into ranked, common and command lanes."""
    term_phrases, word_phrases = query_phrases(terms)
    cap = probe_cap(connection)
    ranked, common = [], []
    for phrase in term_phrases:
        count = _probe(connection, phrase, cap)
        if 0 < count < cap:
            ranked.append(phrase)
        elif count >= cap and len(token_words(phrase)) > 1:
            common.append(phrase)
    words = selective_phrases(connection, word_phrases, cap=cap)
    shaped = [(term, shape) for term in terms if (shape := call_shape(term)) is not None]
    # A common command's newest runs come from its call lanes, by time: no rowid pass for it too.
    commands = {" ".join(token_words(term)) for term, _ in shaped}
    common = [phrase for phrase in common if " ".join(token_words(phrase)) not in commands]
    shapes = tuple(shape for _, shape in shaped)[:MAX_CALL_SHAPES]
    return SearchPlan(tuple(ranked + words), tuple(common), shapes)


def search(
    connection: sqlite3.Connection,
    plan: SearchPlan,
    scope: ScopeFilter,
    *,
    evidence_types: Sequence[str],
    limit: int,
    front: int,
    now: float,
) -> SearchResult:
    """Run a plan: call lanes, ranked pass and common terms; rows for the best `limit` items.

    The first `front` distinct prior calls of the call lanes come before every ranked row.
    """
    bounded = False
    calls: list[Candidate] = []
    sessions: dict[int, bool] = {}  # session row -> in scope, looked up as the lanes meet them
    for shape in plan.shapes:
        for column, value, subjects in (("command_key", shape.key, ()), ("program", shape.program, shape.subjects)):
            if column == "program" and not subjects:
                continue
            found, cut = call_lane(connection, column, value, subjects, sessions, scope, evidence_types)
            calls += found
            bounded = bounded or cut
    ranked: list[Candidate] = []
    match = fts_query(plan.ranked)
    if match is not None:
        query = ranked_sql(match, scope, evidence_types=evidence_types, bound=RANKED_ROWS, now=now)
        ranked = candidates(connection, query)
        bounded = bounded or len(ranked) >= RANKED_ROWS
    newest: list[Candidate] = []
    for phrase in plan.common_terms:
        newest += _newest(connection, quote_fts_string(phrase), scope, evidence_types, take=COMMON_TERM_ROWS)
        bounded = True  # a common phrase has more rows than its newest ones
    calls = _distinct(calls)
    changes: list[Candidate] = []
    since = _oldest_run(connection, [candidate.entry_id for candidate in calls])
    if since is not None:
        changes, cut = change_lane(connection, since, scope, evidence_types)
        bounded = bounded or cut
    ordered = _distinct([*calls[:front], *ranked, *newest, *calls[front:]])
    chosen = [candidate.entry_id for candidate in ordered[:limit]]
    call_ids = [candidate.entry_id for candidate in calls]
    change_ids = [candidate.entry_id for candidate in changes]
    rows = fetch_rows(connection, list(dict.fromkeys(chosen + call_ids + change_ids)))
    return SearchResult(
        rows=[rows[i] for i in chosen if i in rows],
        calls=[rows[i] for i in call_ids if i in rows],
        changes=[rows[i] for i in change_ids if i in rows],
        matched=len(ordered),
        bounded=bounded,
    )


def ranked_sql(match: str, scope: ScopeFilter, *, evidence_types: Sequence[str], bound: int, now: float) -> BuiltQuery:
    """The best `bound` in-scope rows for an FTS5 `match` of selective phrases: ids, keys, no text.

    bm25 needs the FTS cursor, so it is computed in the same statement as the scope predicates;
    SQLite evaluates it only for rows that pass them, and keeps the best `bound` in its sorter.
    """
    params: dict[str, object] = {"match": match}
    where = scope_clauses(scope, evidence_types, params)
    score = (
        f"bm25({TEXT}, :command_weight, :body_weight, :detail_weight) * (1.0 + :recency_weight * "
        "max(0.0, 1.0 - (:now - coalesce(e.observed_epoch, 0.0)) / :recency_horizon))"
    )
    sql = (
        f"SELECT e.id, s.source, e.kind, e.uid FROM {TEXT}\n"
        f"JOIN {quote_identifier('entries')} AS e ON e.id = {TEXT}.rowid\n{JOINS}\n"
        f"WHERE {TEXT} MATCH :match\n  AND {where}\nORDER BY {score}, e.id LIMIT :bound"
    )
    params.update(
        command_weight=COMMAND_WEIGHT,
        body_weight=BODY_WEIGHT,
        detail_weight=DETAIL_WEIGHT,
        recency_weight=RECENCY_WEIGHT,
        recency_horizon=RECENCY_HORIZON_S,
        now=now,
        bound=bound,
    )
    return BuiltQuery(sql, params)


def newest_ids_sql(match: str, *, scan: int) -> BuiltQuery:
    """The last `scan` indexed rows matching `match` (FTS5 walks its rowids backwards and stops)."""
    sql = f"SELECT rowid FROM {TEXT} WHERE {TEXT} MATCH :match ORDER BY rowid DESC LIMIT :scan"
    return BuiltQuery(sql, {"match": match, "scan": scan})


def probe_sql(phrase: str, *, cap: int) -> BuiltQuery:
    """How many rows (up to `cap`) contain `phrase`: a bounded count, so a common word costs `cap` rows."""
    sql = f"SELECT count(*) FROM (SELECT 1 FROM {TEXT} WHERE {TEXT} MATCH :match LIMIT :cap)"
    return BuiltQuery(sql, {"match": quote_fts_string(phrase), "cap": cap})


def selective_phrases(
    connection: sqlite3.Connection, phrases: Sequence[str], *, cap: int, keep: int = MAX_WORD_PHRASES
) -> list[str]:
    """Up to `keep` phrases, in order, that match at least one row and fewer than `cap` rows.

    Weak words are not probed, and probing stops once `keep` are found: every phrase costs the
    ranking a pass over its rows, so a long hypothesis must not turn into forty of them.
    """
    kept: list[str] = []
    for phrase in phrases:
        if len(kept) >= keep:
            break
        if not is_weak_word(phrase) and 0 < _probe(connection, phrase, cap) < cap:
            kept.append(phrase)
    return kept


def probe_cap(connection: sqlite3.Connection) -> int:
    """A phrase is common when it is in more than 0.2% of the rows (bounded to 200..2000 rows)."""
    (rows,) = connection.execute(f"SELECT coalesce(max(id), 0) FROM {quote_identifier('entries')}").fetchone()
    return min(MAX_PROBE_ROWS, max(MIN_PROBE_ROWS, rows // 500))


def fetch_rows(connection: sqlite3.Connection, ids: Sequence[int]) -> dict[int, SearchRow]:
    """The columns and text of the rows `ids`, by id."""
    if not ids:
        return {}
    sql = (
        f"SELECT {', '.join(_COLUMNS)}, t.command, t.body, t.detail, (SELECT json_group_array(twin_file.path)"
        f" {SESSION_FILES}), e.session_row, e.observed_epoch, place.cwd, place.checkout_root,"
        f" place.repository_identity, coalesce(place.escalated, 0) FROM json_each(:ids) AS m\n"
        f"JOIN {quote_identifier('entries')} AS e ON e.id = m.value\n{JOINS}\n"
        f"JOIN {TEXT} AS t ON t.rowid = e.id\n"
        f"LEFT JOIN {quote_identifier('call_details')} AS place ON place.entry_id = e.id"
    )
    rows = (
        # one row: its columns, its session files, then its session row, time and the call's own
        # place (one tuple: mypy cannot count the columns of a starred row before further arguments)
        SearchRow(*(*values, tuple(json.loads(paths)), session_row, epoch, cwd, checkout, identity, bool(escalated)))
        for *values, paths, session_row, epoch, cwd, checkout, identity, escalated in connection.execute(
            sql, {"ids": json.dumps(list(ids))}
        )
    )
    return {row.entry_id: row for row in rows}


def _probe(connection: sqlite3.Connection, phrase: str, cap: int) -> int:
    query = probe_sql(phrase, cap=cap)
    (count,) = connection.execute(query.sql, query.params).fetchone()
    return count


def _newest(
    connection: sqlite3.Connection, match: str, scope: ScopeFilter, evidence_types: Sequence[str], *, take: int
) -> list[Candidate]:
    """A common phrase's in-scope candidates among its newest `SCAN_ROWS` indexed matches."""
    scan = newest_ids_sql(match, scan=SCAN_ROWS)
    ids = [row_id for (row_id,) in connection.execute(scan.sql, scan.params)]
    if not ids:
        return []
    return candidates(connection, newest_sql(ids, scope, evidence_types=evidence_types, take=take))


def _oldest_run(connection: sqlite3.Connection, ids: Sequence[int]) -> float | None:
    """When the oldest of the calls `ids` ran; None without dated calls."""
    if not ids:
        return None
    (oldest,) = connection.execute(
        f"SELECT min(observed_epoch) FROM {quote_identifier('call_details')}"
        " WHERE entry_id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(ids)),),
    ).fetchone()
    return oldest


def _distinct(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The first candidate of each record (later copies from other files, or other lanes, dropped)."""
    seen: set[tuple[str, str, str]] = set()
    kept = []
    for candidate in candidates:
        if candidate.key not in seen:
            seen.add(candidate.key)
            kept.append(candidate)
    return kept
