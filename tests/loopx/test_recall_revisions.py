"""LoopX's recall names the revision rule (issue 26 item 4): a failure recorded at a commit on
another branch removes the same-probe outcomes LoopX accepts, and the verdict document says by
which history rule, with no revision or path in it."""

import json
from datetime import UTC, datetime, timedelta

import jsonschema

from obelisk_session_evidence.contracts.prior_calls import PriorToolCall, ProviderAnswer
from obelisk_session_evidence.contracts.schemas import json_schema
from obelisk_session_evidence.contracts.snippets import tool_snippet
from obelisk_session_evidence.loopx.recall import recall
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.providers.failure_causes import failure_cause
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.state.private_files import write_private
from tests.git_repos import GitRepo
from tests.stages.helpers import enabled_policy, item, result_for, situation_model

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
COMMAND = "pytest tests/test_auth.py -x"
OUTPUT = "FAILED tests/test_auth.py::test_refresh - assert 1 == 2\n1 failed"


def test_recall_names_the_other_revision_rule_when_the_failure_ran_on_another_branch(tmp_path, encoder):
    repo = GitRepo(tmp_path / "repo")
    base = repo.commit({"tests/test_auth.py": "def test_refresh(): ...\n"}, at=T0)
    repo.switch("side", create=True)
    side = repo.commit({"side.txt": "s\n"}, at=T0 + timedelta(hours=1))
    repo.switch("main")
    current = repo.commit({"README": "r\n"}, at=T0 + timedelta(hours=2))
    paths = state_paths()
    write_private(paths.config_file, enabled_policy(repo_roots=[str(repo.root)]).config.model_dump_json().encode())
    failure = PriorToolCall(
        session_ref="session:" + "a" * 16,
        tool_name="exec_command",
        command=COMMAND,
        exit_code=1,
        is_error=True,
        cwd=str(repo.root),
        repository_cwd="",
        observed_at=T0 + timedelta(minutes=70),
        revision_ref=side,
        output_excerpt=OUTPUT,
        outcome="failed",
        cause=failure_cause(COMMAND, exit_code=1, output=OUTPUT),
    )

    def answer(request):
        items = [item(tool_snippet(COMMAND, "exit 1", "1 failed"))]
        return ProviderAnswer(result=result_for(request, items), prior_calls=[failure])

    outcome = recall(
        situation_model(commands=[COMMAND], revision={"current": current, "merge_base": base}),
        invoking_session=None,
        max_results=3,
        paths=paths,
        provider_factory=lambda enablement, kind: HandlerProvider(answer),
    )
    verdict_item = outcome.items[0]
    document = json.loads(verdict_item.content)
    jsonschema.validate(document, json_schema("replan_recall_verdict_v0"))
    assert document["verdict"] == "repeats_prior_failure_changed_since"
    assert (document["accepted"], document["loopx_accepted"]) == (False, True)
    assert document["divergence_code"] == document["reason_code"] == "route_repeats_failure_at_other_revision"
    assert "delta route_repeats_failure_at_other_revision;" in verdict_item.summary
    public = verdict_item.content + verdict_item.summary
    assert [secret for secret in (side, side[:7], base[:7], "side.txt") if secret in public] == []
