"""Every threshold compare-route uses, in one typed config with documented defaults.

The defaults are what the Stage 0 qualification (`obelisk-session-evidence qualify`, seed 0,
native backend) chose on the training split of its fixtures, each threshold in turn: the best
repeated-route F1 (averaged with the neighbouring values) among values that keep the
false-repeat rate at or under 2 %, the stricter value on a tie. The held-back split is only
scored. Every decision reports the values it used.
"""

from typing import Annotated, get_args

from pydantic import Field

from obelisk_session_evidence.contracts.base import ContractModel
from obelisk_session_evidence.contracts.reason_codes import ThresholdName

Percent = Annotated[int, Field(ge=0, le=100)]


class RouteThresholds(ContractModel):
    """Similarities (0–100) at or above which a proposed route, hypothesis or blocker repeats."""

    command_repeat: Percent = 100
    """A route repeats when every one of its commands is at least this similar to a prior one.

    Command similarity is 0 for another program and otherwise the lower of flag and target
    agreement (both Jaccard over canonical forms), so anything below 100 means a changed
    meaningful flag or target: the default accepts no such change. Spelling differences
    (wrappers, flag order, interpreters, volatile tokens) are already folded to 100."""
    hypothesis_repeat: Percent = 80
    """A proposed hypothesis this similar to an earlier session's text was already tried."""
    blocker_repeat: Percent = 75
    """A claimed blocker this similar to an earlier session's text is already evidenced."""
    min_text_words: Percent = 4
    """Hypotheses and blockers with fewer distinct content words are too vague to match."""

    def report(self) -> dict[ThresholdName, int]:
        """The thresholds as the decision reports them."""
        return {name: getattr(self, name) for name in get_args(ThresholdName)}
