"""A `replan_situation_v0` from LoopX's own state: LoopX's public history, LoopX's obligation rule.

- the runs: the agent's newest runs on the goal, from LoopX's public `loopx --format json
  history --goal-id G --agent-id A` (the `loopx` on PATH: the LoopX that is asking);
- the obligation: `loopx.status.autonomous_replan_obligation_from_runs` over those runs, exactly
  as LoopX derives it (the one private import left here: docs/loopx.md says why); its id,
  triggers (kind, baseline, window) and baseline are kept, nothing else;
- the recent typed observations: every run's `progress_observation`, normalised as LoopX
  normalises it (`TypedProgressObservation`, which the conformance suite holds equal to LoopX's
  fingerprint), with the run's `generated_at`; a malformed one is skipped, as LoopX skips it;
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
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.errors import EvidenceError, InvalidInput
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.observations import RecentObservation, TypedProgressObservation
from obelisk_session_evidence.contracts.situation import ReplanSituation, RouteProposal


class NoLoopXObligation(InvalidInput):
    """LoopX holds no open Replan obligation for the goal and agent (or nothing to build its
    situation from): a fact about LoopX's state, unlike a state that cannot be read."""


MAX_RUNS = 64
"""LoopX runs read per situation (the contract keeps at most 64 recent observations)."""
HISTORY_TIMEOUT_S = 30
"""Most seconds `loopx history` may take (LoopX gives its extension 30 s in all)."""


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
        newest = observations[-1]  # oldest first
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
    """The agent's newest runs on the goal, from LoopX's public `loopx history` (JSON)."""
    executable = shutil.which("loopx")
    if executable is None:
        raise InvalidInput("LoopX's CLI (loopx) is not on PATH")
    command = [
        executable,
        "--format",
        "json",
        *(["--registry", str(registry)] if registry else []),
        *(["--runtime-root", str(runtime_root)] if runtime_root else []),
        "history",
        "--goal-id",
        goal_id,
        "--agent-id",
        agent_id,
        "--limit",
        str(MAX_RUNS),
    ]
    try:
        completed = subprocess.run(command, capture_output=True, timeout=HISTORY_TIMEOUT_S, check=False)
        history = json.loads(completed.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        raise InvalidInput("LoopX's run history could not be read") from None
    if completed.returncode != 0 or not isinstance(history, dict) or history.get("ok") is not True:
        raise InvalidInput("LoopX's run history could not be read")
    goals = [goal for goal in history.get("goals") or [] if isinstance(goal, dict) and goal.get("id") == goal_id]
    runs = goals[0].get("latest_runs") if goals else None
    return [run for run in runs if isinstance(run, dict)] if isinstance(runs, list) else []


def _open_obligation(runs: list[dict[str, Any]], agent_id: str) -> dict[str, Any] | None:
    from loopx.status import autonomous_replan_obligation_from_runs

    obligation = autonomous_replan_obligation_from_runs(runs, agent_todos=None, agent_id=agent_id)
    return obligation if obligation and obligation.get("required") else None


def _recent_observations(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each run's typed observation, normalised as LoopX does (`TypedProgressObservation`, held
    equal to LoopX's by the conformance suite); a malformed one is skipped, as LoopX skips it."""
    observations: list[RecentObservation] = []
    for run in runs:
        raw = run.get("progress_observation")
        if not isinstance(raw, dict) or not run.get("generated_at"):
            continue
        try:
            recent = load_contract(RecentObservation, json.dumps({**raw, "generated_at": run["generated_at"]}).encode())
        except EvidenceError:
            continue
        observations.append(recent)
    observations.sort(key=lambda o: o.generated_at)
    return [o.model_dump(mode="json", exclude_none=True) for o in observations]


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
