import json
from datetime import timedelta

import jsonschema
import pytest

from fixtures.situations import situation
from obelisk_session_evidence.contracts.digests import canonical_digest
from obelisk_session_evidence.contracts.errors import ProviderUnavailable
from obelisk_session_evidence.contracts.evidence import EvidenceItem
from obelisk_session_evidence.contracts.limits import HARD_CAPS
from obelisk_session_evidence.contracts.recall_verdict import RecallVerdict
from obelisk_session_evidence.contracts.schemas import json_schema
from obelisk_session_evidence.contracts.snippets import tool_snippet
from obelisk_session_evidence.loopx.recall import (
    MAX_RECALL_ITEMS,
    MAX_SUMMARY_CHARS,
    bounded_max_results,
    invoking_session_of,
    recall,
    spooled_situation,
    verdict_summary,
)
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.spool import spool_document
from tests.loopx.helpers import (
    CURRENT_SESSION,
    CURRENT_SESSION_FAILURE,
    EARLIER_SESSION_FAILURE,
    FAILED_RUN,
    backend,
    current_turn_failure,
)
from tests.stages.helpers import enabled_policy, situation_model


def test_recall_the_invoking_turn_never_counts_but_the_sessions_history_does(encoder):
    """Issue 15 §2: the named thread's earlier failure counts; the invoking turn's does not."""
    earlier_turn = recall(
        situation_model(),
        invoking_session=CURRENT_SESSION,
        max_results=8,
        **backend(lambda request: [CURRENT_SESSION_FAILURE]),
    )
    assert earlier_turn.decision.comparison.verdict == "repeats_prior_failure"
    assert earlier_turn.decision.semantic_delta.outcomes == []
    assert earlier_turn.exclusion.excluded == 0
    this_turn = recall(
        situation_model(),
        invoking_session=CURRENT_SESSION,
        max_results=8,
        **backend(lambda request: [current_turn_failure()]),
    )
    assert this_turn.decision.comparison.verdict == "novel"
    assert this_turn.decision.semantic_delta.outcomes == ["new_probe_family"]
    assert this_turn.decision.receipt.result_count == 0
    assert (this_turn.exclusion.from_invocation, this_turn.read_performed) == (1, False)
    (verdict,) = this_turn.items
    assert verdict.summary == (
        "verdict novel; delta semantic_advance; accepted true; loopx accepted true; matched 0 of 0 items; "
        "returned 0; index fresh; invoking turn excluded 1"
    )


def test_recall_verdict_item_is_a_typed_content_free_document_naming_where_loopx_differs(encoder):
    """Issue 30 §1: the verdict's content is `replan_recall_verdict_v0`; LoopX's exact-id rules
    accept the new probe family, history removes it, and the document says by which rule."""
    outcome = recall(
        situation_model(),
        invoking_session=None,
        max_results=3,
        **backend(lambda request: [EARLIER_SESSION_FAILURE]),
    )
    verdict_item, history_item = outcome.items
    document = json.loads(verdict_item.content)
    jsonschema.validate(document, json_schema("replan_recall_verdict_v0"))
    receipt = outcome.decision.receipt
    assert document == {
        "schema_version": "replan_recall_verdict_v0",
        "verdict": "repeats_prior_failure",
        "trigger": "replan_repetition",
        "obligation_id": outcome.decision.obligation_id,
        "observation_fingerprint": outcome.decision.semantic_delta.observation_fingerprint,
        "accepted": False,
        "outcomes": [],
        "satisfying_outcomes": [],
        "reason_code": "route_repeats_prior_failure",
        "loopx_accepted": True,
        "divergence_code": "route_repeats_prior_failure",
        "receipt_digest": canonical_digest(receipt.model_dump(mode="json")),
        "request_id": receipt.request_id,
        "index_freshness": "fresh",
        "retrieved_items": 1,
        "matched_items": 1,
        "history_items": 1,
        "invoking_turn_excluded": 0,
        "invoking_turn_undated": 0,
        "rests_on": [history_item.resource_ref],  # the failure it repeats, by the ref its item has
        "successors": [],
    }
    assert verdict_item.resource_ref == "replan-decision:" + document["receipt_digest"]
    assert "delta route_repeats_prior_failure; accepted false; loopx accepted true;" in verdict_item.summary
    assert FAILED_RUN not in verdict_item.content and "pytest" not in verdict_item.content
    assert history_item.content == FAILED_RUN


def test_recall_verdict_names_what_worked_after_the_failure_by_the_ref_its_item_has(encoder):
    """Issue 25 item 4: the failure was followed by the same tests passing from the virtualenv; the
    verdict item names that grounded successor by the `resource_ref` of the history item after it."""
    passed = EvidenceItem(
        session_ref=EARLIER_SESSION_FAILURE.session_ref,
        message_ref="message:" + "4" * 64,
        evidence_type="tool_outcome",
        observed_at=EARLIER_SESSION_FAILURE.observed_at + timedelta(minutes=4),
        snippet=tool_snippet(".venv/bin/pytest tests/test_auth.py -x", "exit 0", "12 passed in 0.84s"),
    )
    outcome = recall(
        situation_model(),
        invoking_session=None,
        max_results=3,
        **backend(lambda request: [EARLIER_SESSION_FAILURE, passed]),
    )
    _, failure_item, successor_item = outcome.items
    document = json.loads(outcome.items[0].content)
    jsonschema.validate(document, json_schema("replan_recall_verdict_v0"))
    # A failure verdict; whether the later pass counts as a change to its cause is the cause rules' call.
    assert document["verdict"].startswith("repeats_prior_failure")
    assert (document["rests_on"], document["successors"]) == (
        [failure_item.resource_ref],
        [successor_item.resource_ref],
    )
    assert ".venv" not in outcome.items[0].content and "passed" not in outcome.items[0].summary


def test_recall_verdict_names_the_changed_since_rule_when_it_alone_makes_loopx_differ(encoder):
    """A failure whose cause a later edit touched removes the same-probe outcomes: LoopX accepts
    the new probe family, history does not, and the document names that rule (it is a history
    rule like the others, not an acceptance that differs without one)."""
    edited = EvidenceItem(
        session_ref=EARLIER_SESSION_FAILURE.session_ref,
        message_ref="message:" + "3" * 64,
        evidence_type="file_history",
        observed_at=EARLIER_SESSION_FAILURE.observed_at + timedelta(minutes=5),
        snippet=tool_snippet("Edit tests/test_auth.py", "ok", ""),
    )
    outcome = recall(
        situation_model(),
        invoking_session=None,
        max_results=3,
        **backend(lambda request: [EARLIER_SESSION_FAILURE, edited]),
    )
    document = json.loads(outcome.items[0].content)
    jsonschema.validate(document, json_schema("replan_recall_verdict_v0"))
    assert document["verdict"] == "repeats_prior_failure_changed_since"
    assert (document["accepted"], document["loopx_accepted"]) == (False, True)
    assert document["divergence_code"] == document["reason_code"] == "route_repeats_failure_after_change"


def test_recall_verdict_summary_fits_loopx_public_summary_bound_at_its_longest():
    max_items = HARD_CAPS["max_items"]
    longest = RecallVerdict(
        verdict="repeats_prior_failure",
        trigger="operator_requested_history",
        obligation_id="replan-0123456789abcdef",
        observation_fingerprint="0123456789abcdef",
        accepted=False,
        outcomes=[],
        satisfying_outcomes=[],
        reason_code="no_followup_vision_path_inconsistent",
        loopx_accepted=False,
        divergence_code=None,
        receipt_digest="sha256:" + "0" * 64,
        request_id="req-0",
        index_freshness="incomplete",
        retrieved_items=max_items,
        matched_items=max_items,
        history_items=MAX_RECALL_ITEMS,
        invoking_turn_excluded=99_999,
        invoking_turn_undated=0,
    )
    assert len(verdict_summary(longest)) <= MAX_SUMMARY_CHARS


def test_recall_verdict_has_no_divergence_when_loopx_and_history_agree(encoder):
    outcome = recall(
        situation_model(),
        invoking_session=None,
        max_results=3,
        **backend(lambda request: []),
    )
    (verdict_item,) = outcome.items
    document = json.loads(verdict_item.content)
    assert (document["accepted"], document["loopx_accepted"], document["divergence_code"]) == (True, True, None)
    assert document["outcomes"] == ["new_probe_family"] and document["history_items"] == 0


def test_recall_situation_may_name_the_invoking_session_itself(encoder):
    named = situation_model(invoking_session=CURRENT_SESSION)
    outcome = recall(
        named,
        invoking_session=None,
        max_results=8,
        **backend(lambda request: [current_turn_failure(), EARLIER_SESSION_FAILURE]),
    )
    assert [item.resource_ref for item in outcome.items[1:]] == [EARLIER_SESSION_FAILURE.message_ref]
    assert outcome.decision.comparison.verdict == "repeats_prior_failure"


def test_recall_refuses_a_scope_naming_another_invoking_session(encoder):
    named = situation_model(invoking_session=CURRENT_SESSION)
    outcome = recall(
        named,
        invoking_session="host-session:codex:other-thread",
        max_results=8,
        **backend(lambda request: [EARLIER_SESSION_FAILURE]),
    )
    assert (outcome.status, outcome.reason_code, outcome.search_performed) == (
        "unavailable",
        "invoking_session_mismatch",
        False,
    )


def test_recall_completed_items_are_bounded_and_summaries_content_free(encoder):
    outcome = recall(
        situation_model(),
        invoking_session=None,
        max_results=2,
        **backend(lambda request: [EARLIER_SESSION_FAILURE, CURRENT_SESSION_FAILURE]),
    )
    assert (outcome.status, outcome.reason_code) == ("completed", None)
    assert outcome.search_performed and outcome.read_performed
    assert len(outcome.items) == 2  # the verdict, then one historical item
    verdict, item = outcome.items
    assert verdict.summary.startswith("verdict repeats_prior_failure;")
    # Both runs are the same command; the verdict rests on its latest comparable run alone
    # (cause-aware verdicts, issue 25), so one of the two retrieved items is the match.
    assert "matched 1 of 2 items; returned 1" in verdict.summary
    assert FAILED_RUN not in verdict.content and "pytest" not in verdict.content
    assert item.content == FAILED_RUN
    assert item.summary == "prior_failure from an earlier session of this agent; observed 2026-11-20"
    assert item.resource_ref == EARLIER_SESSION_FAILURE.message_ref


@pytest.mark.parametrize(
    ("history", "freshness", "status", "reason_code", "searched", "read"),
    [
        (lambda request: [], "fresh", "completed", None, True, False),
        (lambda request: [], "stale", "unavailable", "index_stale", True, False),
        (lambda request: [], "incomplete", "unavailable", "index_incomplete", True, False),
        (lambda request: [EARLIER_SESSION_FAILURE], "stale", "completed", None, True, True),
        (
            lambda request: (_ for _ in ()).throw(ProviderUnavailable("down")),
            "fresh",
            "unavailable",
            "provider_unavailable",
            True,
            False,
        ),
    ],
)
def test_recall_status_and_honesty_flags(encoder, history, freshness, status, reason_code, searched, read):
    outcome = recall(
        situation_model(),
        invoking_session=None,
        max_results=8,
        **backend(history, freshness=freshness),
    )
    assert (outcome.status, outcome.reason_code) == (status, reason_code)
    assert (outcome.search_performed, outcome.read_performed) == (searched, read)
    if outcome.items[1:] and freshness != "fresh":
        assert outcome.items[1].summary.endswith(f"index {freshness}")
        assert f"index {freshness}" in outcome.items[0].summary


def test_recall_not_admitted_searches_nothing(encoder):
    outcome = recall(
        situation_model(),
        invoking_session=None,
        max_results=8,
        **backend(lambda request: [EARLIER_SESSION_FAILURE], enabled=False),
    )
    assert (outcome.status, outcome.reason_code, outcome.search_performed) == (
        "unavailable",
        "not_enabled",
        False,
    )


def test_recall_fails_open_when_the_state_cannot_be_used(tmp_path):
    not_a_folder = tmp_path / "state"
    not_a_folder.write_bytes(b"")  # the salt cannot be created under a regular file
    outcome = recall(situation_model(), invoking_session=None, max_results=8, paths=StatePaths(not_a_folder))
    assert (outcome.status, outcome.reason_code) == ("unavailable", "pipeline_failed")


@pytest.mark.parametrize(
    ("scope_ref", "expected"),
    [
        ("replan-history", (None, None)),
        ("goal", (None, None)),
        (CURRENT_SESSION, (CURRENT_SESSION, None)),
        ("agent:agent-fixture", (None, "scope_ref_unsupported")),
        ("host-session:cursor:x", (None, "scope_ref_unsupported")),
    ],
)
def test_invoking_session_of_table(scope_ref, expected):
    assert invoking_session_of(scope_ref) == expected


def test_spooled_situation_reads_the_spool_by_reference(tmp_path):
    paths = StatePaths(tmp_path)
    reference = spool_document(paths, "situations", json.dumps(situation()).encode())
    enablement = enabled_policy().config.enablements[0]
    loaded, error = spooled_situation(paths, f"replan-situation:{reference}", enablement)
    assert error is None and loaded.situation_id == "situation-1"
    assert spooled_situation(paths, "what failed before?", enablement) == (None, "situation_ref_required")
    absent = "replan-situation:sha256:" + "0" * 64
    assert spooled_situation(paths, absent, enablement) == (None, "situation_not_found")


def test_bounded_max_results_follows_loopx():
    assert [bounded_max_results(n) for n in (0, 1, 8, 50)] == [1, 1, 8, MAX_RECALL_ITEMS]
