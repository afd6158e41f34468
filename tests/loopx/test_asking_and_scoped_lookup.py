import json
from importlib.util import find_spec

import pytest

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.loopx.asking import Asker, asker, invocation_asker
from obelisk_session_evidence.loopx.recall import situation_for
from obelisk_session_evidence.loopx.scoped_lookup import asking_enablement
from obelisk_session_evidence.state.paths import StatePaths
from tests.loopx.helpers import CURRENT_SESSION, backend
from tests.stages.helpers import enabled_policy

LOOPX_ARGV = [
    "/venv/bin/python3",
    "/venv/bin/loopx",
    "decision-context",
    "recall-context",
    "--goal-id",
    "goal-a",
    "--agent-id=agent-a",
    "--profile",
    "p.json",
    "--context-scope-ref",
    "goal",
    "--query",
    "q",
    "--query-summary",
    "s",
]


def test_invocation_asker_reads_loopx_decision_context_arguments():
    assert invocation_asker(LOOPX_ARGV) == Asker("goal-a", "agent-a")
    assert invocation_asker(["pytest", "--agent-id", "x"]) is None


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, (Asker("goal-a", "agent-a"), None)),
        ({"LOOPX_AGENT_ID": "agent-a"}, (Asker("goal-a", "agent-a"), None)),
        ({"LOOPX_AGENT_ID": "agent-b"}, (None, "asking_agent_conflict")),
    ],
)
def test_asker_prefers_the_invocation_and_refuses_disagreement(environ, expected):
    assert asker(parent_argv=LOOPX_ARGV, environ=environ) == expected


def test_loopx_host_turn_environment_alone_establishes_no_asker():
    environ = {"LOOPX_GOAL_ID": "goal-b", "LOOPX_AGENT_ID": "agent-b"}
    assert asker(parent_argv=["bash"], environ=environ) == (None, "asking_agent_unknown")


def _enablement(agent: str, project: str) -> Enablement:
    base = enabled_policy().config.enablements[0]
    return base.model_copy(update={"agent_id": agent, "project_id": project})


def test_asking_enablement_never_guesses():
    one = _enablement("agent-a", "project-1")
    two = _enablement("agent-a", "project-2")
    assert asking_enablement([one], Asker("project-1", "agent-a")) == (one, None)
    assert asking_enablement([one], Asker(None, "agent-a")) == (None, "asking_goal_unknown")
    assert asking_enablement([one], Asker("project-1", None)) == (None, "asking_agent_unknown")
    assert asking_enablement([one], Asker("project-1", "agent-b")) == (None, "not_enabled")
    assert asking_enablement([one, two], Asker("goal-x", "agent-a")) == (None, "cross_project_denied")
    assert asking_enablement([one, two], Asker("project-2", "agent-a")) == (two, None)
    other_repository = one.model_copy(update={"repository_id": "repository-2"})
    assert asking_enablement([one, other_repository], Asker("project-1", "agent-a")) == (None, "scope_ambiguous")


def test_situation_for_free_text_builds_an_operator_lookup(tmp_path):
    paths = StatePaths(tmp_path)
    backend(paths=paths, history=lambda request: [])
    situation, session, error = situation_for(
        paths,
        scope_ref=CURRENT_SESSION,
        query="pytest auth failure",
        asking=Asker(FIXTURE_PROJECT, FIXTURE_AGENT),
    )
    assert error is None and session == CURRENT_SESSION
    assert situation.invoking_session == CURRENT_SESSION
    assert situation.operator_request.requested is True
    assert situation.proposed.route.hypothesis == "pytest auth failure"
    assert situation.scope.agent_id == FIXTURE_AGENT


def _registry(tmp_path, agent_id: str) -> str:
    """A LoopX registry binding the current host thread to `agent_id` (read by LoopX's code)."""
    path = tmp_path / "registry.json"
    binding = {"thread_id": CURRENT_SESSION.split(":", 2)[2], "host_surface": "codex-app", "agent_id": agent_id}
    path.write_text(
        json.dumps({"goals": [{"id": FIXTURE_PROJECT, "coordination": {"thread_agent_bindings": [binding]}}]})
    )
    return str(path)


@pytest.mark.skipif(find_spec("loopx") is None, reason="LoopX reads its own thread-agent bindings")
def test_situation_for_takes_the_agent_from_loopxs_thread_binding(tmp_path):
    paths = StatePaths(tmp_path / "state")
    backend(paths=paths, history=lambda request: [])
    other = _registry(tmp_path, "agent-other")
    asking = Asker(FIXTURE_PROJECT, FIXTURE_AGENT, other)
    assert situation_for(paths, scope_ref=CURRENT_SESSION, query="x y", asking=asking) == (
        None,
        None,
        "cross_agent_denied",
    )
    # The thread alone identifies the agent when LoopX names none.
    own = _registry(tmp_path, FIXTURE_AGENT)
    situation, _, error = situation_for(
        paths, scope_ref=CURRENT_SESSION, query="x y", asking=Asker(FIXTURE_PROJECT, None, own)
    )
    assert error is None and situation.scope.agent_id == FIXTURE_AGENT
