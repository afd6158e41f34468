"""A small enabled history for replay tests: Claude sessions of one repository, written in order."""

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from obelisk_session_evidence.contracts.config import Enablement, EnablementConfig
from obelisk_session_evidence.state.paths import StatePaths
from tests.providers.native.index.transcripts import ClaudeTranscript

REPO = "/work/alpha"
CANARY = "replay-canary-7f3e9b"
"""A word only the history's commands hold: it must never reach public output."""


@dataclass
class History:
    """Sessions of one agent in one repository, each starting an hour after the last."""

    root: Path
    sessions: int = 0

    def session(self, name: str) -> ClaudeTranscript:
        self.sessions += 1
        return ClaudeTranscript(self.root, name, f"{REPO}/src", minute=60 * self.sessions)


def enable(paths: StatePaths, root: Path) -> Enablement:
    """Enable agent-a / project-a / repo-a over `root` in the state's config.json."""
    enablement = Enablement(
        surface="replan-history",
        agent_id="agent-a",
        project_id="project-a",
        repository_id="repo-a",
        repo_roots=[REPO],
        sources=["claude"],
        source_roots={"claude": str(root)},
        enabled_at=datetime(2026, 11, 29, tzinfo=UTC),
    )
    paths.root.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text(EnablementConfig(enablements=[enablement]).model_dump_json())
    return enablement
