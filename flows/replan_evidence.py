"""The `replan-evidence` flow: the one pipeline, each stage a thin Prefect task.

Only digests cross into Prefect: the flow parameter is the spooled situation's digest, tasks
neither persist nor cache, run names are static, and any failure is re-raised as a content-free
`StageFailed` (Prefect pickles a failed flow's exception to disk). After the decision, the run is
tagged (trigger, verdict, agent digest) and given a content-free table artifact, both built from
the public decision only (`flows/operator_records.py`).
"""

import hashlib
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run
from prefect.settings import (
    PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
    get_current_settings,
    temporary_settings,
)

from obelisk_session_evidence.compose import decide
from obelisk_session_evidence.contracts.config import ProviderKind
from obelisk_session_evidence.contracts.digests import agent_digest
from obelisk_session_evidence.contracts.errors import EvidenceError, PrefectApiNotConfigured, StageFailed
from obelisk_session_evidence.contracts.json_input import MAX_DOCUMENT_BYTES, load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation, public_situation_id
from obelisk_session_evidence.flows.operator_records import publish_decision_record
from obelisk_session_evidence.flows.operators import decision_run_name
from obelisk_session_evidence.stages.pipeline import PIPELINE, PipelineRun, Stage, stage_errors
from obelisk_session_evidence.state.paths import StatePaths, state_at, state_reference
from obelisk_session_evidence.state.spool import read_spooled, remove_spooled, spool_document, spooled_path

PRIVATE_TASK_OPTIONS: dict[str, Any] = {
    "persist_result": False,
    "cache_policy": NO_CACHE,
    "log_prints": False,
}


def _stage_task(stage: Stage) -> Any:
    """Wrap one stage function as a task named after the stage; errors lose their message."""

    def run_stage(args: list[Any], options: dict[str, Any]) -> Any:
        with stage_errors(stage):
            return stage.function(*args, **options)

    run_stage.__qualname__ = run_stage.__name__ = stage.name.replace("-", "_")
    return task(name=stage.name, task_run_name=stage.name, **PRIVATE_TASK_OPTIONS)(run_stage)


STAGE_TASKS = {stage.name: _stage_task(stage) for stage in PIPELINE}


def call_as_task(stage: Stage, args: list[Any], options: dict[str, Any]) -> Any:
    """Run a stage as its Prefect task (the same order and inputs as the direct path)."""
    return STAGE_TASKS[stage.name](args, options)


def _decision_run_name() -> str:
    """`replan-evidence/<situation id>`: the id is read from the spooled situation (public by
    contract); anything else in it stays out of the name."""
    parameters = flow_run.parameters
    try:
        raw = read_spooled(
            state_at(parameters.get("state_ref")),
            "situations",
            str(parameters.get("situation_ref")),
            max_bytes=MAX_DOCUMENT_BYTES,
        )
    except Exception:
        raw = None
    return decision_run_name(public_situation_id(raw))


@flow(
    name="replan-evidence",
    flow_run_name=_decision_run_name,
    persist_result=False,
    log_prints=False,
    validate_parameters=True,
)
def replan_evidence(
    situation_ref: str, provider_kind: ProviderKind | None = None, state_ref: str | None = None
) -> PipelineRun:
    """Decide one spooled situation; the parameters are its digest and a reference to the state
    folder (None: the runner's; never its path, `state_reference`), never content."""
    logger = get_run_logger()
    try:
        paths = state_at(state_ref)
        raw = read_spooled(paths, "situations", situation_ref, max_bytes=MAX_DOCUMENT_BYTES)
        situation = load_contract(ReplanSituation, raw)
        run = decide(situation, paths=paths, provider_kind=provider_kind, call=call_as_task)
    except StageFailed:
        raise
    except EvidenceError as error:
        raise StageFailed(error.reason_code) from None
    except Exception as error:
        raise StageFailed(type(error).__name__) from None
    decision = run.decision
    logger.info(
        "decision admitted=%s admission=%s verdict=%s results=%d",
        decision.admission.admitted,
        decision.admission.reason_code,
        decision.comparison.verdict,
        decision.receipt.result_count if decision.receipt else 0,
    )
    publish_decision_record(decision, agent_digest(situation.scope.agent_id))
    return run


def decide_with_prefect(
    raw_situation: bytes, *, paths: StatePaths, provider_kind: ProviderKind | None = None
) -> PipelineRun:
    """Validate, spool privately, and run the flow on the spool digest in this process, against
    the configured API, with the heartbeat thread off. Callers apply
    `flows.hardening.apply_prefect_environment` before this module is first imported."""
    load_contract(ReplanSituation, raw_situation)
    if get_current_settings().api.url is None:
        raise PrefectApiNotConfigured("set PREFECT_API_URL or start `obelisk-session-evidence ui`")
    reference = "sha256:" + hashlib.sha256(raw_situation).hexdigest()
    # The copy this run spools holds its query terms: it goes when the flow run ends. One that was
    # spooled before (a reference LoopX may still send) is kept.
    spooled_before = spooled_path(paths, "situations", reference).exists()
    spool_document(paths, "situations", raw_situation)
    try:
        # A sync flow's heartbeat thread is joined at exit and adds about a second per run.
        with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
            return replan_evidence(reference, provider_kind, state_reference(paths))
    finally:
        if not spooled_before:
            remove_spooled(paths, "situations", reference)
