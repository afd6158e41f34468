"""The real corpus laid out as agents keep it, one enablement per repository group: what replay's
real arm walks (`qualify`) and what tests and the bench replay.

Each group's session files are copied whole under one home folder at the place their agent
keeps them (`sources.json`'s `layout`); each group becomes the agent's enablement of its own
repository, so a group's replay never sees another group's sessions.
"""

from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.config import Enablement, EnablementConfig
from obelisk_session_evidence.providers.native.parsers.discovery import default_roots
from obelisk_session_evidence.qualify.real_cases import AGENT_ID, PROJECT_ID, RepositoryGroup, corpus_root

ENABLED_AT: Final = datetime(2026, 11, 1, tzinfo=UTC)


def lay_out_corpus(groups: dict[str, RepositoryGroup], home: Path, *, corpus: Path | None = None) -> EnablementConfig:
    """Copy every group's files under `home` and return one enablement per group."""
    source_folder = corpus or corpus_root()
    roots = default_roots(home)
    enablements = []
    for name, group in sorted(groups.items()):
        source = group.source
        for entry in group.files:
            target = roots[source] / entry.layout
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes((source_folder / entry.path).read_bytes())
        enablements.append(
            Enablement(
                surface="replan-history",
                agent_id=AGENT_ID,
                project_id=f"{PROJECT_ID}-{name}",
                repository_id=f"repo-real-{name}",
                repo_roots=list(group.repo_roots),
                sources=[source],
                source_roots={source: str(roots[source])},
                enabled_at=ENABLED_AT,
            )
        )
    return EnablementConfig(enablements=enablements)
