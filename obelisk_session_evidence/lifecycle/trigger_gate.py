"""Which triggers a scope admits, by who granted them (RFC §9; `lifecycle.promotion` applies it)."""

from obelisk_session_evidence.contracts.base import TRIGGERS
from obelisk_session_evidence.contracts.config import STAGE_1_TRIGGERS, Enablement, ReplayQualification


def gated(enablement: Enablement, qualification: ReplayQualification) -> Enablement:
    """The enablement with `qualification` recorded and its triggers as the gate admits them."""
    if enablement.trigger_grant == "operator":
        return enablement.model_copy(update={"replay": qualification})
    if qualification.targets_met:
        update = {"triggers": list(TRIGGERS), "trigger_grant": "replay_qualified"}
    else:
        update = {"triggers": list(STAGE_1_TRIGGERS), "trigger_grant": "stage_1"}
    return enablement.model_copy(update={**update, "replay": qualification})


def kept_qualification(existing: Enablement, candidate: Enablement) -> Enablement:
    """Re-enabling a scope without naming triggers keeps what its replays earned (and their figures)."""
    if candidate.trigger_grant != "stage_1":
        return candidate.model_copy(update={"replay": existing.replay})
    return candidate.model_copy(
        update={"triggers": existing.triggers, "trigger_grant": existing.trigger_grant, "replay": existing.replay}
        if existing.trigger_grant == "replay_qualified"
        else {"replay": existing.replay}
    )
