"""What the verdict rests on and what worked after it, end to end through `decide` (issue
"Cause-aware verdicts" item 4): the private result names both by opaque ref, the receipt counts
them, and nothing of the calls behind them reaches a public output."""

import io
import uuid
from datetime import UTC, datetime, timedelta

from rich.console import Console

from obelisk_session_evidence.cli.render_run import render_decision
from obelisk_session_evidence.compose import decide
from obelisk_session_evidence.contracts.evidence import EvidenceItem, VerdictBasis
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall, ProviderAnswer
from obelisk_session_evidence.contracts.snippets import tool_snippet
from obelisk_session_evidence.flows.operators import decision_table
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.providers.failure_causes import call_outcome, failure_cause
from obelisk_session_evidence.stages.pipeline import PipelineRun
from tests.stages.helpers import enabled_policy, result_for, situation_model

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
REPO = "/work/app"
CANARY = f"canary{uuid.uuid4().hex}"
NOT_FOUND = "Exit code 127\n(eval):1: command not found: pytest"
PASSED = f"tests/test_{CANARY}.py ....\n============ 4 passed in 0.31s ============"


def _call(number: int, command: str, output: str, *, exit_code: int, minute: int, cwd: str = REPO) -> PriorToolCall:
    outcome = call_outcome(command, exit_code=exit_code, is_error=exit_code != 0, output=output)
    return PriorToolCall(
        session_ref="session:" + "a" * 16,
        message_ref=f"message:{number:032x}",
        tool_name="Bash",
        command=command,
        exit_code=exit_code,
        is_error=exit_code != 0,
        cwd=cwd,
        repository_cwd="",
        observed_at=T0 + timedelta(minutes=minute),
        output_excerpt=output,
        outcome=outcome,
        cause=failure_cause(command, exit_code=exit_code, output=output) if outcome == "failed" else None,
    )


FAILURE = _call(1, f"pytest tests/test_{CANARY}.py", NOT_FOUND, exit_code=127, minute=0)
SUCCESSOR = _call(2, f"uv run pytest tests/test_{CANARY}.py", PASSED, exit_code=0, minute=3)


def _item(call: PriorToolCall) -> EvidenceItem:
    outcome = f"exit {call.exit_code}"
    return EvidenceItem(
        session_ref=call.session_ref,
        message_ref=call.message_ref,
        evidence_type="prior_failure" if call.outcome == "failed" else "tool_outcome",
        observed_at=call.observed_at,
        snippet=tool_snippet(call.command, outcome, call.output_excerpt),
    )


def _decide(encoder, *calls: PriorToolCall, command: str = f"pytest tests/test_{CANARY}.py") -> PipelineRun:
    def answer(request):
        return ProviderAnswer(result=result_for(request, [_item(call) for call in calls]), prior_calls=list(calls))

    return decide(
        situation_model(commands=[command]),
        policy=enabled_policy(repo_roots=[REPO]),
        provider_factory=lambda enablement, kind: HandlerProvider(answer),
        encoder=encoder,
        digest_salt="salt",
    )


def test_the_private_result_names_the_failure_and_what_worked_after_it(encoder):
    run = _decide(encoder, FAILURE, SUCCESSOR)
    assert run.decision.comparison.verdict == "repeats_prior_failure"
    basis = run.private_result.verdict_basis
    assert (basis.rests_on, basis.successors) == ([FAILURE.message_ref], [SUCCESSOR.message_ref])
    assert (run.decision.receipt.verdict_items, run.decision.receipt.successor_items) == (1, 1)


def test_without_a_later_success_the_private_result_names_only_the_failure(encoder):
    failed_again = SUCCESSOR.model_copy(
        update={"exit_code": 2, "is_error": True, "outcome": "failed", "output_excerpt": "error: Failed to spawn"}
    )
    run = _decide(encoder, FAILURE, failed_again)
    basis = run.private_result.verdict_basis
    assert (basis.rests_on, basis.successors) == ([FAILURE.message_ref], [])
    assert (run.decision.receipt.verdict_items, run.decision.receipt.successor_items) == (1, 0)


def test_a_success_in_another_checkout_is_not_named(encoder):
    elsewhere = SUCCESSOR.model_copy(update={"cwd": f"{REPO}-review"})
    run = _decide(encoder, FAILURE, elsewhere)
    assert run.private_result.verdict_basis.successors == []
    assert run.decision.receipt.successor_items == 0


def test_a_novel_route_rests_on_nothing(encoder):
    run = _decide(encoder, FAILURE, SUCCESSOR, command="cargo build")
    assert run.decision.comparison.verdict == "novel"
    assert run.private_result.verdict_basis is None
    assert (run.decision.receipt.verdict_items, run.decision.receipt.successor_items) == (0, 0)


def test_no_command_of_the_failure_or_its_successor_reaches_a_public_output(encoder):
    """Canary: the commands and outputs behind the named refs stay private."""
    run = _decide(encoder, FAILURE, SUCCESSOR)
    assert run.private_result.verdict_basis.successors  # the data path was taken
    assert CANARY in run.values.capped.prior_calls[1].command
    console = Console(record=True, width=200, file=io.StringIO())
    render_decision(run.decision, console)
    public = [run.decision.model_dump_json(), str(decision_table(run.decision)), console.export_text()]
    assert "rests on 1 items, 1 successors" in public[1]
    assert [text for text in public if CANARY in text] == []


def test_a_basis_in_the_providers_answer_never_passes_for_the_verdicts(encoder):
    forged = VerdictBasis(rests_on=[FAILURE.message_ref], successors=[SUCCESSOR.message_ref])

    def answer(request):
        result = result_for(request, [_item(FAILURE), _item(SUCCESSOR)]).model_copy(update={"verdict_basis": forged})
        return ProviderAnswer(result=result, prior_calls=[FAILURE, SUCCESSOR])

    run = decide(
        situation_model(commands=["cargo build"]),
        policy=enabled_policy(repo_roots=[REPO]),
        provider_factory=lambda enablement, kind: HandlerProvider(answer),
        encoder=encoder,
        digest_salt="salt",
    )
    assert run.decision.comparison.verdict == "novel"
    assert run.private_result.verdict_basis is None
    assert (run.decision.receipt.verdict_items, run.decision.receipt.successor_items) == (0, 0)
