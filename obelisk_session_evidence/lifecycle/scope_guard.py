"""Scopes that would read the same sessions: the check that needs the disk (git), beside the textual one.

`contracts.config.shared_session_scopes` compares configured paths as text. A lookup binds sessions
to a repository by more than a path prefix (`providers/native/index/repository.py`: the real path
of a root, the root commit shared by every clone and worktree, the remote URL), so two scopes whose
roots differ as text can still bind the same sessions: a clone of the same repository, or a
symbolic link to the same checkout. When such scopes also share a session folder, one would read
the other's sessions; the configuration is refused, whether `enable` or a hand edit wrote it.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING

from contracts.config import Enablement, paths_overlap, share_session_folder

if TYPE_CHECKING:
    from providers.native.index.repository import RepositoryResolver


def repository_shared_scopes(enablements: Sequence[Enablement]) -> tuple[int, int] | None:
    """The first pair of different scopes sharing a session folder and a repository, else None.

    Only pairs that share a session folder are resolved, so a configuration of one scope (or of
    scopes with separate session folders) runs no git at all.
    """
    bindings: dict[int, tuple[set[str], set[str], set[str]]] = {}
    resolver: "RepositoryResolver | None" = None

    def binding(position: int) -> tuple[set[str], set[str], set[str]]:
        nonlocal resolver
        if position not in bindings:
            # Imported only here: every `run` checks the configuration, few need a repository.
            from providers.native.index.repository import RepositoryResolver, repository_binding

            if resolver is None:
                resolver = RepositoryResolver()
            found = repository_binding(enablements[position].repo_roots, resolver)
            bindings[position] = (set(found.roots), set(found.identities), set(found.url_keys))
        return bindings[position]

    for first in range(len(enablements)):
        for second in range(first + 1, len(enablements)):
            one, other = enablements[first], enablements[second]
            if one.scope_key == other.scope_key or not share_session_folder(one, other):
                continue
            roots, identities, urls = binding(first)
            other_roots, other_identities, other_urls = binding(second)
            if (
                identities & other_identities
                or urls & other_urls
                or any(paths_overlap(a, b) for a in roots for b in other_roots)
            ):
                return first, second
    return None
