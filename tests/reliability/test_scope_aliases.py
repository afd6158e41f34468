"""Attack 3: agent B's session root in a hand-edited config.json is an alias of agent A's
(`S//agentA/projects`, `S/agentB/../agentA/projects`, a symbolic link). B must not be admitted:
the file is rejected whole (config_invalid), exactly as `enable` rejects the same alias."""

import json
import subprocess
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from fixtures.situations import FIXTURE_PROJECT, FIXTURE_REPOSITORY, situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.config import Enablement, EnablementConfig
from obelisk_session_evidence.lifecycle.enablement import enable
from obelisk_session_evidence.lifecycle.policy import load_policy
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.state.private_files import write_private
from tests.lifecycle.helpers import enable_request

ALIASES = ["double-slash", "dot-dot", "symlink"]


def _world(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    sessions = tmp_path / "S"
    (sessions / "agentA" / "projects").mkdir(parents=True)
    (sessions / "agentB").mkdir()
    return repo, sessions


def _alias(sessions, kind):
    if kind == "double-slash":
        return f"{sessions}//agentA/projects"
    if kind == "dot-dot":
        return f"{sessions}/agentB/../agentA/projects"
    link = sessions / "agentB" / "projects"
    link.symlink_to(sessions / "agentA" / "projects")
    return str(link)


def _enablement(agent, repo, claude_root):
    return Enablement(
        surface="replan-history",
        agent_id=agent,
        project_id=FIXTURE_PROJECT,
        repository_id=FIXTURE_REPOSITORY,
        repo_roots=[str(repo)],
        sources=["claude"],
        source_roots={"claude": claude_root},
        enabled_at=datetime(2026, 11, 29, tzinfo=UTC),
    )


@pytest.mark.parametrize("kind", ALIASES)
def test_alias_of_another_agents_folder_is_rejected_by_enable_and_in_config_json(tmp_path, kind):
    repo, sessions = _world(tmp_path)
    own = sessions / "agentA" / "projects"
    enable(
        enable_request(agent_ids=("agentA",), repo_roots=(repo,), sources=("claude",), source_roots=(f"claude={own}",)),
        paths=state_paths(),
    )
    alias = _alias(sessions, kind)
    refused = CliRunner().invoke(
        main,
        [
            "enable",
            "--surface",
            "replan-history",
            "--agent-id",
            "agentB",
            "--project-id",
            FIXTURE_PROJECT,
            "--repository-id",
            FIXTURE_REPOSITORY,
            "--repo-root",
            str(repo),
            "--source",
            "claude",
            "--source-root",
            f"claude={alias}",
        ],
    )
    assert refused.exit_code == 2
    assert refused.stderr.startswith("error: scope_broadening_not_qualified:")

    # The same scope written by hand: the whole file is rejected and B is not admitted.
    config = EnablementConfig(
        enablements=[
            _enablement("agentA", repo, str(own)),
            _enablement("agentB", repo, alias),
        ]
    )
    write_private(state_paths().config_file, config.model_dump_json().encode())
    assert load_policy(state_paths()).load_reason_code == "config_invalid"
    document = situation(
        scope={"agent_id": "agentB", "project_id": FIXTURE_PROJECT, "repository_id": FIXTURE_REPOSITORY}
    )
    result = CliRunner().invoke(main, ["run", "--situation", "-", "--format", "json"], input=json.dumps(document))
    assert result.exit_code == 0
    assert json.loads(result.stdout)["admission"]["reason_code"] == "config_invalid"
