"""Through the real native provider: a hand edit never hands one agent another agent's sessions."""

import json

import pytest
from click.testing import CliRunner

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.compose import decide
from obelisk_session_evidence.lifecycle.enablement import enable
from obelisk_session_evidence.lifecycle.policy import load_policy
from obelisk_session_evidence.providers.native.index.results import session_ref
from obelisk_session_evidence.providers.native.parsers import default_roots
from obelisk_session_evidence.qualify.session_writers import write_native_histories
from obelisk_session_evidence.state.paths import state_paths
from tests.lifecycle.helpers import enable_request
from tests.stages.helpers import situation_model

OTHER_AGENT = "agent-other"
SOURCES = ("claude", "codex")


@pytest.fixture
def corpus(tmp_path):
    """Alpha sessions for the fixture agent, beta (bait) sessions in the same session folders."""
    return write_native_histories(tmp_path / "corpus")


def _source_roots(manifest):
    roots = default_roots(manifest.home)
    return tuple(f"{source}={roots[source]}" for source in SOURCES)


def _refs(manifest, *, bait):
    return {session_ref(s.source, s.session_id) for s in manifest.sessions if s.is_bait is bait and s.source in SOURCES}


def _decide_for(agent_id):
    situation = situation_model(
        scope={"agent_id": agent_id, "project_id": FIXTURE_PROJECT, "repository_id": FIXTURE_REPOSITORY}
    )
    return decide(situation, paths=state_paths())


def _edit_config(edit):
    config_file = state_paths().config_file
    document = json.loads(config_file.read_text())
    edit(document)
    config_file.write_text(json.dumps(document))


def _other_agent_on(root):
    def edit(document):
        document["enablements"].append(
            {**document["enablements"][0], "agent_id": OTHER_AGENT, "repo_roots": [str(root)]}
        )

    return edit


def test_hand_added_agent_gets_only_its_own_repository_through_the_native_provider(corpus):
    enable(
        enable_request(repo_roots=(corpus.repo_root,), sources=SOURCES, source_roots=_source_roots(corpus)),
        paths=state_paths(),
    )
    _edit_config(_other_agent_on(corpus.bait_repo_root))
    assert load_policy(state_paths()).load_reason_code == "config_loaded"

    mine, theirs = _decide_for(FIXTURE_AGENT), _decide_for(OTHER_AGENT)
    for output in (mine, theirs):
        assert output.decision.retrieval.reason_code == "retrieved" and output.private_result.items
    mine_refs = {item.session_ref for item in mine.private_result.items}
    their_refs = {item.session_ref for item in theirs.private_result.items}
    assert mine_refs <= _refs(corpus, bait=False) and not mine_refs & _refs(corpus, bait=True)
    assert their_refs <= _refs(corpus, bait=True)
    assert mine.private_result.scope_applied.agent_id == FIXTURE_AGENT


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda d: d["enablements"][0].update(allow_cross_agent=True), id="allow_cross_agent"),
        pytest.param(lambda d: d.update(allow_cross_project=True), id="allow_cross_project"),
        pytest.param("same-repository", id="another agent on the same repository"),
    ],
)
def test_hand_edited_broadening_retrieves_nothing_through_the_native_provider(corpus, edit):
    enable(
        enable_request(repo_roots=(corpus.repo_root,), sources=SOURCES, source_roots=_source_roots(corpus)),
        paths=state_paths(),
    )
    assert _decide_for(FIXTURE_AGENT).private_result.items
    _edit_config(_other_agent_on(corpus.repo_root) if edit == "same-repository" else edit)
    for agent_id in (FIXTURE_AGENT, OTHER_AGENT):
        output = _decide_for(agent_id)
        assert output.decision.admission.reason_code == "config_invalid"
        assert (output.decision.retrieval.performed, output.private_result) == (False, None)


def test_cli_round_trip_is_healthy_after_an_index_refresh(corpus):
    runner = CliRunner()
    roots = _source_roots(corpus)
    enabled = runner.invoke(
        main,
        [
            "enable",
            "--surface",
            "replan-history",
            "--agent-id",
            FIXTURE_AGENT,
            "--project-id",
            FIXTURE_PROJECT,
            "--repository-id",
            FIXTURE_REPOSITORY,
            "--repo-root",
            str(corpus.repo_root),
            *[arg for source in SOURCES for arg in ("--source", source)],
            *[arg for root in roots for arg in ("--source-root", root)],
        ],
    )
    assert enabled.exit_code == 0, enabled.output

    shown = runner.invoke(main, ["status", "--project-id", FIXTURE_PROJECT, "--format", "json"])
    assert (shown.exit_code, json.loads(shown.stdout)["reason_code"]) == (2, "index_absent")

    refreshed = runner.invoke(main, ["index", "refresh", *[arg for root in roots for arg in ("--root", root)]])
    assert refreshed.exit_code == 0, refreshed.output
    shown = runner.invoke(main, ["status", "--project-id", FIXTURE_PROJECT, "--format", "json"])
    report = json.loads(shown.stdout)
    assert (shown.exit_code, report["healthy"], report["reason_code"]) == (0, True, "healthy")
    (scope,) = report["scopes"]
    assert scope["provider"]["provider_version"].endswith("native-index/1")
    assert scope["index"]["freshness"] == "fresh" and scope["index"]["counts"]["sessions"] > 0
    assert scope["index"]["index_revision"] is not None

    index_bytes = {p: p.read_bytes() for p in state_paths().index_dir.iterdir() if p.is_file()}
    assert runner.invoke(main, ["disable", "--project-id", FIXTURE_PROJECT]).exit_code == 0
    assert {p: p.read_bytes() for p in state_paths().index_dir.iterdir() if p.is_file()} == index_bytes
    shown = runner.invoke(main, ["status", "--project-id", FIXTURE_PROJECT, "--format", "json"])
    assert (shown.exit_code, json.loads(shown.stdout)["reason_code"]) == (2, "not_enabled")
    assert _decide_for(FIXTURE_AGENT).decision.admission.reason_code == "not_enabled"
