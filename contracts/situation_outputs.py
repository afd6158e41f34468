"""What the `situation` commands print under `--format json`: references, never the situation."""

from typing import Annotated, Literal

from pydantic import StringConstraints

from obelisk_session_evidence.contracts.base import ContractModel, Digest, OpaqueId
from obelisk_session_evidence.contracts.config import AbsolutePath

SituationRef = Annotated[str, StringConstraints(pattern=r"^replan-situation:sha256:[0-9a-f]{64}$")]


class SituationSpooled(ContractModel):
    """`obelisk_session_evidence_situation_spool_v0`: a situation kept in the private spool."""

    schema_version: Literal["obelisk_session_evidence_situation_spool_v0"] = (
        "obelisk_session_evidence_situation_spool_v0"
    )
    """This document's schema id."""
    situation_ref: SituationRef
    """The query LoopX sends (`recall-context --query <situation_ref>`)."""
    digest: Digest
    """The spooled bytes' digest."""


class SituationWritten(ContractModel):
    """`obelisk_session_evidence_situation_written_v0`: `situation new --out FILE` wrote a
    situation (the file is private: it holds the route)."""

    schema_version: Literal["obelisk_session_evidence_situation_written_v0"] = (
        "obelisk_session_evidence_situation_written_v0"
    )
    """This document's schema id."""
    situation_id: OpaqueId
    """The situation's id."""
    path: AbsolutePath
    """Where it was written (mode 0600)."""
    digest: Digest
    """The written document's digest."""
