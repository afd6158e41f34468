"""Scoped full-text search: `search_sql` builds the statement, `search` runs it.

Scope is part of the statement, never a filter applied afterwards: a row is a candidate only when
its file lies under one of the agent's (source, root) pairs and its session is bound to the
repository (see `repository.py`). Every value is a bound parameter; the only text spliced into
the SQL is fixed SQL and parameter names the builder makes itself.

Ranking is bm25 (tool commands weigh more than bodies) scaled up by recency: a row observed now
scores up to `1 + RECENCY_WEIGHT` times its bm25, decaying linearly to 1 over `RECENCY_HORIZON_S`.

Cost: bm25 evaluates every phrase once more over the whole index (for its IDF) and scores every
matching in-scope row, so a word found in a large share of the history (`head`, `src`, the
repository's own folder names) makes a lookup slow without telling anything. Word phrases are
therefore probed first (`selective_phrases`, a count bounded to `probe_cap` rows) and dropped when
common; whole-term phrases are always kept.
"""

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from providers.native.index.fts import is_weak_word, quote_fts_string
from providers.native.index.repository import RepositoryBinding, repository_sql
from providers.native.index.store import quote_identifier

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

_COLUMNS: Final = (
    "e.id", "e.kind", "e.uid", "e.evidence_type", "e.tool_name", "e.exit_code", "e.is_error",
    "e.observed_at", "s.source", "s.session_id", "s.cwd", "s.checkout_root", "s.repository_identity",
    "s.repository_url_key", "s.git_commit", "f.path",
)  # fmt: skip


_TEXT: Final = quote_identifier("entry_text")
_FROM: Final = (
    f"FROM {_TEXT}\n"
    f"JOIN {quote_identifier('entries')} AS e ON e.id = {_TEXT}.rowid\n"
    f"JOIN {quote_identifier('sessions')} AS s ON s.id = e.session_row\n"
    f"JOIN {quote_identifier('files')} AS f ON f.id = e.file_id"
)


@dataclass(frozen=True, slots=True)
class ScopeFilter:
    """The scope of one enablement, as the SQL predicates need it."""

    source_roots: tuple[tuple[str, str], ...]
    """(source, root) pairs: a row's file must be that source's and lie under that root."""
    repo_roots: tuple[str, ...]
    """Repository roots (see `repository.py` for the rules that bind a session to them)."""
    identities: tuple[str, ...] = ()
    """Root-commit identities the session's checkout may have."""
    url_keys: tuple[str, ...] = ()
    """Normalised remote URLs the session may have recorded."""
    checkouts: tuple[str, ...] = ()
    """Main working trees the session's checkout may be."""
    enclosing: tuple[str, ...] = ()
    """Checkouts holding a root as a subfolder: they bind only under that root."""
    remotes_known: bool = False
    """The roots' remotes are known, so a recorded remote outside `url_keys` excludes a session."""


@dataclass(frozen=True, slots=True)
class BuiltQuery:
    """A statement and the parameters it binds, by name."""

    sql: str
    params: dict[str, object]


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The best rows of a search, and how many distinct in-scope items matched in all."""

    rows: list["SearchRow"]
    total: int


@dataclass(frozen=True, slots=True)
class SearchRow:
    """One candidate row with what the provider needs to build and re-check an item."""

    entry_id: int
    kind: str
    uid: str
    evidence_type: str
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
    score: float


def search_sql(
    match: str, scope: ScopeFilter, *, evidence_types: Sequence[str], limit: int, now: float
) -> BuiltQuery:
    """The best `limit` distinct in-scope items for an FTS5 `match` expression, and how many match.

    One statement: `hits` scores every in-scope matching row (bm25 needs the FTS cursor, so it
    is computed before any grouping), `best` keeps each record's best copy (a record copied into
    several files is one item), and the outer query fetches text only for the `limit` best.
    """
    where, params = _scoped_where(match, scope, evidence_types)
    score = (
        f"bm25({_TEXT}, :command_weight, :body_weight, :detail_weight) * (1.0 + :recency_weight * "
        "max(0.0, 1.0 - (:now - coalesce(e.observed_epoch, 0.0)) / :recency_horizon))"
    )
    sql = (
        "WITH hits AS MATERIALIZED (\n"
        f"SELECT e.id AS id, s.source AS source, e.kind AS kind, e.uid AS uid, {score} AS score\n"
        f"{_FROM}\nWHERE {where}\n"
        "), best AS MATERIALIZED (\n"
        "SELECT id, min(score) AS score FROM hits GROUP BY source, kind, uid\n"
        ")\n"
        f"SELECT {', '.join(_COLUMNS)}, t.command, t.body, t.detail, b.score,"
        " (SELECT count(*) FROM best) AS total\n"
        "FROM (SELECT id, score FROM best ORDER BY score, id LIMIT :limit) AS b\n"
        f"JOIN {quote_identifier('entries')} AS e ON e.id = b.id\n"
        f"JOIN {quote_identifier('sessions')} AS s ON s.id = e.session_row\n"
        f"JOIN {quote_identifier('files')} AS f ON f.id = e.file_id\n"
        f"JOIN {_TEXT} AS t ON t.rowid = b.id\n"
        "ORDER BY b.score, b.id"
    )
    params.update(
        command_weight=COMMAND_WEIGHT,
        body_weight=BODY_WEIGHT,
        detail_weight=DETAIL_WEIGHT,
        recency_weight=RECENCY_WEIGHT,
        recency_horizon=RECENCY_HORIZON_S,
        now=now,
        limit=limit,
    )
    return BuiltQuery(sql, params)


def probe_sql(phrase: str, *, cap: int) -> BuiltQuery:
    """How many rows (up to `cap`) contain `phrase`: a bounded count, so a common word costs `cap` rows."""
    sql = f"SELECT count(*) FROM (SELECT 1 FROM {_TEXT} WHERE {_TEXT} MATCH :match LIMIT :cap)"
    return BuiltQuery(sql, {"match": quote_fts_string(phrase), "cap": cap})


def selective_phrases(
    connection: sqlite3.Connection, phrases: Sequence[str], *, cap: int, keep: int = MAX_WORD_PHRASES
) -> list[str]:
    """Up to `keep` phrases, in order, that match at least one row and fewer than `cap` rows.

    Weak words are not probed, and probing stops once `keep` are found: every phrase costs the
    ranking a pass over the index, so a long hypothesis must not turn into forty of them.
    """
    kept: list[str] = []
    for phrase in phrases:
        if len(kept) >= keep:
            break
        if is_weak_word(phrase):
            continue
        query = probe_sql(phrase, cap=cap)
        (count,) = connection.execute(query.sql, query.params).fetchone()
        if 0 < count < cap:
            kept.append(phrase)
    return kept


def probe_cap(connection: sqlite3.Connection) -> int:
    """A word is common when it is in more than 0.2% of the rows (bounded to 200..2000 rows)."""
    (rows,) = connection.execute(f"SELECT coalesce(max(id), 0) FROM {quote_identifier('entries')}").fetchone()
    return min(MAX_PROBE_ROWS, max(MIN_PROBE_ROWS, rows // 500))


def search(connection: sqlite3.Connection, query: BuiltQuery) -> SearchResult:
    """Run a `search_sql` statement."""
    rows, total = [], 0
    for *values, total in connection.execute(query.sql, query.params):
        rows.append(SearchRow(*values))
    return SearchResult(rows, total)


def _scoped_where(match: str, scope: ScopeFilter, evidence_types: Sequence[str]) -> tuple[str, dict[str, object]]:
    """The MATCH, evidence-type, agent and repository predicates, with their parameters."""
    params: dict[str, object] = {"match": match}
    types = _placeholders("evidence_type", evidence_types, params)
    agent = [
        f"(f.source = :source_{i} AND substr(f.path, 1, length(:source_root_{i})) = :source_root_{i})"
        for i in range(len(scope.source_roots))
    ]
    for i, (source, root) in enumerate(scope.source_roots):
        params[f"source_{i}"], params[f"source_root_{i}"] = source, _prefix(root)
    binding = RepositoryBinding(
        scope.repo_roots, scope.identities, scope.url_keys, scope.checkouts, scope.enclosing, scope.remotes_known
    )
    clauses = [
        f"{_TEXT} MATCH :match",
        f"e.evidence_type IN ({types})" if evidence_types else "0",
        "(" + " OR ".join(agent) + ")" if agent else "0",
        repository_sql(binding, params),
    ]
    return "\n  AND ".join(clauses), params


def _placeholders(name: str, values: Sequence[str], params: dict[str, object]) -> str:
    for i, value in enumerate(values):
        params[f"{name}_{i}"] = value
    return ", ".join(f":{name}_{i}" for i in range(len(values)))


def _prefix(root: str) -> str:
    """What a path inside `root` starts with."""
    return root if root.endswith("/") else root + "/"
