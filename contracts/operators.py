"""`ui --format json` and `serve --format json`: what the operator commands print (public)."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from obelisk_session_evidence.contracts.base import ContractModel

Url = Annotated[str, StringConstraints(pattern=r"^http://127\.0\.0\.1:[0-9]{1,5}(/api)?$")]
DeploymentName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z-]*/[a-z][a-z-]*$")]


DatabaseKind = Literal["sqlite", "postgresql"]
"""The Prefect server's database backend (never its URL, which may hold a password)."""


class UiFacts(ContractModel):
    """`obelisk_session_evidence_ui_v0`: where the local Prefect server and UI answer."""

    schema_version: Literal["obelisk_session_evidence_ui_v0"] = "obelisk_session_evidence_ui_v0"
    """This document's schema id."""
    url: Url
    """The UI, on loopback."""
    api_url: Url
    """The API: what clients set as PREFECT_API_URL."""
    ui_api_url: Url | None
    """The API the UI itself calls, as the server reports it (None when it did not say)."""
    database: DatabaseKind
    """The backend (never its URL, which may hold a password)."""
    prefect_home: Annotated[str, StringConstraints(min_length=1, max_length=4096)]
    """The server's Prefect home: the state directory's `prefect/`, or the user's PREFECT_HOME."""
    ready_seconds: Annotated[float, Field(ge=0)]
    """How long the server took to answer."""


class ServeOutcome(ContractModel):
    """`obelisk_session_evidence_serve_v0`: the deployments registered (and where)."""

    schema_version: Literal["obelisk_session_evidence_serve_v0"] = "obelisk_session_evidence_serve_v0"
    """This document's schema id."""
    deployments: list[DeploymentName]
    """`<flow>/<deployment>` of each."""
    ids: list[Annotated[str, StringConstraints(max_length=64)]] | None
    """Their ids on the work pool; None when this process serves them."""
    work_pool: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None
    """The work pool, or None when served in-process."""
