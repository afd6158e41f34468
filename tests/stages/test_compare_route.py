"""compare-route: exact ids first; history only removes; freshness gates the verdict."""

import json
from datetime import UTC, datetime

import pytest

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY, observation, situation
from obelisk_session_evidence.comparators.exact_ids import exact_id_delta
from obelisk_session_evidence.comparators.reasons import REASONS
from obelisk_session_evidence.contracts.evidence import EvidenceItem, HistoricalEvidenceResult, ScopeApplied
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.snippets import tool_snippet
from obelisk_session_evidence.contracts.stage_values import CappedEvidence
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.stages.classify_gap import classify_gap
from obelisk_session_evidence.stages.compare_route import compare_route
from tests.stages.helpers import situation_model

THRESHOLDS = RouteThresholds()
FAILED_RUN = tool_snippet("pytest tests/test_auth.py -x", "exit 1", "1 failed")
PASSED_RUN = tool_snippet("pytest tests/test_auth.py", "exit 0", "12 passed")


def _compare(situation, capped, *, thresholds):
    """compare-route with the gap classify-gap finds for the situation (as the pipeline passes it)."""
    return compare_route(situation, classify_gap(situation), capped, thresholds=thresholds)


HYPOTHESIS_GAP = {
    "hypotheses_exhausted": True,
    "prior_session_coverage": "unknown",
    "work_identified": False,
    "decision_evidence_missing": False,
}


def situation_proposing(result_class: str, ids: dict, **kwargs) -> ReplanSituation:
    document = situation(**kwargs)
    document["proposed"]["observation"] = observation(result_class, **ids)
    return load_contract(ReplanSituation, json.dumps(document).encode())


def capped(*snippets: tuple[str, str] | str, freshness: str = "fresh") -> CappedEvidence:
    items = []
    for number, entry in enumerate(snippets):
        snippet, evidence_type = (entry, None) if isinstance(entry, str) else entry
        if evidence_type is None:
            evidence_type = "prior_failure" if "\nexit 1" in snippet else "tool_outcome"
        items.append(
            EvidenceItem(
                session_ref=f"session:{number + 1:016x}",
                evidence_type=evidence_type,
                observed_at=datetime(2026, 3, 2, 9, number, tzinfo=UTC),
                snippet=snippet,
            )
        )
    result = HistoricalEvidenceResult(
        request_id="req-1",
        provider_version="0.1.0 handler/1",
        index_revision="rev-1",
        scope_applied=ScopeApplied(
            agent_id=FIXTURE_AGENT, project_id=FIXTURE_PROJECT, repository_id=FIXTURE_REPOSITORY
        ),
        freshness=freshness,
        items=items,
        truncated=False,
        omitted_count=0,
    )
    return CappedEvidence(result=result, token_count=0)


def test_compare_route_not_admitted_is_not_compared_and_keeps_exact_ids() -> None:
    situation = situation_model()
    compared = _compare(situation, CappedEvidence(result=None, token_count=0), thresholds=THRESHOLDS)
    assert compared.comparison.verdict == "not_compared"
    assert compared.semantic_delta == exact_id_delta(situation.obligation, situation.proposed.observation)
    assert compared.comparison.thresholds == THRESHOLDS.report()


@pytest.mark.parametrize(
    ("command", "verdict", "reason_code"),
    [
        ("pytest tests/test_auth.py -x", "repeats_prior_failure", "route_repeats_prior_failure"),
        ("python -m pytest -q tests/test_auth.py", "repeats_prior_failure", "route_repeats_prior_failure"),
        (
            "bash -lc 'cd /home/dev/wt && pytest tests/test_auth.py 2>&1 | tail -n 20'",
            "repeats_prior_failure",
            "route_repeats_prior_failure",
        ),
        ("pytest tests/test_session.py", "novel", "semantic_advance"),
        ("pytest tests/test_auth.py -k expiry", "novel", "semantic_advance"),
    ],
)
def test_compare_route_repeat_paraphrase_novel(command: str, verdict: str, reason_code: str) -> None:
    compared = _compare(situation_model(commands=[command]), capped(FAILED_RUN), thresholds=THRESHOLDS)
    assert compared.comparison.verdict == verdict
    assert compared.semantic_delta.reason_code == reason_code
    assert compared.semantic_delta.accepted is (verdict == "novel")


def test_compare_route_repeat_of_success_is_already_done() -> None:
    compared = _compare(
        situation_model(commands=["pytest tests/test_auth.py"]), capped(PASSED_RUN), thresholds=THRESHOLDS
    )
    assert compared.comparison.verdict == "repeats_prior_attempt"
    assert compared.semantic_delta.reason_code == "route_repeats_prior_attempt"
    assert compared.semantic_delta.outcomes == []


def test_compare_route_failure_fixed_later_is_not_a_dead_end() -> None:
    compared = _compare(
        situation_model(commands=["pytest tests/test_auth.py"]), capped(FAILED_RUN, PASSED_RUN), thresholds=THRESHOLDS
    )
    assert compared.comparison.verdict == "repeats_prior_attempt"


def test_compare_route_removal_uses_the_fixed_reason_sentence() -> None:
    compared = _compare(situation_model(), capped(FAILED_RUN), thresholds=THRESHOLDS)
    assert compared.semantic_delta.reason == REASONS["route_repeats_prior_failure"]
    assert compared.semantic_delta.satisfying_outcomes == []


@pytest.mark.parametrize("freshness", ["stale", "incomplete", "unknown"])
def test_compare_route_empty_non_fresh_history_is_unverified(freshness: str) -> None:
    situation = situation_model()
    compared = _compare(situation, capped(freshness=freshness), thresholds=THRESHOLDS)
    assert compared.comparison.verdict == "novelty_unverified"
    assert compared.semantic_delta == exact_id_delta(situation.obligation, situation.proposed.observation)


@pytest.mark.parametrize("freshness", ["stale", "incomplete"])
def test_compare_route_hit_in_non_fresh_index_still_counts(freshness: str) -> None:
    compared = _compare(situation_model(), capped(FAILED_RUN, freshness=freshness), thresholds=THRESHOLDS)
    assert compared.comparison.verdict == "repeats_prior_failure"
    assert not compared.semantic_delta.accepted


def test_compare_route_empty_fresh_history_is_novel_with_loopx_reason() -> None:
    situation = situation_model()
    compared = _compare(situation, capped(), thresholds=THRESHOLDS)
    assert compared.comparison.verdict == "novel"
    assert compared.semantic_delta == exact_id_delta(situation.obligation, situation.proposed.observation)


def test_compare_route_history_never_adds_an_outcome() -> None:
    proposed = situation_proposing("unchanged", {})
    compared = _compare(proposed, capped(), thresholds=THRESHOLDS)
    assert compared.semantic_delta.outcomes == [] and not compared.semantic_delta.accepted
    repeated = _compare(proposed, capped(FAILED_RUN), thresholds=THRESHOLDS)
    assert repeated.comparison.verdict == "repeats_prior_failure"
    assert repeated.semantic_delta == exact_id_delta(proposed.obligation, proposed.proposed.observation)


def test_compare_route_exhaustion_is_never_supported_by_absence() -> None:
    proposed = situation_proposing(
        "exploration_exhausted",
        {"coverage_scope_id": "scope-auth", "coverage_complete": False, "evidence_ids": ["evidence-x"]},
    )
    compared = _compare(proposed, capped(), thresholds=THRESHOLDS)
    assert "coverage_backed_exploration_exhausted" not in compared.semantic_delta.outcomes


def _blocked(blocker: str):
    return situation_proposing(
        "blocked", {"blocker_id": "blocker-vault-creds", "evidence_ids": ["evidence-b"]}, commands=[], blocker=blocker
    )


@pytest.mark.parametrize(
    ("history", "verdict", "outcomes"),
    [
        ("Blocked: the vault lacks the staging database credentials.", "repeats_prior_failure", []),
        ("Blocked: CI cannot reach the package index.", "novel", ["new_concrete_blocker"]),
    ],
)
def test_compare_route_blocker_already_evidenced(history: str, verdict: str, outcomes: list[str]) -> None:
    compared = _compare(
        _blocked("staging DB credentials are missing from the vault"),
        capped((history, "decision")),
        thresholds=THRESHOLDS,
    )
    assert compared.comparison.verdict == verdict
    assert compared.semantic_delta.outcomes == outcomes
    if not outcomes:
        assert compared.semantic_delta.reason_code == "blocker_already_evidenced"


def _hypothesis(coverage: dict | None = None):
    return situation_model(
        commands=[],
        hypothesis="the cache key ignores the locale",
        proposed_ids={"hypothesis_id": "hypothesis-locale-key", "evidence_ids": ["evidence-h"]},
        **({"coverage": coverage} if coverage else {}),
    )


def test_compare_route_hypothesis_already_tried_under_gap() -> None:
    compared = _compare(
        _hypothesis(HYPOTHESIS_GAP),
        capped(("Hypothesis: the locale is ignored by the cache key. Disproved.", "decision")),
        thresholds=THRESHOLDS,
    )
    assert compared.comparison.verdict == "repeats_prior_attempt"
    assert compared.semantic_delta.reason_code == "hypothesis_already_tried"
    assert "new_hypothesis" not in compared.semantic_delta.outcomes


def test_compare_route_hypothesis_without_gap_is_not_judged() -> None:
    compared = _compare(
        _hypothesis(),
        capped(("Hypothesis: the locale is ignored by the cache key.", "decision")),
        thresholds=THRESHOLDS,
    )
    assert "new_hypothesis" in compared.semantic_delta.outcomes
    assert compared.comparison.verdict == "novel"


def test_compare_route_reports_scores_per_dimension_and_combined() -> None:
    situation = situation_model(
        commands=["pytest tests/test_auth.py"],
        files=["tests/test_auth.py"],
        hypothesis="expired tokens compare with <= instead of <",
    )
    scores = _compare(situation, capped(FAILED_RUN), thresholds=THRESHOLDS).comparison.scores
    assert scores["command"] == 0 and scores["combined"] == 0 and scores["file"] == 0
    assert 0 <= scores["hypothesis"] <= 100


def test_compare_route_thresholds_are_reported() -> None:
    custom = RouteThresholds(command_repeat=95, hypothesis_repeat=70)
    compared = _compare(situation_model(), capped(FAILED_RUN), thresholds=custom)
    assert compared.comparison.thresholds["command_repeat"] == 95
    assert compared.comparison.thresholds["hypothesis_repeat"] == 70


def test_compare_route_does_not_mutate_inputs() -> None:
    situation, evidence = situation_model(), capped(FAILED_RUN)
    before = (situation.model_dump_json(), evidence.model_dump_json())
    _compare(situation, evidence, thresholds=THRESHOLDS)
    assert (situation.model_dump_json(), evidence.model_dump_json()) == before


# --- the provider's structured prior calls (contracts.prior_calls) ---------------------------

CANARY = "canary-7f3a91-do-not-leak"


def _prior_call(
    command: str,
    output: str,
    *,
    exit_code: int | None,
    is_error: bool | None = None,
    cwd: str = "/home/dev/repo",
    truncated: bool = False,
):
    from obelisk_session_evidence.contracts.prior_calls import PriorToolCall

    return PriorToolCall(
        session_ref="session:" + "c" * 16,
        tool_name="Bash",
        command=command,
        command_truncated=truncated,
        exit_code=exit_code,
        is_error=is_error,
        cwd=cwd,
        repository_cwd="",
        observed_at=datetime(2026, 3, 2, 9, 30, tzinfo=UTC),
        output_excerpt=output,
    )


def _with_calls(evidence: CappedEvidence, *calls) -> CappedEvidence:
    return evidence.model_copy(update={"prior_calls": list(calls)})


def test_compare_route_reads_prior_calls_before_snippets() -> None:
    # The snippet says the run passed; the structured call, which the provider read whole, says
    # it failed. The structured call is the comparator's history.
    command = "pytest tests/test_auth.py -x"
    evidence = _with_calls(capped(PASSED_RUN), _prior_call(command, "1 failed", exit_code=1))
    compared = _compare(situation_model(commands=[command]), evidence, thresholds=THRESHOLDS)
    assert compared.comparison.verdict == "repeats_prior_failure"
    assert compared.comparison.matched_items == 1


def test_compare_route_without_prior_calls_reads_the_snippets() -> None:
    compared = _compare(
        situation_model(commands=["pytest tests/test_auth.py"]), capped(PASSED_RUN), thresholds=THRESHOLDS
    )
    assert compared.comparison.verdict == "repeats_prior_attempt"


def test_compare_route_long_command_beyond_the_snippet_window_is_compared_whole() -> None:
    # A heredoc commit longer than a snippet's window: the structured call holds all of it.
    body = "\n".join(f"- change {n}: adjust the {n}th module" for n in range(400))
    command = f"git add -A && git commit -m \"$(cat <<'EOF'\nfeat: the long one\n\n{body}\nEOF\n)\""
    assert len(command) > 4096
    call = _prior_call(command, "Pre-commit validation failed:\n[FORMAT] Code is not formatted.", exit_code=1)
    evidence = _with_calls(capped(tool_snippet(command[:600], "exit 1", "")), call)
    compared = _compare(situation_model(commands=[command]), evidence, thresholds=THRESHOLDS)
    assert compared.comparison.verdict == "repeats_prior_failure"
    assert compared.comparison.truncated_commands == 0


def test_compare_route_says_how_many_commands_were_compared_in_part() -> None:
    call = _prior_call("pytest tests/test_auth.py -x", "1 failed", exit_code=1, truncated=True)
    evidence = _with_calls(capped(), call)
    compared = _compare(situation_model(commands=["pytest tests/test_auth.py"]), evidence, thresholds=THRESHOLDS)
    assert compared.comparison.truncated_commands == 1
    unreadable = _compare(situation_model(commands=["echo 'unbalanced"]), evidence, thresholds=THRESHOLDS)
    assert unreadable.comparison.token_fallback_commands == 1


def test_compare_route_accepts_a_64_kib_command() -> None:
    command = 'python3 -c "\nimport json\n' + "x = json.dumps({})\n" * 3300 + '"'
    assert 60 * 1024 < len(command) <= 64 * 1024
    compared = _compare(situation_model(commands=[command]), capped(FAILED_RUN), thresholds=THRESHOLDS)
    assert compared.comparison.verdict == "novel"


def test_compare_route_prior_call_content_never_reaches_the_comparison() -> None:
    call = _prior_call(
        f"pytest tests/test_auth.py -k {CANARY}", f"error: {CANARY}\n1 failed", exit_code=1, cwd=f"/home/dev/{CANARY}"
    )
    evidence = _with_calls(capped(), call)
    compared = _compare(
        situation_model(commands=[f"pytest tests/test_auth.py -k {CANARY}"]), evidence, thresholds=THRESHOLDS
    )
    assert compared.comparison.verdict == "repeats_prior_failure"
    assert CANARY not in compared.model_dump_json()
