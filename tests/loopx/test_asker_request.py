"""The request's own `goal_id` / `agent_id` (issue 30 §4) are the asker's first source, held to
every rule of issue 26 §1: LoopX must have started the extension, no other source may name
another goal or agent, the goal must be the enablement's project, a spooled reference is read
only for its own enablement, and LoopX's state that cannot be read refuses."""

import json

import pytest

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, situation
from obelisk_session_evidence.contracts.config import EnablementConfig
from obelisk_session_evidence.loopx import decision_context_extension as extension
from obelisk_session_evidence.loopx.asking import Asker, asker
from obelisk_session_evidence.loopx.recall import situation_for
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private
from obelisk_session_evidence.state.spool import spool_document
from tests.loopx.helpers import CANNOT_START, loopx_on_path
from tests.loopx.test_asker_scope import CANARY, HISTORY, OTHER_AGENT, _enablement
from tests.stages.helpers import result_for

CHAT_SERVER = ["/venv/bin/python3", "/venv/bin/loopx", "chat", "--port", "0"]
"""LoopX started the extension, but not from a `decision-context` command line: nobody named."""
RECALL = ["/venv/bin/loopx", "--registry", "/r.json", "decision-context", "recall-context", "--profile", "p.json"]
RECALL_TAIL = ["--context-scope-ref", "goal", "--query", "q", "--query-summary", "s"]


@pytest.fixture
def two_agents(tmp_path):
    """The fixture agent and another, both enabled for the fixture project; the fixture agent's
    situation, with a canary in its route, spooled; history that holds a canary."""
    paths = StatePaths(tmp_path / "state")
    config = EnablementConfig(enablements=[_enablement(tmp_path, FIXTURE_AGENT), _enablement(tmp_path, OTHER_AGENT)])
    write_private(paths.config_file, config.model_dump_json().encode())
    document = situation(commands=["pytest tests/test_auth.py -x"], hypothesis=f"the fixture {CANARY} again")
    return paths, "replan-situation:" + spool_document(paths, "situations", json.dumps(document).encode())


def _invoked(goal: str, agent: str) -> list[str]:
    return [*RECALL, "--goal-id", goal, "--agent-id", agent, *RECALL_TAIL]


@pytest.mark.parametrize(
    ("requested", "parent_argv", "environ", "expected"),
    [
        # LoopX's chat server, once it names the asker in the request: established by the request.
        (Asker("g", "agent-a"), CHAT_SERVER, {}, (Asker("g", "agent-a"), None)),
        # The same request from any other parent is no evidence (anybody can write a request).
        (Asker("g", "agent-a"), ["bash"], {}, (None, "asking_agent_unknown")),
        # The invocation completes what the request leaves unsaid, registry included.
        (Asker(None, "agent-a"), _invoked("g", "agent-a"), {}, (Asker("g", "agent-a", "/r.json"), None)),
        (Asker("g", "agent-a"), _invoked("g", "agent-a"), {}, (Asker("g", "agent-a", "/r.json"), None)),
        # Sources that disagree refuse, whichever is first.
        (Asker("g", "agent-b"), _invoked("g", "agent-a"), {}, (None, "asking_agent_conflict")),
        (Asker("other-goal", None), _invoked("g", "agent-a"), {}, (None, "asking_agent_conflict")),
        (Asker("g", "agent-a"), CHAT_SERVER, {"LOOPX_AGENT_ID": "agent-b"}, (None, "asking_agent_conflict")),
        (Asker("g", "agent-a"), CHAT_SERVER, {"LOOPX_GOAL_ID": "other-goal"}, (None, "asking_agent_conflict")),
        # What no source names is unknown.
        (Asker(None, "agent-a"), CHAT_SERVER, {}, (None, "asking_goal_unknown")),
        (Asker("g", None), CHAT_SERVER, {"LOOPX_AGENT_ID": "agent-a"}, (None, "asking_agent_unknown")),
    ],
)
def test_the_request_is_the_first_source_and_every_other_source_must_agree(requested, parent_argv, environ, expected):
    assert asker(requested=requested, parent_argv=parent_argv, environ=environ) == expected


def _answer(paths: StatePaths, query: str, *, goal_id: str | None, agent_id: str | None, invoked: Asker) -> dict:
    def build(enablement, kind):
        return HandlerProvider(lambda request: result_for(request, [HISTORY]))

    request = {
        "schema_version": extension.REQUEST_SCHEMA,
        "operation": "retrieve",
        "namespace": "replan",
        "scope_ref": "goal",
        "query": query,
        "query_summary": "prior failures",
        "max_results": 4,
        "timeout_seconds": 30,
        "observed_at": "2026-11-29T10:00:00Z",
        "goal_id": goal_id,
        "agent_id": agent_id,
    }
    return extension.response_for(request, paths=paths, provider_factory=build, asking=invoked)


NOBODY = Asker(None, None)
"""LoopX's invocation as under its chat server: LoopX started the extension, naming nobody."""


def test_a_spooled_reference_is_answered_for_the_asker_the_request_names(two_agents, encoder):
    paths, reference = two_agents
    response = _answer(paths, reference, goal_id=FIXTURE_PROJECT, agent_id=FIXTURE_AGENT, invoked=NOBODY)
    assert (response["status"], response["reason_code"]) == ("completed", None)
    assert CANARY in json.dumps(response)  # the positive control of the canary checks below


@pytest.mark.parametrize(
    ("goal_id", "agent_id", "invoked", "reason_code"),
    [
        (FIXTURE_PROJECT, OTHER_AGENT, NOBODY, "cross_agent_denied"),
        ("goal-never-enabled", FIXTURE_AGENT, NOBODY, "cross_project_denied"),
        (FIXTURE_PROJECT, "agent-never-enabled", NOBODY, "not_enabled"),
        (None, FIXTURE_AGENT, NOBODY, "asking_goal_unknown"),
        # The request names the spool's owner, LoopX's command line another agent: refused.
        (FIXTURE_PROJECT, FIXTURE_AGENT, Asker(FIXTURE_PROJECT, OTHER_AGENT), "asking_agent_conflict"),
    ],
)
def test_a_request_naming_an_asker_gets_no_bearer_token(two_agents, encoder, goal_id, agent_id, invoked, reason_code):
    paths, reference = two_agents
    response = _answer(paths, reference, goal_id=goal_id, agent_id=agent_id, invoked=invoked)
    assert (response["status"], response["reason_code"], response["items"]) == ("unavailable", reason_code, [])
    assert CANARY not in json.dumps(response)


def test_free_text_for_the_requests_asker_refuses_when_loopxs_obligation_cannot_be_read(
    two_agents, monkeypatch, tmp_path
):
    paths, _ = two_agents
    loopx_on_path(monkeypatch, tmp_path / "unreadable", CANNOT_START)
    requested = Asker(FIXTURE_PROJECT, FIXTURE_AGENT)
    found = situation_for(paths, scope_ref="goal", query="pytest auth", asking=NOBODY, requested=requested)
    assert found == (None, None, "loopx_state_unreadable")
