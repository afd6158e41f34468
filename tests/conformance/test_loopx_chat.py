"""The extension behind LoopX's chat server: its "Find evidence" route, `POST /api/chat/decision-context`.

LoopX 2.1.1's chat server (`loopx chat`, a long-running process) runs the extension with the
request LoopX's extension provider builds, which names neither goal nor agent; the server's own
command line is not a `decision-context` invocation and it sets no `LOOPX_GOAL_ID` /
`LOOPX_AGENT_ID`. So free text there is refused (`asking_agent_unknown`, fail closed), and so is a
spooled situation reference: it is bound to the enablement it was spooled under and read only for
an asker that resolves to it, never as a bearer token (docs/identity.md; docs/loopx.md says what
LoopX itself would need to change).
"""

import json

import pytest

from fixtures.situations import situation
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


def test_chat_server_names_no_asker_so_free_text_and_spooled_references_are_refused(ready):
    ready.register_goal()
    spooled = situation(scope={"agent_id": AGENT, "project_id": GOAL, "repository_id": REPO_ID})
    (ready.root / "situation.json").write_text(json.dumps(spooled))
    reference = ready.ours("situation", "spool", "--situation", str(ready.root / "situation.json")).strip()
    # The positive control: the same reference through `loopx decision-context`, which names the asker.
    through_cli = ready.recall("goal", reference)
    assert (through_cli["status"], through_cli["reason_code"]) == ("completed", None)
    with ready.chat_server() as post:
        answer = post(_body(ready, reference))
        free_text = post(_body(ready, f"pytest test_auth login failed {QUERY_CANARY}"))
    for refused in (answer, free_text):
        assert (refused["status"], refused["reason_code"], refused["result_count"]) == (
            "unavailable",
            "asking_agent_unknown",
            0,
        )
        assert CONTENT_CANARY not in json.dumps(refused)
    assert QUERY_CANARY not in json.dumps(free_text)
