"""A `replan_situation_v0` from LoopX's own state, read through LoopX's Python API.

- the obligation: `loopx.status.autonomous_replan_obligation_from_runs` over the goal's run
  history (`loopx.history.collect_history`, scoped to the agent), exactly as LoopX derives it;
  its id, triggers (kind, baseline, window) and baseline are kept, nothing else;
- the recent typed observations: every run of the agent whose `progress_observation` LoopX
  normalises (`progress_observation_from_run`), with the run's `generated_at`;
- the proposed observation: given by the caller, else the agent's newest typed observation
  (the step it would repeat if it carried on as before: the case Replan guards against);
- the scope: the asking agent's enablement, which holds the project and repository identity.

LoopX holds no route (commands, files, hypothesis, blocker): those are the caller's, optional.
Without them compare-route has nothing to compare with earlier sessions, so the verdict is
`novel` unless the semantic delta alone already refuses the observation; with a command the
verdict sees exact and near repeats of earlier failed runs, with files the edits, with a
hypothesis or blocker their earlier wording. LoopX's TypeScript runtime (Node >= 22.22.3 on
PATH) derives the obligation.
"""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.observations import TypedProgressObservation
from obelisk_session_evidence.contracts.situation import ReplanSituation, RouteProposal


class NoLoopXObligation(InvalidInput):
    """LoopX holds no open Replan obligation for the goal and agent (or nothing to build its
    situation from): a fact about LoopX's state, unlike a state that cannot be read."""


MAX_RUNS = 64
"""LoopX runs read per situation (the contract keeps at most 64 recent observations)."""


def loopx_situation(
    *,
    goal_id: str,
    agent_id: str,
    enablement: Enablement,
    obligation_id: str | None = None,
    proposed: TypedProgressObservation | None = None,
    route: RouteProposal | None = None,
    registry: Path | None = None,
    runtime_root: Path | None = None,
) -> ReplanSituation:
    """The situation of `agent_id`'s open Replan obligation on `goal_id`; `InvalidInput` when
    LoopX is absent, holds no open obligation, or holds another one than `obligation_id`."""
    runs = _agent_runs(goal_id, agent_id, registry=registry, runtime_root=runtime_root)
    if not runs:
        raise NoLoopXObligation("no LoopX run history for this goal and agent")
    obligation = _open_obligation(runs, agent_id)
    if obligation is None:
        raise NoLoopXObligation("no open LoopX replan obligation for this goal and agent")
    if obligation_id is not None and obligation["obligation_id"] != obligation_id:
        raise InvalidInput("obligation-id: LoopX's open obligation has another id")
    observations = _recent_observations(runs)
    if proposed is None:
        if not observations:
            raise NoLoopXObligation("proposed-observation: LoopX holds no typed observation to propose")
        newest = max(observations, key=lambda o: o["generated_at"])
        proposed = load_contract(
            TypedProgressObservation,
            json.dumps({key: value for key, value in newest.items() if key != "generated_at"}).encode(),
        )
    document = json.dumps(
        {
            "schema_version": "replan_situation_v0",
            "situation_id": f"{obligation['obligation_id']}-{agent_id}"[:128],
            "scope": {
                "agent_id": enablement.agent_id,
                "project_id": enablement.project_id,
                "repository_id": enablement.repository_id,
            },
            "obligation": _obligation(obligation),
            "recent_observations": observations[-64:],
            "proposed": {
                "observation": proposed.model_dump(exclude_none=True),
                "route": (route or RouteProposal()).model_dump(exclude_none=True),
            },
            "coverage": {
                "hypotheses_exhausted": False,
                "prior_session_coverage": "unknown",
                "work_identified": proposed.work_item_id is not None,
                "decision_evidence_missing": False,
            },
            "operator_request": {"requested": False},
        }
    )
    return load_contract(ReplanSituation, document.encode())


def _agent_runs(
    goal_id: str, agent_id: str, *, registry: Path | None, runtime_root: Path | None
) -> list[dict[str, Any]]:
    try:
        from loopx.history import collect_history
        from loopx.paths import default_registry_path, effective_runtime_root
    except ImportError:
        raise InvalidInput("LoopX is not installed in this environment") from None
    registry_path = registry or default_registry_path()
    history = collect_history(
        registry_path=registry_path,
        runtime_root=effective_runtime_root(registry_path, runtime_root),
        goal_id=goal_id,
        limit=MAX_RUNS,
        scoped_agent_id=agent_id,
    )
    goals = [goal for goal in history["goals"] if goal["id"] == goal_id]
    return list(goals[0]["latest_runs"]) if goals else []


def _open_obligation(runs: list[dict[str, Any]], agent_id: str) -> dict[str, Any] | None:
    from loopx.status import autonomous_replan_obligation_from_runs

    obligation = autonomous_replan_obligation_from_runs(runs, agent_todos=None, agent_id=agent_id)
    return obligation if obligation and obligation.get("required") else None


def _recent_observations(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    from loopx.control_plane.work_items.progress_observation import progress_observation_from_run

    observations = []
    for run in runs:
        observation = progress_observation_from_run(run)
        if observation is not None and run.get("generated_at"):
            observations.append({**observation, "generated_at": run["generated_at"]})
    return sorted(observations, key=lambda o: o["generated_at"])


def _obligation(obligation: dict[str, Any]) -> dict[str, Any]:
    """LoopX's obligation, cut to the fields `Obligation` binds a decision to."""
    triggers = [
        {
            "kind": trigger["kind"],
            **{k: trigger[k] for k in ("progress_baseline", "progress_window") if trigger.get(k)},
        }
        for trigger in obligation.get("triggers") or []
        if isinstance(trigger, dict) and trigger.get("kind")
    ]
    kept = {k: obligation[k] for k in ("progress_baseline", "progress_window") if obligation.get(k)}
    outcomes = obligation.get("satisfying_semantic_outcomes")
    if isinstance(outcomes, list):
        kept["satisfying_semantic_outcomes"] = outcomes
    return {"obligation_id": obligation["obligation_id"], "triggers": triggers[:16], **kept}
