"""One enablement's scope as SQL predicates, and the same scope re-checked on every returned row.

Agent: the enablement binds its agent to source kinds and their roots (its `source_roots`, else
each agent's standard folder under the home directory), so a row counts only when its file is of
one of those sources and lies under that source's root, and when its session (the same source and
session id) is held from no file outside those roots: a session copied between two agents' folders
is neither's, since nothing in the copy says whose it is (`scoped_sql.py`). Repository: see
`repository.py` (a session's cwd, and a tool call's own folder where its source records one).
Project: the enablement itself is per project; the index holds no project of its own.
"""

from pathlib import Path

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.native.index.query import SearchRow
from obelisk_session_evidence.providers.native.index.repository import RepositoryBinding, binds, foreign_place, under
from obelisk_session_evidence.providers.native.index.roots import root_text
from obelisk_session_evidence.providers.native.index.scoped_sql import ScopeFilter
from obelisk_session_evidence.providers.native.parsers import default_roots


def enablement_roots(enablement: Enablement, *, home: Path | None = None) -> dict[SourceKind, list[Path]]:
    """The session roots one enablement reads: its configured roots, else the agents' defaults.
    A source whose folder did not exist when it was enabled and still does not is not used:
    it never held history, so its absence leaves the index complete (one that existed and
    disappeared is kept, and makes the index incomplete)."""
    defaults = default_roots(home or Path.home())
    roots = {source: Path(enablement.source_roots.get(source) or defaults[source]) for source in enablement.sources}
    return {source: [root] for source, root in roots.items() if _used(enablement, source, root)}


def _used(enablement: Enablement, source: SourceKind, root: Path) -> bool:
    return enablement.sources_found is None or source in enablement.sources_found or root.exists()


def scope_filter(roots: dict[SourceKind, list[Path]], binding: RepositoryBinding) -> ScopeFilter:
    """The SQL scope for these session roots and this repository binding."""
    return ScopeFilter(
        source_roots=tuple((source, root_text(root)) for source, paths in roots.items() for root in paths),
        repo_roots=binding.roots,
        identities=binding.identities,
        url_keys=binding.url_keys,
        checkouts=binding.checkouts,
        enclosing=binding.enclosing,
        remotes_known=binding.remotes_known,
    )


def row_in_scope(row: SearchRow, scope: ScopeFilter, binding: RepositoryBinding) -> bool:
    """The Python twin of the SQL scope: a row outside it means the query or the index is wrong."""
    agents = row.file_path in row.session_files and all(
        _agents_file(row.source, path, scope) for path in row.session_files
    )
    return (
        agents
        and binds(
            binding,
            cwd=row.cwd,
            checkout_root=row.checkout_root,
            identity=row.repository_identity,
            url=row.repository_url_key,
        )
        and not foreign_place(
            binding, cwd=row.call_cwd, checkout_root=row.call_checkout_root, identity=row.call_identity
        )
    )


def _agents_file(source: str, path: str, scope: ScopeFilter) -> bool:
    """`path` is a file under one of the agent's roots for `source`."""
    return any(source == kind and under(path, root) and path != root for kind, root in scope.source_roots)
