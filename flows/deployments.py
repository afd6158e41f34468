"""Deployments of both flows: served by this process, or registered on a work pool for workers.

A deployment's parameters are the same digests as a direct run (`situation_ref`, `manifest_ref`),
so spool first (`batch --spool-only`) on a state directory the runner can read.
"""

import asyncio
import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Final, TypeVar

from prefect import Flow
from prefect.client.orchestration import get_client
from prefect.exceptions import ObjectNotFound, TerminationSignal
from prefect.runner import Runner
from prefect.settings import get_current_settings

from obelisk_session_evidence import flows
from obelisk_session_evidence.contracts.errors import InvalidInput, PrefectApiNotConfigured
from obelisk_session_evidence.flows.hardening import HARDENED_DEFAULTS
from obelisk_session_evidence.flows.replan_evidence import replan_evidence
from obelisk_session_evidence.flows.reprocess_stalled import reprocess_stalled
from obelisk_session_evidence.state.paths import StatePaths

DEPLOYMENT_NAME: Final = "obelisk-session-evidence"
ENTRYPOINTS: Final = {
    "replan-evidence": "flows/replan_evidence.py:replan_evidence",
    "reprocess-stalled": "flows/reprocess_stalled.py:reprocess_stalled",
}
FLOWS: Final[tuple[Flow[Any, Any], ...]] = (replan_evidence, reprocess_stalled)

_Value = TypeVar("_Value")


def _called_synchronously(value: _Value | Coroutine[Any, Any, _Value]) -> _Value:
    """What one of Prefect's sync-or-async methods returns outside an event loop: the value itself."""
    if isinstance(value, Coroutine):
        value.close()
        raise TypeError("a Prefect method returned a coroutine outside an event loop")
    return value


def deployment_names() -> list[str]:
    """`<flow>/<deployment>` for every deployment this package registers."""
    return [f"{flow.name}/{DEPLOYMENT_NAME}" for flow in FLOWS]


def _require_api() -> None:
    if get_current_settings().api.url is None:
        raise PrefectApiNotConfigured("set PREFECT_API_URL or start `obelisk-session-evidence ui`")


def serve_deployments(paths: StatePaths, *, limit: int, on_registered: Callable[[], None]) -> None:
    """Register both deployments, call `on_registered`, then run their flow runs from this
    process until stopped.

    Served runs are this process's children and inherit its environment (Prefect refuses job
    variables without a work pool), so the run environment is set here."""
    _require_api()
    for name, value in _run_environment(paths).items():
        os.environ.setdefault(name, value)
    _drop_work_pool_registrations()
    runner = Runner(limit=limit, pause_on_shutdown=False)
    for flow in FLOWS:
        deployment = _called_synchronously(flow.to_deployment(name=DEPLOYMENT_NAME, tags=["obelisk-session-evidence"]))
        runner.add_deployment(deployment)
    on_registered()
    try:
        asyncio.run(runner.start())
    except TerminationSignal:
        return


def _drop_work_pool_registrations() -> None:
    """Remove a same-named deployment that `serve --work-pool` registered: re-applying it as a
    served one keeps its pull steps, and its runs would then crash looking for flow storage."""
    with get_client(sync_client=True) as client:
        for name in deployment_names():
            try:
                deployment = client.read_deployment_by_name(name)
            except ObjectNotFound:
                continue
            if deployment.work_pool_name or deployment.pull_steps:
                client.delete_deployment(deployment.id)


def register_on_work_pool(paths: StatePaths, work_pool: str) -> list[str]:
    """Register both deployments on an existing work pool (its workers run them); return their ids."""
    _require_api()
    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(work_pool)
        except Exception:
            raise InvalidInput(
                f"no work pool {work_pool!r}: create it with `prefect work-pool create {work_pool} --type process`"
            ) from None
    source = str(Path(flows.__file__).resolve().parent.parent)
    environment = _run_environment(paths)
    ids = []
    for flow in FLOWS:
        loaded = _called_synchronously(flow.from_source(source=source, entrypoint=ENTRYPOINTS[flow.name]))
        deployment = _called_synchronously(
            loaded.to_deployment(
                name=DEPLOYMENT_NAME,
                work_pool_name=work_pool,
                tags=["obelisk-session-evidence"],
                job_variables={"env": environment},
            )
        )
        ids.append(str(_called_synchronously(deployment.apply())))  # `deploy` would also print Prefect's own tables
    return ids


def _run_environment(paths: StatePaths) -> dict[str, str]:
    """What a flow run needs wherever it runs: the state directory and the hardened defaults."""
    return {"OBELISK_SESSION_EVIDENCE_HOME": str(paths.root), **HARDENED_DEFAULTS}
