"""The promotion gate (RFC §9): automatic triggers only from a replay that met its targets, or an operator."""

from datetime import UTC, datetime

import pytest

from obelisk_session_evidence.contracts.base import TRIGGERS
from obelisk_session_evidence.contracts.config import EnablementConfig
from obelisk_session_evidence.contracts.lifecycle import ProviderHealth
from obelisk_session_evidence.contracts.replay import REPLAY_TARGETS, ScopeReplay
from obelisk_session_evidence.lifecycle.enablement import enable
from obelisk_session_evidence.lifecycle.promotion import record_replay
from obelisk_session_evidence.replay.tally import JudgedCall, figures
from obelisk_session_evidence.state.paths import state_paths
from tests.lifecycle.helpers import enable_request

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
MEASURED = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def _available(paths, enablement):
    return ProviderHealth(
        kind=enablement.provider,
        state="available",
        provider_version="0.1.0 stand-in/1",
        reason_code="provider_available",
    )


def _call(outcome: str, *, alarm: bool, rerun: bool) -> JudgedCall:
    return JudgedCall(
        outcome=outcome,  # type: ignore[arg-type]
        verdict="repeats_prior_failure" if alarm else "novel",
        alarm=alarm,
        alarm_place="across_sessions" if alarm else None,
        rerun_of_failure=rerun,
        rerun_place="across_sessions" if rerun else None,
        private_items=0,
        truncated=False,
        decide_ms=1.0,
    )


def _scope(calls: list[JudgedCall]) -> ScopeReplay:
    from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY

    return ScopeReplay(
        agent_id=FIXTURE_AGENT,
        project_id=FIXTURE_PROJECT,
        repository_id=FIXTURE_REPOSITORY,
        freshness="fresh",
        tool_calls=len(calls),
        other_tool_calls={"edit": 0, "read": 0, "other": 0},
        undated_calls=0,
        figures=figures(calls),
        false_alarms=[],
        missed_dead_ends=[],
        seconds=1.0,
        calls_per_second=float(len(calls)),
    )


MEETS = [_call("failed", alarm=True, rerun=True)] * 9 + [_call("succeeded", alarm=False, rerun=True)] * 3
"""9 dead ends all caught with no false alarm (1.0, 1.0); the naive rule: 9 right of 12 (0.75)."""
MISSES = [_call("failed", alarm=False, rerun=True)] * 9 + [_call("succeeded", alarm=True, rerun=True)] * 3


def _recorded():
    (enablement,) = EnablementConfig.model_validate_json(state_paths().config_file.read_bytes()).enablements
    return enablement


def _enable(**overrides):
    return enable(enable_request(**overrides), paths=state_paths(), now=T0, probe=_available)


def test_stage_1_by_default_then_admitted_by_a_replay_that_meets_its_targets():
    _enable(triggers=())
    assert _recorded().triggers == ["operator_requested_history"]
    assert figures(MEETS).verdict.alarms_right == 1.0 >= REPLAY_TARGETS["alarms_right"]
    record_replay(state_paths(), _scope(MEETS), measured_at=MEASURED)
    promoted = _recorded()
    assert promoted.triggers == list(TRIGGERS) and promoted.trigger_grant == "replay_qualified"
    assert promoted.replay is not None and promoted.replay.measured_at == MEASURED and promoted.replay.targets_met


def test_a_replay_that_misses_its_targets_takes_the_automatic_triggers_back():
    _enable(triggers=())
    record_replay(state_paths(), _scope(MEETS), measured_at=MEASURED)
    record_replay(state_paths(), _scope(MISSES), measured_at=MEASURED)
    demoted = _recorded()
    assert demoted.triggers == ["operator_requested_history"] and demoted.trigger_grant == "stage_1"
    assert demoted.replay is not None and not demoted.replay.targets_met


def test_named_triggers_override_the_gate_and_a_replay_never_changes_them():
    _enable(triggers=("replan_repetition",))
    record_replay(state_paths(), _scope(MISSES), measured_at=MEASURED)
    recorded = _recorded()
    assert recorded.triggers == ["replan_repetition"] and recorded.trigger_grant == "operator"
    assert recorded.replay is not None and recorded.replay.calls == len(MISSES)


@pytest.mark.parametrize("named", [(), ("replan_repetition",)])
def test_re_enabling_keeps_the_replay_figures(named):
    _enable(triggers=())
    record_replay(state_paths(), _scope(MEETS), measured_at=MEASURED)
    _enable(triggers=named)
    again = _recorded()
    assert again.replay is not None and again.replay.targets_met
    assert again.trigger_grant == ("replay_qualified" if not named else "operator")
