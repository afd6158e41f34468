"""The promotion gate of RFC §9: automatic triggers from measured evidence, never from enablement.

`enable` without `--trigger` admits Stage 1 (`operator_requested_history`) only. A `replay` of the
scope's own history that meets its targets admits the three automatic triggers for that scope
(`replay_qualified`); a later replay that misses them takes them back. Triggers an operator
named (`--trigger`, or a configuration written before the gate) are never changed by a replay:
the scope is then admitted without qualification, and its figures are only recorded.
"""

from datetime import datetime

from obelisk_session_evidence.contracts.config import Enablement, ReplayQualification
from obelisk_session_evidence.contracts.replay import ScopeReplay
from obelisk_session_evidence.lifecycle.enablement import update_enablement
from obelisk_session_evidence.lifecycle.trigger_gate import gated
from obelisk_session_evidence.replay import targets_met
from obelisk_session_evidence.state.paths import StatePaths


def record_replay(paths: StatePaths, scope: ScopeReplay, *, measured_at: datetime) -> Enablement | None:
    """Record a scope's replay figures and apply the gate; None when the scope is no longer enabled."""
    found = scope.figures
    qualification = ReplayQualification(
        measured_at=measured_at,
        calls=found.calls,
        dead_ends=found.dead_ends,
        alarms_right=found.verdict.alarms_right,
        dead_ends_caught=found.verdict.dead_ends_caught_rate,
        naive_alarms_right=found.naive.alarms_right,
        targets_met=targets_met(found),
    )
    return update_enablement(
        paths, (scope.agent_id, scope.project_id, scope.repository_id), lambda e: gated(e, qualification)
    )
