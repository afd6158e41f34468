"""The Replan situation a replayed call stands for: its own command as the proposed route.

Admitted as an operator's request for history (the Stage 1 trigger every enablement admits),
with a neutral claimed observation: the verdict does not depend on which outcomes an
observation claims (`stages.compare_route`), only the delta does.
"""

import re
from typing import Final

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.observations import TypedProgressObservation
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall
from obelisk_session_evidence.contracts.situation import (
    Coverage,
    Obligation,
    OperatorRequest,
    ProposedStep,
    ReplanSituation,
    Revision,
    RouteProposal,
    SituationScope,
)

OBLIGATION_ID: Final = "replan-0000000000000000"
_REVISION: Final = re.compile(r"^[0-9a-f]{7,64}$")


def replay_situation(enablement: Enablement, call: PriorToolCall, *, index: int) -> ReplanSituation:
    """The situation of one replayed shell call (`index`: its position in the replay)."""
    baseline = TypedProgressObservation(result_class="unchanged", work_item_id="replay", probe_kind="replay-call")
    revision = call.revision_ref if call.revision_ref and _REVISION.match(call.revision_ref) else None
    return ReplanSituation(
        schema_version="replan_situation_v0",
        situation_id=f"replay-{index}",
        scope=SituationScope(
            agent_id=enablement.agent_id, project_id=enablement.project_id, repository_id=enablement.repository_id
        ),
        revision=Revision(current=revision) if revision else None,
        obligation=Obligation(obligation_id=OBLIGATION_ID, progress_baseline=baseline),
        proposed=ProposedStep(
            observation=TypedProgressObservation(
                result_class="advanced", work_item_id="replay", probe_kind=f"replay-call-{index}"
            ),
            route=RouteProposal(action_kind="shell", commands=[call.command], cwd=call.cwd, escalated=call.escalated),
        ),
        coverage=Coverage(
            hypotheses_exhausted=False,
            prior_session_coverage="unknown",
            work_identified=True,
            decision_evidence_missing=False,
        ),
        operator_request=OperatorRequest(requested=True),
    )
