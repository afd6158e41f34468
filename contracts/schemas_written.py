"""What `schema --format json` prints: the schemas it wrote, by name."""

from typing import Literal

from obelisk_session_evidence.contracts.base import ContractModel
from obelisk_session_evidence.contracts.config import AbsolutePath


class SchemasWritten(ContractModel):
    """`obelisk_session_evidence_schema_v0`: one JSON Schema file per public contract written."""

    schema_version: Literal["obelisk_session_evidence_schema_v0"] = "obelisk_session_evidence_schema_v0"
    """This document's schema id."""
    out_dir: AbsolutePath
    """The folder written into."""
    written: list[str]
    """The contracts, each written as `<contract>.schema.json`."""
