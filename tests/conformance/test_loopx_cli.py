"""The extension as LoopX 2.1.1 drives it: its own CLI, in subprocesses, with isolated homes.

Every step is a real `loopx` process (install, enable, doctor, `decision-context recall-context`,
`prepare-evidence`, disable) over a real native index of written Claude Code sessions; nothing
is stubbed. Assertions are on what LoopX prints: status, result counts, the verdict item, and
its public retrieval receipt, which must be free of session content and query text (canaries).
"""

import json
import re
from typing import Any

import jsonschema
import pytest

from fixtures.situations import observation, situation
from obelisk_session_evidence.contracts.schemas import json_schema
from tests.conformance.loopx_home import (
    AGENT,
    CONTENT_CANARY,
    EXTENSION_ID,
    GOAL,
    MANIFEST,
    QUERY_CANARY,
    REPO_ID,
    ROUTE,
    public_verdict,
)

pytestmark = pytest.mark.conformance


def test_doctor_is_not_ready_without_an_enablement_or_with_a_broken_configuration(home):
    # LoopX refuses to install an extension whose doctor fails, and says so.
    refused = json.loads(
        home.run(
            "loopx",
            "extension",
            "install",
            "--manifest",
            str(MANIFEST),
            "--execute",
            "--format",
            "json",
            expect=2,
        )
    )
    assert refused["error"].endswith("doctor is not ready: provider_unavailable")
    home.history()
    assert home.install()["doctor"]["status"] == "ready"
    (home.state / "config.json").write_text("{broken")
    doctor = home.loopx("extension", "doctor", EXTENSION_ID, "--execute")
    assert (doctor["status"], doctor["failure_kind"]) == ("provider_unavailable", "probe_nonzero_exit")


def test_free_text_with_goal_scope_answers_with_thepublic_verdict(ready):
    payload = ready.recall("goal", f"pytest test_auth login failed {QUERY_CANARY}")
    assert (payload["status"], payload["reason_code"]) == ("completed", None)
    verdict = public_verdict(payload)
    assert verdict.startswith("verdict ") and "index fresh" in verdict
    returned = int(re.search(r"; returned (\d+);", verdict).group(1))
    assert returned >= 1 and payload["result_count"] == 1 + returned  # the verdict, then history
    assert any(CONTENT_CANARY in result["content"] for result in payload["results"][1:])


def test_free_text_that_is_a_command_line_is_judged_as_that_command(ready):
    payload = ready.recall("goal", ROUTE)
    verdict = public_verdict(payload)
    assert verdict.startswith("verdict repeats_prior_failure;"), verdict
    # The item after the verdict is the earlier failure of that very command.
    assert CONTENT_CANARY in payload["results"][1]["content"] and "FAILED" in payload["results"][1]["content"]


def test_free_text_with_host_session_scope_counts_that_threads_history(ready):
    payload = ready.recall("host-session:claude:s-current", "make lint")
    assert (payload["status"], payload["reason_code"]) == ("completed", None)
    verdict = public_verdict(payload)
    # The named thread's earlier turn is history: it is returned, and nothing was excluded.
    assert "invoking turn excluded 0" in verdict and "; returned 1;" in verdict
    assert "lint clean" in payload["results"][1]["content"]


def test_a_spooled_situation_reference_carries_the_full_route(ready):
    spooled = situation(scope={"agent_id": AGENT, "project_id": GOAL, "repository_id": REPO_ID})
    (ready.root / "situation.json").write_text(json.dumps(spooled))
    reference = ready.ours("situation", "spool", "--situation", str(ready.root / "situation.json")).strip()
    assert reference.startswith("replan-situation:sha256:")
    payload = ready.recall("goal", reference)
    assert (payload["status"], payload["result_count"]) == ("completed", 2)
    assert public_verdict(payload).startswith("verdict repeats_prior_failure; delta route_repeats_prior_failure")
    # The verdict's content, as LoopX hands it to its in-process caller, is the typed document:
    # LoopX's exact-id rules accept the new probe family; history removes it, and says by which rule.
    document = json.loads(payload["results"][0]["content"])
    jsonschema.validate(document, json_schema("replan_recall_verdict_v0"))
    assert (document["accepted"], document["loopx_accepted"], document["divergence_code"]) == (
        False,
        True,
        "route_repeats_prior_failure",
    )
    assert CONTENT_CANARY not in payload["results"][0]["content"]
    # ... and LoopX's own semantic delta for the same step agrees with `loopx_accepted`.
    assert ready.loopx_delta(spooled["obligation"], spooled["proposed"]["observation"])["accepted"] is True


def test_prepare_evidence_looks_up_the_open_obligation_loopx_holds(ready):
    def prepare() -> dict[str, Any]:
        payload = ready.loopx(
            "decision-context",
            "prepare-evidence",
            "--goal-id",
            GOAL,
            "--agent-id",
            AGENT,
            "--profile",
            str(ready.profile),
            "--decision-id",
            "decision-1",
        )
        public = json.dumps(payload["assembly"])
        # Canaries: the history's content and the failed command the lookup resumed stay private.
        assert CONTENT_CANARY not in public and "pytest" not in public and "test_auth" not in public
        return payload["assembly"]["context_retrieval_receipt"]

    # Without an open obligation: the scope's most recent unresolved failure (ROUTE; `make lint`
    # ended well) and its history, under resume_or_handoff_gap.
    receipt = prepare()
    assert (receipt["status"], receipt["reason_code"], receipt["read_performed"]) == ("completed", None, True)
    verdict, *history = receipt["results"]
    assert verdict["summary"].startswith("verdict repeats_prior_failure;"), verdict["summary"]
    assert history and all(item["summary"].startswith("prior_failure from an earlier session") for item in history)
    # With LoopX's open obligation: its obligation and progress window, the same history.
    baseline = observation("unchanged")
    ready.loopx_runs(baseline, baseline, baseline)
    receipt = prepare()
    assert (receipt["status"], receipt["reason_code"]) == ("completed", None)
    verdict, *history = receipt["results"]
    assert verdict["summary"].startswith(
        "verdict repeats_prior_failure; delta unchanged_never_advances; accepted false"
    )
    assert history and receipt["result_count"] == 1 + len(history)


def test_a_disabled_extension_is_never_called(ready):
    ready.loopx("extension", "disable", EXTENSION_ID, "--execute")
    payload = ready.recall("goal", "pytest")
    assert payload["status"] == "unavailable"
    assert payload["retrieval_receipt"]["search_performed"] is False


def test_a_broken_configuration_is_config_invalid_in_loopx(ready):
    (ready.state / "config.json").write_text("{broken")
    payload = ready.recall("goal", "pytest")
    assert (payload["status"], payload["reason_code"]) == ("unavailable", "config_invalid")


def test_situation_from_loopx_state_reaches_thepublic_verdict(ready):
    baseline = observation("unchanged")
    ready.loopx_runs(baseline, baseline, baseline)
    reference = ready.ours(
        "situation",
        "from-loopx",
        "--goal-id",
        GOAL,
        "--agent-id",
        AGENT,
        "--spool",
        "--command",
        ROUTE,
        "--file",
        "tests/test_auth.py",
    ).strip()
    document = json.loads(
        ready.ours(
            "situation",
            "from-loopx",
            "--goal-id",
            GOAL,
            "--agent-id",
            AGENT,
            "--format",
            "json",
        )
    )
    # LoopX's own obligation, derived by LoopX from its run history.
    assert document["obligation"]["obligation_id"].startswith("replan-")
    assert [t["kind"] for t in document["obligation"]["triggers"]] == ["typed_progress_repeat"]
    assert len(document["recent_observations"]) == 3
    assert document["scope"] == {"agent_id": AGENT, "project_id": GOAL, "repository_id": REPO_ID}
    summary = ready.ours("situation", "from-loopx", "--goal-id", GOAL, "--agent-id", AGENT, "--command", ROUTE)
    assert "typed_progress_repeat" in summary and ROUTE not in summary and "pytest" not in summary
    payload = ready.recall("goal", reference)
    assert payload["status"] == "completed"
    # Proposing the unchanged observation again over a route that failed before.
    assert public_verdict(payload).startswith("verdict repeats_prior_failure; delta unchanged_never_advances")
    wrong = ready.run(
        "obelisk-session-evidence",
        "situation",
        "from-loopx",
        "--goal-id",
        GOAL,
        "--agent-id",
        AGENT,
        "--obligation-id",
        "replan-0000000000000000",
        expect=2,
    )
    assert wrong == ""


def test_a_host_thread_bound_to_another_agent_is_refused_in_loopx(ready):
    binding = {"thread_id": "s-current", "host_surface": "claude-code", "agent_id": "agent-other"}
    ready.register_goal(coordination={"thread_agent_bindings": [binding]})
    payload = ready.recall("host-session:claude:s-current", "make lint")
    assert (payload["status"], payload["reason_code"]) == ("unavailable", "cross_agent_denied")
