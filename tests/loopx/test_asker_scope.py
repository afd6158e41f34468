"""The asker is part of every answer's scope (issue 26 item 1): a spooled reference is no bearer
token, LoopX's options are read as LoopX's parser reads them, the goal must be the enablement's
project, and a check that cannot run refuses."""

import json
import os
import stat
import subprocess
import sys
from datetime import UTC, datetime
from importlib.util import find_spec
from pathlib import Path

import pytest

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY, situation
from obelisk_session_evidence.contracts.config import Enablement, EnablementConfig
from obelisk_session_evidence.contracts.evidence import EvidenceItem
from obelisk_session_evidence.contracts.snippets import tool_snippet
from obelisk_session_evidence.loopx import decision_context_extension as extension
from obelisk_session_evidence.loopx.asking import Asker, asker
from obelisk_session_evidence.loopx.recall import situation_for
from obelisk_session_evidence.loopx.scoped_lookup import asking_enablement
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private
from obelisk_session_evidence.state.spool import spool_document, spooled_path
from tests.loopx.helpers import CANNOT_START, CURRENT_SESSION, loopx_on_path
from tests.stages.helpers import result_for

CANARY = "asker-canary-40417"
OTHER_AGENT = "agent-other"
OWNER = Asker(FIXTURE_PROJECT, FIXTURE_AGENT)
HISTORY = EvidenceItem(
    session_ref="session:" + "cd" * 32,
    message_ref=f"message:{7:064x}",
    evidence_type="prior_failure",
    observed_at=datetime(2026, 11, 20, tzinfo=UTC),
    snippet=tool_snippet("pytest tests/test_auth.py -x", "exit 1", f"FAILED {CANARY}"),
)


def _enablement(tmp_path: Path, agent: str, project: str = FIXTURE_PROJECT) -> Enablement:
    folder = tmp_path / "scopes" / f"{agent}-{project}"
    (folder / "repo").mkdir(parents=True)
    (folder / "claude").mkdir()
    return Enablement(
        surface="replan-history",
        agent_id=agent,
        project_id=project,
        repository_id=FIXTURE_REPOSITORY,
        repo_roots=[str(folder / "repo")],
        sources=["claude"],
        source_roots={"claude": str(folder / "claude")},
        enabled_at=datetime(2026, 11, 29, tzinfo=UTC),
    )


@pytest.fixture
def two_agents(tmp_path):
    """The fixture agent and another agent, both enabled for the fixture project; the fixture
    agent's situation, with a canary in its route, spooled; history that holds a canary."""
    paths = StatePaths(tmp_path / "state")
    config = EnablementConfig(enablements=[_enablement(tmp_path, FIXTURE_AGENT), _enablement(tmp_path, OTHER_AGENT)])
    write_private(paths.config_file, config.model_dump_json().encode())
    document = situation(commands=["pytest tests/test_auth.py -x"], hypothesis=f"the fixture {CANARY} again")
    reference = spool_document(paths, "situations", json.dumps(document).encode())
    return paths, f"replan-situation:{reference}"


def _answer(paths: StatePaths, query: str, asking: Asker, scope_ref: str = "goal") -> dict:
    def build(enablement, kind):
        return HandlerProvider(lambda request: result_for(request, [HISTORY]))

    request = {
        "schema_version": extension.REQUEST_SCHEMA,
        "operation": "retrieve",
        "namespace": "replan",
        "scope_ref": scope_ref,
        "query": query,
        "query_summary": "prior failures",
        "max_results": 4,
        "timeout_seconds": 30,
        "observed_at": "2026-11-29T10:00:00Z",
    }
    return extension.response_for(request, paths=paths, provider_factory=build, asking=asking)


def test_the_spooled_situations_own_asker_gets_its_history(two_agents, encoder):
    paths, reference = two_agents
    response = _answer(paths, reference, OWNER)
    assert (response["status"], response["reason_code"]) == ("completed", None)
    assert CANARY in json.dumps(response)  # the positive control of the canary checks below


@pytest.mark.parametrize(
    ("asking", "reason_code"),
    [
        (Asker(FIXTURE_PROJECT, "agent-never-enabled"), "not_enabled"),
        (Asker(FIXTURE_PROJECT, OTHER_AGENT), "cross_agent_denied"),
        (Asker("goal-never-enabled", FIXTURE_AGENT), "cross_project_denied"),
        (Asker(None, None), "asking_agent_unknown"),
    ],
)
def test_a_spooled_reference_is_no_bearer_token(two_agents, encoder, asking, reason_code):
    paths, reference = two_agents
    response = _answer(paths, reference, asking)
    assert response == {
        "schema_version": extension.RESPONSE_SCHEMA,
        "ok": True,
        "status": "unavailable",
        "reason_code": reason_code,
        "items": [],
    }
    assert CANARY not in json.dumps(response)


@pytest.mark.skipif(find_spec("loopx") is None, reason="LoopX reads its own thread-agent bindings")
def test_a_spooled_reference_through_a_thread_bound_to_another_agent_is_refused(two_agents, tmp_path, encoder):
    paths, reference = two_agents
    registry = tmp_path / "registry.json"
    binding = {"thread_id": CURRENT_SESSION.split(":", 2)[2], "host_surface": "codex-app", "agent_id": OTHER_AGENT}
    registry.write_text(
        json.dumps({"goals": [{"id": FIXTURE_PROJECT, "coordination": {"thread_agent_bindings": [binding]}}]})
    )
    asking = Asker(FIXTURE_PROJECT, FIXTURE_AGENT, str(registry))
    response = _answer(paths, reference, asking, scope_ref=CURRENT_SESSION)
    assert (response["status"], response["reason_code"]) == ("unavailable", "cross_agent_denied")
    assert CANARY not in json.dumps(response)


def test_a_thread_binding_that_cannot_be_read_refuses_instead_of_skipping_the_check(two_agents, tmp_path):
    paths, _ = two_agents
    registry = tmp_path / "registry.json"
    registry.write_text("{not json")  # LoopX's registry, as LoopX names it to the asker
    asking = Asker(FIXTURE_PROJECT, FIXTURE_AGENT, str(registry))
    assert situation_for(paths, scope_ref=CURRENT_SESSION, query="pytest auth", asking=asking) == (
        None,
        None,
        "host_session_binding_unknown",
    )


def test_a_spooled_file_replaced_by_a_fifo_is_refused_without_hanging(two_agents, encoder):
    paths, reference = two_agents
    path = spooled_path(paths, "situations", reference.removeprefix("replan-situation:"))
    path.unlink()
    os.mkfifo(path)
    assert stat.S_ISFIFO(path.lstat().st_mode)
    # The read opens without blocking: a blocking open would hang here for good.
    assert _answer(paths, reference, OWNER)["reason_code"] == "spool_not_regular"


RECALL = ["decision-context", "recall-context", "--profile", "p.json", "--context-scope-ref", "goal"]
TAIL = ["--query", "q", "--query-summary", "s"]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--goal-id", "g", "--agent-id", "agent-a", "--agent-id", "agent-b"], Asker("g", "agent-b")),
        (["--goal-id", "g", "--agent-id", "agent-a", "--agent-id=agent-b"], Asker("g", "agent-b")),
        (["--goal-id=g1", "--goal-id", "g2", "--agent-id", "agent-a"], Asker("g2", "agent-a")),
        # LoopX allows no abbreviations: `--agent` is no option, so LoopX would not have run.
        (["--goal-id", "g", "--agent", "agent-b", "--agent-id", "agent-a"], None),
    ],
)
def test_loopxs_options_are_read_as_loopxs_parser_reads_them(options, expected):
    argv = ["/venv/bin/python3", "/venv/bin/loopx", *RECALL, *options, *TAIL]
    found, reason = asker(parent_argv=argv, environ={})
    assert (found, reason) == ((expected, None) if expected else (None, "asking_agent_unknown"))


def test_the_goal_must_be_the_enablements_project_even_for_a_single_enablement(tmp_path):
    only = _enablement(tmp_path, FIXTURE_AGENT)
    assert asking_enablement([only], Asker("goal-never-enabled", FIXTURE_AGENT)) == (None, "cross_project_denied")
    assert asking_enablement([only], OWNER) == (only, None)


def _run_as_loopxs_child(tmp_path: Path, paths: StatePaths, agent: str, environ: dict[str, str] | None = None):
    """`obelisk-session-evidence run` started by a process whose command line is LoopX's."""
    document = tmp_path / "situation.json"
    document.write_text(json.dumps(situation()))
    run = [sys.executable, "-m", "obelisk_session_evidence", "run", "--situation", str(document), "--format", "json"]
    loopx = tmp_path / "bin" / "loopx"
    loopx.parent.mkdir(exist_ok=True)
    loopx.write_text(f"import subprocess, sys\nsys.exit(subprocess.call({run!r}))\n")
    argv = [sys.executable, str(loopx), *RECALL, "--goal-id", FIXTURE_PROJECT, "--agent-id", agent, *TAIL]
    env = {**os.environ, "OBELISK_SESSION_EVIDENCE_HOME": str(paths.root), **(environ or {})}
    env.pop("LOOPX_AGENT_ID", None)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_run_started_by_loopx_decides_only_for_its_asker(two_agents, tmp_path):
    paths, _ = two_agents
    other = _run_as_loopxs_child(tmp_path, paths, OTHER_AGENT)
    refusal = json.loads(other.stdout)
    assert (other.returncode, refusal["reason_code"], refusal["detail"]) == (2, "scope_refused", "cross_agent_denied")
    own = _run_as_loopxs_child(tmp_path, paths, FIXTURE_AGENT)
    assert own.returncode == 0, own.stderr
    assert json.loads(own.stdout)["admission"]["admitted"] is True


def test_run_in_another_agents_host_turn_is_refused(two_agents, tmp_path):
    paths, _ = two_agents
    document = tmp_path / "situation.json"
    document.write_text(json.dumps(situation()))
    env = {**os.environ, "OBELISK_SESSION_EVIDENCE_HOME": str(paths.root), "LOOPX_AGENT_ID": OTHER_AGENT}
    done = subprocess.run(
        [sys.executable, "-m", "obelisk_session_evidence", "run", "--situation", str(document)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2 and "cross_agent_denied" in done.stderr


def test_free_text_is_refused_when_loopxs_obligation_cannot_be_read(two_agents, monkeypatch, tmp_path):
    """A LoopX state that cannot be read (no LoopX here, a Node LoopX cannot run) is no absent
    obligation: the lookup is refused, never answered without the obligation LoopX may hold."""
    paths, _ = two_agents
    loopx_on_path(monkeypatch, tmp_path / "unreadable", CANNOT_START)
    assert situation_for(paths, scope_ref="goal", query="pytest auth", asking=OWNER) == (
        None,
        None,
        "loopx_state_unreadable",
    )


def test_free_text_without_an_open_obligation_is_a_lookup_of_its_own(two_agents):
    paths, _ = two_agents  # LoopX holds no run history here
    situation_found, _, error = situation_for(paths, scope_ref="goal", query="pytest auth", asking=OWNER)
    assert error is None and situation_found.operator_request.requested is True
