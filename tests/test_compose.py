"""The composition root: what a caller gives `decide` is what the pipeline runs with."""

from obelisk_session_evidence.compose import decide
from obelisk_session_evidence.contracts.snippets import tool_snippet
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.state.paths import StatePaths
from tests.stages.helpers import enabled_policy, item, result_for, situation_model

FAILED_RUN = tool_snippet("pytest tests/test_auth.py -x", "exit 1", "1 failed")


def _provider():
    return HandlerProvider(lambda request: result_for(request, [item(FAILED_RUN)]))


def test_decide_runs_with_the_dependencies_it_is_given_and_touches_no_state(tmp_path, encoder):
    state = StatePaths(tmp_path / "state")
    kinds = []

    def factory(enablement, kind):
        kinds.append(kind)
        return _provider()

    thresholds = RouteThresholds(hypothesis_repeat=61, blocker_repeat=62, min_text_words=3)
    run = decide(
        situation_model(),
        paths=state,
        policy=enabled_policy(),
        provider_factory=factory,
        thresholds=thresholds,
        encoder=encoder,
        digest_salt="given-salt",
    )
    assert run.decision.comparison.thresholds == thresholds.report()
    assert run.decision.comparison.verdict == "repeats_prior_failure"
    assert kinds == ["native"]
    assert not state.root.exists()  # no policy read, no salt or tokenizer cache written


def test_the_digest_salt_given_is_the_one_receipts_use(encoder):
    def receipt_with(salt):
        return decide(
            situation_model(),
            policy=enabled_policy(),
            provider_factory=lambda enablement, kind: _provider(),
            encoder=encoder,
            digest_salt=salt,
        ).decision.receipt

    assert receipt_with("one") == receipt_with("one")
    assert receipt_with("one") != receipt_with("two")


def test_without_thresholds_decide_uses_the_defaults(tmp_path, encoder):
    run = decide(
        situation_model(),
        paths=StatePaths(tmp_path),
        policy=enabled_policy(),
        provider_factory=lambda enablement, kind: _provider(),
        encoder=encoder,
    )
    assert run.decision.comparison.thresholds == RouteThresholds().report()
