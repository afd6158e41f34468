"""The extension behind LoopX's chat server: its "Find evidence" route, `POST /api/chat/decision-context`.

LoopX 2.1.1's chat server (`loopx chat`, a long-running process) runs the extension with the
request LoopX's extension provider builds, which names neither goal nor agent; the server's own
command line is not a `decision-context` invocation and it sets no `LOOPX_GOAL_ID` /
`LOOPX_AGENT_ID`. So free text there is refused (`asking_agent_unknown`, fail closed), while a
spooled situation reference, which carries its own scope, is answered (docs/loopx.md says what
LoopX itself would need to change for free text).
"""

import json

import jsonschema
import pytest

from fixtures.situations import situation
from obelisk_session_evidence.contracts.schemas import json_schema
from tests.conformance.loopx_home import AGENT, CONTENT_CANARY, GOAL, QUERY_CANARY, REPO_ID

pytestmark = pytest.mark.conformance


def _body(ready, query: str) -> dict:
    return {
        "action": "recall",
        "goal_id": GOAL,
        "agent_id": AGENT,
        "profile": json.loads(ready.profile.read_text()),
        "query": query,
        "context_scope_ref": "goal",
    }


def test_chat_server_answers_a_spooled_reference_and_refuses_free_text_without_an_asker(ready):
    ready.register_goal()
    spooled = situation(scope={"agent_id": AGENT, "project_id": GOAL, "repository_id": REPO_ID})
    (ready.root / "situation.json").write_text(json.dumps(spooled))
    reference = ready.ours("situation", "spool", "--situation", str(ready.root / "situation.json")).strip()
    with ready.chat_server() as post:
        answer = post(_body(ready, reference))
        free_text = post(_body(ready, f"pytest test_auth login failed {QUERY_CANARY}"))
    assert (answer["status"], answer["reason_code"], answer["result_count"]) == ("completed", None, 2)
    receipt = json.dumps(answer["retrieval_receipt"])
    assert CONTENT_CANARY not in receipt and "pytest" not in receipt
    verdict, history = answer["results"]
    assert verdict["summary"].startswith("verdict repeats_prior_failure; delta route_repeats_prior_failure")
    jsonschema.validate(json.loads(verdict["content"]), json_schema("replan_recall_verdict_v0"))
    assert CONTENT_CANARY in history["content"]  # transient, to the local workspace only
    assert (free_text["status"], free_text["reason_code"]) == ("unavailable", "asking_agent_unknown")
    assert QUERY_CANARY not in json.dumps(free_text)
