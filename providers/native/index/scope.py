"""One enablement's scope as SQL predicates, and the same scope re-checked on every returned row.

Agent: the enablement binds its agent to source kinds and their roots (its `source_roots`, else
each agent's standard folder under the home directory), so a row counts only when its file is of
one of those sources and lies under that source's root. Repository: see `repository.py`.
Project: the enablement itself is per project; the index holds no project of its own.
"""

from pathlib import Path

from contracts.config import Enablement, SourceKind
from providers.native.index.query import ScopeFilter, SearchRow
from providers.native.index.refresh import root_text
from providers.native.index.repository import RepositoryBinding, binds, under
from providers.native.parsers import default_roots


def enablement_roots(enablement: Enablement, *, home: Path | None = None) -> dict[SourceKind, list[Path]]:
    """The session roots one enablement reads: its configured roots, else the agents' defaults."""
    defaults = default_roots(home or Path.home())
    return {
        source: [Path(enablement.source_roots.get(source) or defaults[source])] for source in enablement.sources
    }


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
    agent = any(row.source == source and under(row.file_path, root) and row.file_path != root
                for source, root in scope.source_roots)  # fmt: skip
    return agent and binds(
        binding,
        cwd=row.cwd,
        checkout_root=row.checkout_root,
        identity=row.repository_identity,
        url=row.repository_url_key,
    )
