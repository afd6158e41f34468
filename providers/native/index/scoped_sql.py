"""The SQL pieces every scoped statement shares: the scope as predicates, bound parameters, candidates.

Scope is part of every statement, never a filter applied afterwards: a row is a candidate only
when its file lies under one of the agent's (source, root) pairs and its session is bound to the
repository (see `repository.py`). Every value is a bound parameter; the only text spliced into the
SQL is fixed SQL and parameter names the builder makes itself.
"""

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from providers.native.index.store import quote_identifier

TEXT: Final = quote_identifier("entry_text")
JOINS: Final = (
    f"JOIN {quote_identifier('sessions')} AS s ON s.id = e.session_row\n"
    f"JOIN {quote_identifier('files')} AS f ON f.id = e.file_id"
)
"""An entry's (`e`) session (`s`) and file (`f`), which the scope predicates read."""


@dataclass(frozen=True, slots=True)
class ScopeFilter:
    """The scope of one enablement, as the SQL predicates need it."""

    source_roots: tuple[tuple[str, str], ...]
    """(source, root) pairs: a row's file must be that source's and lie under that root."""
    repo_roots: tuple[str, ...]
    """Repository roots: the session's cwd or main checkout must lie under one."""
    identities: tuple[str, ...] = ()
    """Root-commit identities the session's checkout may have."""
    url_keys: tuple[str, ...] = ()
    """Normalised remote URLs the session may have recorded."""


@dataclass(frozen=True, slots=True)
class BuiltQuery:
    """A statement and the parameters it binds, by name."""

    sql: str
    params: dict[str, object]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate row: its id and the key of its record (source, kind, uid), by which copies collapse."""

    entry_id: int
    key: tuple[str, str, str]


def newest_sql(ids: Sequence[int], scope: ScopeFilter, *, evidence_types: Sequence[str], take: int) -> BuiltQuery:
    """Of the rows `ids`, the `take` most recently observed in-scope ones."""
    params: dict[str, object] = {"ids": json.dumps(list(ids)), "take": take}
    where = scope_clauses(scope, evidence_types, params)
    sql = (
        f"SELECT e.id, s.source, e.kind, e.uid FROM json_each(:ids) AS m\n"
        f"JOIN {quote_identifier('entries')} AS e ON e.id = m.value\n{JOINS}\n"
        f"WHERE {where}\nORDER BY coalesce(e.observed_epoch, 0.0) DESC, e.id DESC LIMIT :take"
    )
    return BuiltQuery(sql, params)


def candidates(connection: sqlite3.Connection, query: BuiltQuery) -> list[Candidate]:
    """Rows of (id, source, kind, uid) as candidates."""
    return [Candidate(i, (source, kind, uid)) for i, source, kind, uid in connection.execute(query.sql, query.params)]


def scope_clauses(scope: ScopeFilter, evidence_types: Sequence[str] | None, params: dict[str, object]) -> str:
    """The evidence-type (unless None), agent and repository predicates (ANDed), adding their parameters."""
    agent = [
        f"(f.source = :source_{i} AND substr(f.path, 1, length(:source_root_{i})) = :source_root_{i})"
        for i in range(len(scope.source_roots))
    ]
    for i, (source, root) in enumerate(scope.source_roots):
        params[f"source_{i}"], params[f"source_root_{i}"] = source, _prefix(root)
    repository = []
    for i, root in enumerate(scope.repo_roots):
        params[f"repo_root_{i}"], params[f"repo_prefix_{i}"] = root, _prefix(root)
        repository.append(
            f"s.cwd = :repo_root_{i} OR substr(s.cwd, 1, length(:repo_prefix_{i})) = :repo_prefix_{i}"
            f" OR s.checkout_root = :repo_root_{i}"
            f" OR substr(s.checkout_root, 1, length(:repo_prefix_{i})) = :repo_prefix_{i}"
        )
    if scope.identities:
        repository.append(f"s.repository_identity IN ({_placeholders('identity', scope.identities, params)})")
    if scope.url_keys:
        repository.append(f"s.repository_url_key IN ({_placeholders('url', scope.url_keys, params)})")
    clauses = [] if evidence_types is None else [
        f"e.evidence_type IN ({_placeholders('evidence_type', evidence_types, params)})" if evidence_types else "0"
    ]
    clauses += [
        "(" + " OR ".join(agent) + ")" if agent else "0",
        "(" + "\n    OR ".join(repository) + ")" if repository else "0",
    ]
    return "\n  AND ".join(clauses)


def _placeholders(name: str, values: Sequence[str], params: dict[str, object]) -> str:
    for i, value in enumerate(values):
        params[f"{name}_{i}"] = value
    return ", ".join(f":{name}_{i}" for i in range(len(values)))


def _prefix(root: str) -> str:
    """What a path inside `root` starts with."""
    return root if root.endswith("/") else root + "/"
