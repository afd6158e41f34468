"""No flag, environment variable or hand edit of config.json lets admission read another scope."""

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY
from obelisk_session_evidence.contracts.config import Enablement, shared_session_scopes
from obelisk_session_evidence.contracts.errors import ScopeBroadeningNotQualified
from obelisk_session_evidence.contracts.lifecycle import ProviderHealth
from obelisk_session_evidence.lifecycle.enablement import enable
from obelisk_session_evidence.lifecycle.policy import load_policy
from obelisk_session_evidence.stages.admit import admit
from obelisk_session_evidence.stages.classify_gap import classify_gap
from obelisk_session_evidence.state.paths import state_paths
from tests.lifecycle.helpers import enable_request
from tests.stages.helpers import situation_model

OTHER_AGENT = "agent-other"
OTHER_PROJECT = "project-other"


def _probe(paths, enablement):
    return ProviderHealth(kind="native", state="unknown", provider_version=None, reason_code="provider_status_unknown")


def _enable(**overrides):
    return enable(enable_request(**overrides), paths=state_paths(), probe=_probe)


def _admit_for(agent_id=FIXTURE_AGENT, project_id=FIXTURE_PROJECT):
    situation = situation_model(
        scope={"agent_id": agent_id, "project_id": project_id, "repository_id": FIXTURE_REPOSITORY}
    )
    return admit(situation, classify_gap(situation), policy=load_policy(state_paths()))


def _edit_config(edit) -> None:
    """Edit config.json as a person would: load the JSON, change it, write it back (mode kept)."""
    config_file = state_paths().config_file
    document = json.loads(config_file.read_text())
    edit(document)
    config_file.write_text(json.dumps(document))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"allow_cross_agent": True}, "--allow-cross-agent"),
        ({"allow_cross_project": True}, "--allow-cross-project"),
        ({"foreign_archives": (Path("/archives/someone-else"),)}, "--foreign-archive"),
        ({"agent_ids": (FIXTURE_AGENT, OTHER_AGENT)}, "more than one --agent-id"),
        ({"project_ids": (FIXTURE_PROJECT, OTHER_PROJECT)}, "more than one --project-id"),
        ({"repository_ids": (FIXTURE_REPOSITORY, "repo-other")}, "more than one --repository-id"),
    ],
)
def test_enable_rejects_scope_broadening(overrides, message):
    with pytest.raises(ScopeBroadeningNotQualified) as caught:
        _enable(**overrides)
    assert str(caught.value) == (
        f"scope_broadening_not_qualified: {message}: v0 enables one agent, project and repository"
    )
    assert not state_paths().config_file.exists()


@pytest.mark.parametrize(
    "overrides",
    [
        {"agent_ids": (OTHER_AGENT,)},
        {"project_ids": (OTHER_PROJECT,)},
        {"repository_ids": ("repo-other",)},
    ],
)
def test_enable_rejects_a_second_scope_reading_the_same_sessions(overrides):
    _enable()
    before = state_paths().config_file.read_bytes()
    with pytest.raises(ScopeBroadeningNotQualified, match="would read the same sessions"):
        _enable(**overrides)
    assert state_paths().config_file.read_bytes() == before


def test_enable_allows_a_second_agent_with_its_own_sessions(tmp_path):
    for agent in (FIXTURE_AGENT, OTHER_AGENT):
        (tmp_path / agent).mkdir()
        _enable(agent_ids=(agent,), sources=("codex",), source_roots=(f"codex={tmp_path / agent}",))
    assert len(load_policy(state_paths()).config.enablements) == 2


@pytest.mark.parametrize(
    ("one", "other", "shared"),
    [
        ({}, {"agent_id": OTHER_AGENT}, True),
        ({"repo_roots": ["/src/a"]}, {"agent_id": OTHER_AGENT, "repo_roots": ["/src/b"]}, False),
        ({"repo_roots": ["/src/a"]}, {"agent_id": OTHER_AGENT, "repo_roots": ["/src/a/wt"]}, True),
        ({"repo_roots": ["/src/a"]}, {"agent_id": OTHER_AGENT, "repo_roots": ["/src/ab"]}, False),
        ({"sources": ["claude"]}, {"agent_id": OTHER_AGENT, "sources": ["codex"]}, False),
        ({"source_roots": {"claude": "/h/a"}}, {"agent_id": OTHER_AGENT, "source_roots": {"claude": "/h/b"}}, True),
        (
            {"sources": ["claude"], "source_roots": {"claude": "/h/a"}},
            {"agent_id": OTHER_AGENT, "sources": ["claude"], "source_roots": {"claude": "/h/b"}},
            False,
        ),
        (
            {"sources": ["claude"], "source_roots": {"claude": "/h"}},
            {"agent_id": OTHER_AGENT, "sources": ["claude"], "source_roots": {"claude": "/h/b"}},
            True,
        ),
        ({}, {"project_id": OTHER_PROJECT}, True),
    ],
)
def test_shared_session_scopes_table(one, other, shared):
    base = {
        "surface": "replan-history",
        "agent_id": FIXTURE_AGENT,
        "project_id": FIXTURE_PROJECT,
        "repository_id": FIXTURE_REPOSITORY,
        "enabled_at": datetime(2026, 11, 29, tzinfo=UTC),
    }
    pair = [Enablement(**{**base, **one}), Enablement(**{**base, **other})]
    assert (shared_session_scopes(pair) is not None) is shared


def _add_other_agent(document):
    document["enablements"].append({**document["enablements"][0], "agent_id": OTHER_AGENT})


def _add_other_project(document):
    document["enablements"].append({**document["enablements"][0], "project_id": OTHER_PROJECT})


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda d: d.update(allow_cross_agent=True), id="top-level allow_cross_agent"),
        pytest.param(
            lambda d: d["enablements"][0].update(allow_cross_project=True), id="enablement allow_cross_project"
        ),
        pytest.param(lambda d: d["enablements"][0].update(agent_ids=[FIXTURE_AGENT, OTHER_AGENT]), id="agent_ids list"),
        pytest.param(lambda d: d["enablements"][0].update(agent_id="*"), id="wildcard agent"),
        pytest.param(lambda d: d["enablements"][0].update(foreign_archives=["/archives/x"]), id="foreign archive"),
        pytest.param(lambda d: d["enablements"][0].update(surface="all"), id="other surface"),
        pytest.param(_add_other_agent, id="another agent on the same sessions"),
        pytest.param(_add_other_project, id="another project on the same sessions"),
        pytest.param(lambda d: d["enablements"].append(d["enablements"][0]), id="duplicate scope"),
        pytest.param(
            lambda d: d["enablements"][0].update(historical_repo_roots=["/gone"]), id="historical root not a repo root"
        ),
        pytest.param(
            lambda d: d["enablements"][0].update(sources=["claude"], source_roots={"codex": "/x"}),
            id="root for a source not enabled",
        ),
    ],
)
def test_hand_edited_config_turns_admission_off(edit):
    _enable()
    assert _admit_for().status == "admitted"
    _edit_config(edit)
    assert load_policy(state_paths()).load_reason_code == "config_invalid"
    for agent_id, project_id in (
        (FIXTURE_AGENT, FIXTURE_PROJECT),
        (OTHER_AGENT, FIXTURE_PROJECT),
        (FIXTURE_AGENT, OTHER_PROJECT),
    ):
        admission = _admit_for(agent_id, project_id)
        assert (admission.status, admission.reason_code) == ("not_admitted", "config_invalid")


def test_hand_edited_separate_scope_never_returns_another_agents_scope(tmp_path):
    """A well-formed second enablement is a scope of its own: each agent still gets only its own."""
    for agent in (FIXTURE_AGENT, OTHER_AGENT):
        (tmp_path / agent).mkdir()
    _enable(sources=("claude",), source_roots=(f"claude={tmp_path / FIXTURE_AGENT}",))
    _edit_config(
        lambda d: d["enablements"].append(
            {**d["enablements"][0], "agent_id": OTHER_AGENT, "source_roots": {"claude": str(tmp_path / OTHER_AGENT)}}
        )
    )
    mine, theirs = _admit_for(FIXTURE_AGENT), _admit_for(OTHER_AGENT)
    assert mine.request.scope.agent_id == FIXTURE_AGENT and theirs.request.scope.agent_id == OTHER_AGENT
    assert mine.request.scope.allow_cross_agent is False and mine.request.scope.allow_cross_project is False
    assert _admit_for(FIXTURE_AGENT, OTHER_PROJECT).reason_code == "cross_project_denied"


@pytest.mark.parametrize(
    "variable",
    [
        "OBELISK_SESSION_EVIDENCE_ALLOW_CROSS_AGENT",
        "OBELISK_SESSION_EVIDENCE_ALLOW_CROSS_PROJECT",
        "OBELISK_SESSION_EVIDENCE_SCOPE",
        "OBELISK_SESSION_EVIDENCE_FOREIGN_ARCHIVE",
    ],
)
def test_environment_cannot_broaden_admission(monkeypatch, variable):
    _enable()
    for value in ("1", "true", "*"):
        monkeypatch.setenv(variable, value)
        assert _admit_for(OTHER_AGENT).reason_code == "cross_agent_denied"
        assert _admit_for(FIXTURE_AGENT, OTHER_PROJECT).reason_code == "cross_project_denied"
        assert _admit_for().request.scope.agent_id == FIXTURE_AGENT


def _git_repository(path: Path) -> Path:
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", f"root of {path.name}"], check=True)
    return path


def _clone(source: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(source), str(target)], check=True, capture_output=True)
    return target


def test_enable_rejects_another_agent_on_a_clone_of_the_same_repository(tmp_path):
    original = _git_repository(tmp_path / "original")
    clone = _clone(original, tmp_path / "clone")
    _enable(repo_roots=(original,))
    with pytest.raises(ScopeBroadeningNotQualified, match="would read the same sessions"):
        _enable(agent_ids=(OTHER_AGENT,), repo_roots=(clone,))


def test_hand_edited_clone_or_link_of_the_same_repository_turns_admission_off(tmp_path):
    original = _git_repository(tmp_path / "original")
    clone = _clone(original, tmp_path / "clone")
    link = tmp_path / "link"
    link.symlink_to(original, target_is_directory=True)
    _enable(repo_roots=(original,))
    for root in (clone, link):

        def other_agent_on(document, root=root):
            document["enablements"][1:] = [
                {**document["enablements"][0], "agent_id": OTHER_AGENT, "repo_roots": [str(root)]}
            ]

        _edit_config(other_agent_on)
        assert len(json.loads(state_paths().config_file.read_text())["enablements"]) == 2
        assert load_policy(state_paths()).load_reason_code == "config_invalid"
        assert _admit_for(OTHER_AGENT).reason_code == "config_invalid"
        assert _admit_for(FIXTURE_AGENT).reason_code == "config_invalid"


def test_separate_repositories_on_shared_sessions_stay_allowed(tmp_path):
    one = _git_repository(tmp_path / "one")
    two = _git_repository(tmp_path / "two")
    _enable(repo_roots=(one,))
    _enable(agent_ids=(OTHER_AGENT,), repo_roots=(two,))
    assert load_policy(state_paths()).load_reason_code == "config_loaded"
