"""A `replan_situation_v0` written by a person, without LoopX (`situation new`).

LoopX fills a situation's typed fields from its own state: the Replan obligation, the typed
progress observations, the coverage facts. Asked by hand, those fields get fixed, documented
defaults (`MANUAL_DEFAULTS`), chosen so that the question is an operator's explicit request for
history (the `operator_requested_history` trigger) about a proposed route; the route itself (the
commands, files, hypothesis and blocker the person gives) is what the verdict compares with the
agent's earlier sessions.
"""

import json
import secrets
from typing import Any, Final

from obelisk_session_evidence.contracts.config import EnablementConfig
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.contracts.situation import ReplanSituation, SituationScope

MANUAL_OBSERVATION: Final = {
    "schema_version": "typed_progress_observation_v0",
    "result_class": "advanced",
    "work_item_id": "manual-work",
    "probe_kind": "manual-route",
}
"""The proposed observation: LoopX requires one stable id besides the result class."""
MANUAL_DEFAULTS: Final[dict[str, Any]] = {
    "recent_observations": [],
    "coverage": {
        "hypotheses_exhausted": False,
        "prior_session_coverage": "unknown",
        "work_identified": True,
        "decision_evidence_missing": False,
    },
    "operator_request": {"requested": True},
}
"""LoopX's typed fields, as `situation new` fills them: no recent observations, no obligation
trigger, coverage that opens no other gap, and an explicit operator request."""


def manual_situation(
    scope: SituationScope,
    *,
    commands: list[str],
    files: list[str],
    hypothesis: str | None = None,
    blocker: str | None = None,
    situation_id: str | None = None,
) -> ReplanSituation:
    """A valid situation for this scope and route; ids are random unless `situation_id` is given
    (`manual-<16 hex>`; the obligation `replan-<16 hex>`, LoopX's shape)."""
    if not (commands or files or hypothesis or blocker):
        raise InvalidInput("give the route to judge: at least one --command, --file, --hypothesis or --blocker")
    token = secrets.token_hex(8)
    document = {
        "schema_version": "replan_situation_v0",
        "situation_id": situation_id or f"manual-{token}",
        "scope": scope.model_dump(),
        "obligation": {"obligation_id": f"replan-{token}", "triggers": []},
        "proposed": {
            "observation": MANUAL_OBSERVATION,
            "route": {
                **({"action_kind": "shell"} if commands else {}),
                "commands": commands,
                "files": files,
                **({"hypothesis": hypothesis} if hypothesis else {}),
                **({"blocker": blocker} if blocker else {}),
            },
        },
        **MANUAL_DEFAULTS,
    }
    return ReplanSituation.model_validate_json(json.dumps(document))


def enabled_scope(
    config: EnablementConfig | None, *, agent_id: str | None, project_id: str | None, repository_id: str | None
) -> SituationScope:
    """The scope the user names, completed from the one enabled scope that matches it."""
    given = {"agent_id": agent_id, "project_id": project_id, "repository_id": repository_id}
    matching = [
        e
        for e in (config.enablements if config else [])
        if all(value in (None, getattr(e, name)) for name, value in given.items())
    ]
    if all(given.values()):
        return SituationScope(**given)
    if len(matching) != 1:
        found = "no enabled scope matches" if not matching else f"{len(matching)} enabled scopes match"
        raise InvalidInput(f"{found}: name it with --agent-id, --project-id and --repository-id (see `status`)")
    (enablement,) = matching
    return SituationScope(
        agent_id=enablement.agent_id, project_id=enablement.project_id, repository_id=enablement.repository_id
    )
