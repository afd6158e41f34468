"""The SQL pieces every scoped statement shares: the scope as predicates, bound parameters, candidates.

Scope is part of every statement, never a filter applied afterwards: a row is a candidate only
when its file lies under one of the agent's (source, root) pairs, its session is bound to the
repository (see `repository.py`), its session is the agent's alone, and (a tool call) the folder
it ran in, where its source records one, is no checkout of another repository. Every value is a bound
parameter; the only text spliced into the SQL is fixed SQL and parameter names the builder makes
itself.

The agent's alone: a session (the same source and session id) that the index also holds from a
file outside every one of the enablement's (source, root) pairs is excluded, whichever copy is
the original. A session id is a random UUID, so the same one in another agent's folder means a
file was copied from one agent's folder into the other's, and nothing in the copy says whose it
is: fail closed. Files of one session under the agent's own roots (a resumed session, a subagent's
file) do not count against it. A copy is seen only when the other folder is indexed too (an
enablement of that agent on this machine refreshed it, or `index refresh --root` read it).
"""

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from obelisk_session_evidence.providers.base import AsOf
from obelisk_session_evidence.providers.native.index.repository import (
    RepositoryBinding,
    call_place_sql,
    repository_sql,
)
from obelisk_session_evidence.providers.native.index.store import quote_identifier

TEXT: Final = quote_identifier("entry_text")
JOINS: Final = (
    f"JOIN {quote_identifier('sessions')} AS s ON s.id = e.session_row\n"
    f"JOIN {quote_identifier('files')} AS f ON f.id = e.file_id"
)
"""An entry's (`e`) session (`s`) and file (`f`), which the scope predicates read."""
SESSION_FILES: Final = (
    f"FROM {quote_identifier('sessions')} AS twin"
    f" JOIN {quote_identifier('files')} AS twin_file ON twin_file.id = twin.file_id"
    " WHERE twin.source = s.source AND twin.session_id = s.session_id"
)
"""Every file (`twin_file`) the index holds the session `s` from (one probe of `sessions_session_id`)."""


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
    as_of: AsOf | None = None
    """Replay's cut: only rows before it (`as_of_sql`); None for the whole index."""
    window_start: float | None = None
    """The enablement's history window: rows observed before this epoch are left out (`window_sql`)."""

    @property
    def binding(self) -> RepositoryBinding:
        """The repository part of the scope, as `repository_sql` reads it."""
        return RepositoryBinding(
            self.repo_roots, self.identities, self.url_keys, self.checkouts, self.enclosing, self.remotes_known
        )


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


def scope_clauses(
    scope: ScopeFilter, evidence_types: Sequence[str] | None, params: dict[str, object], *, rows: bool = True
) -> str:
    """The evidence-type (unless None), agent, repository and sole-owner predicates (ANDed), adding
    their parameters; they read the session `s` and its file `f`, and with `rows` the entry `e`
    (the as-of cut, when the scope has one, and a call's own place)."""
    clauses = (
        []
        if evidence_types is None
        else [
            f"e.evidence_type IN ({_placeholders('evidence_type', evidence_types, params)})" if evidence_types else "0"
        ]
    )
    if rows and scope.as_of is not None:
        clauses.append(as_of_sql(scope.as_of, params, session="e.session_row", row="e.id", epoch="e.observed_epoch"))
    if rows and scope.window_start is not None:
        clauses.append(window_sql(scope.window_start, params, epoch="e.observed_epoch"))
    # The sole-owner probe last, after the cheaper predicates.
    clauses += [agent_sql("f", scope, params), repository_sql(scope.binding, params)]
    if rows:
        clauses.append(call_place_sql(scope.binding, params, entry="e.id"))
    clauses.append(f"NOT {elsewhere_sql(scope, params)}")
    return "\n  AND ".join(clauses)


def as_of_sql(cut: AsOf, params: dict[str, object], *, session: str, row: str, epoch: str) -> str:
    """Rows strictly before the cut, by the given columns: the call's own session up to the call
    (by index row: a session's rows are indexed in file order), other sessions by time (an
    undated row of another session is left out: it cannot be placed before the call)."""
    params.update(asof_epoch=cut.epoch, asof_session=cut.session_key, asof_call=cut.call_key)
    own = f"({session} = :asof_session AND {row} < :asof_call)"
    if cut.own_session_only:
        return own
    return f"({own} OR ({session} != :asof_session AND {epoch} < :asof_epoch))"


def window_sql(start: float, params: dict[str, object], *, epoch: str) -> str:
    """Rows observed at or after `start` (the history window's first instant); an undated row has
    no age to judge, so the window keeps it."""
    params["window_start"] = start
    return f"({epoch} IS NULL OR {epoch} >= :window_start)"


def agent_sql(file: str, scope: ScopeFilter, params: dict[str, object]) -> str:
    """The file `file` is of one of the agent's sources and lies under that source's root."""
    agent = [
        f"({file}.source = :source_{i} AND substr({file}.path, 1, length(:source_root_{i})) = :source_root_{i})"
        for i in range(len(scope.source_roots))
    ]
    for i, (source, root) in enumerate(scope.source_roots):
        params[f"source_{i}"], params[f"source_root_{i}"] = source, _prefix(root)
    return "(" + " OR ".join(agent) + ")" if agent else "0"


def elsewhere_sql(scope: ScopeFilter, params: dict[str, object]) -> str:
    """The session `s` is also held from a file outside the agent's roots (`f` is its own file)."""
    return f"EXISTS (SELECT 1 {SESSION_FILES} AND twin_file.id != f.id AND NOT {agent_sql('twin_file', scope, params)})"


def _placeholders(name: str, values: Sequence[str], params: dict[str, object]) -> str:
    for i, value in enumerate(values):
        params[f"{name}_{i}"] = value
    return ", ".join(f":{name}_{i}" for i in range(len(values)))


def _prefix(root: str) -> str:
    """What a path inside `root` starts with."""
    return root if root.endswith("/") else root + "/"
