"""Every threshold compare-route uses, in one typed config with documented defaults."""

from typing import Annotated

from pydantic import Field

from contracts.base import ContractModel

Percent = Annotated[int, Field(ge=0, le=100)]


class RouteThresholds(ContractModel):
    """Similarity (0–100) at or above which a proposed route counts as a repeat."""

    command_repeat: Percent = 90
    """A normalised proposed command this similar to a historical command repeats it."""
