"""`obelisk_session_evidence_error_v0`: what any command prints on stdout for an error under
`--format json` (the one-line message still goes to stderr). Codes and details only: a detail
names fields, paths the user gave and counts, never input content."""

from typing import Annotated, Literal

from pydantic import StringConstraints

from obelisk_session_evidence.contracts.base import ContractModel
from obelisk_session_evidence.contracts.reason_codes import EnvelopeCode, StageFailureCode


class ErrorEnvelope(ContractModel):
    """One error, typed."""

    schema_version: Literal["obelisk_session_evidence_error_v0"] = "obelisk_session_evidence_error_v0"
    """This document's schema id."""
    ok: Literal[False] = False
    """Always false: tells an error from a result at a glance."""
    reason_code: EnvelopeCode
    """Why."""
    detail: Annotated[str, StringConstraints(max_length=2000)]
    """The same detail as the stderr line (the exception type for `internal_error`)."""
    stage: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z-]{0,31}$")] | None = None
    """For `stage_failed`: the stage that raised, when known."""
    cause: StageFailureCode | None = None
    """For `stage_failed`: the reason code of what the stage raised."""
    exit_code: Literal[1, 2]
    """The command's exit code: 2 not ok, 1 an internal fault."""
