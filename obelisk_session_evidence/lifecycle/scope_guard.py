"""Whether two scopes would read the same sessions: decided here, once, for `enable` and for a
hand-edited `config.json` alike.

Paths are compared as canonical real paths, so an alias of another agent's folder (`S//a`,
`S/b/../a`, a symbolic link to it) is the folder itself. `contracts.config.shared_session_scopes`
then compares those paths as text. A lookup also binds sessions to a repository by more than a
path prefix (`providers/native/index/repository.py`: the root commits shared by every clone and
worktree, the remote URL), so two scopes whose roots differ even as real paths can still bind the
same sessions: a clone of the same repository. When such scopes also share a session folder, one
would read the other's sessions; the configuration is refused.
"""

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from obelisk_session_evidence.contracts.config import (
    Enablement,
    paths_overlap,
    share_session_folder,
    shared_session_scopes,
)

if TYPE_CHECKING:
    from obelisk_session_evidence.providers.native.index.repository import RepositoryResolver


def scopes_reading_the_same_sessions(enablements: Sequence[Enablement]) -> tuple[int, int] | None:
    """The first pair of different scopes that would read the same sessions, else None."""
    canonical = [canonical_paths(enablement) for enablement in enablements]
    return shared_session_scopes(canonical) or _repository_shared_scopes(canonical)


def canonical_paths(enablement: Enablement) -> Enablement:
    """The enablement with every folder as its canonical real path (aliases and links resolved)."""
    return enablement.model_copy(
        update={
            "repo_roots": [os.path.realpath(root) for root in enablement.repo_roots],
            "historical_repo_roots": [os.path.realpath(root) for root in enablement.historical_repo_roots],
            "source_roots": {source: os.path.realpath(root) for source, root in enablement.source_roots.items()},
        }
    )


def _repository_shared_scopes(enablements: Sequence[Enablement]) -> tuple[int, int] | None:
    """The first pair of different scopes sharing a session folder and a repository, else None.

    Only pairs that share a session folder are resolved, so a configuration of one scope (or of
    scopes with separate session folders) runs no git at all.
    """
    bindings: dict[int, tuple[set[str], set[str], set[str]]] = {}
    resolver: RepositoryResolver | None = None

    def binding(position: int) -> tuple[set[str], set[str], set[str]]:
        nonlocal resolver
        if position not in bindings:
            # Imported only here: every `run` checks the configuration, few need a repository.
            from obelisk_session_evidence.providers.native.index.repository import (
                RepositoryResolver,
                repository_binding,
            )

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
