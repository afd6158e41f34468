"""The `qualify` flow: the Stage 0 qualification as three thin tasks.

Parameters are a folder path, a seed and a backend name; no case content crosses into Prefect.
Tasks neither persist nor cache, names are static, and a failure is re-raised as a content-free
`StageFailed`.
"""

from pathlib import Path
from typing import Any, Literal

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from contracts.errors import EvidenceError, StageFailed
from fixtures.qualification import qualification_cases
from obelisk_session_evidence.qualify import (
    ArmResults,
    QualificationSummary,
    calibrated_thresholds,
    decided_with,
    run_arms,
    write_report,
)
from obelisk_session_evidence.state import state_paths
from obelisk_session_evidence.tokenizer import load_encoder

PRIVATE_TASK_OPTIONS: dict[str, Any] = {"persist_result": False, "cache_policy": NO_CACHE, "log_prints": False}
BackendName = Literal["native", "standin"]


@task(name="run-arms", task_run_name="run-arms", **PRIVATE_TASK_OPTIONS)
def run_arms_task(out_dir: str, seed: int, backend: BackendName, per_family: int | None) -> ArmResults:
    """Every case through the three arms."""
    encoder = load_encoder(state_paths().cache_dir / "tiktoken")
    cases = qualification_cases(seed=seed, per_family=per_family)
    return run_arms(cases, backend=backend, encoder=encoder, workdir=Path(out_dir) / "native-histories")


@task(name="calibrate", task_run_name="calibrate", **PRIVATE_TASK_OPTIONS)
def calibrate_task(results: ArmResults) -> ArmResults:
    """Thresholds from the training split; both retrieval arms re-decided with them."""
    return decided_with(results, calibrated_thresholds(results))


@task(name="write-report", task_run_name="write-report", **PRIVATE_TASK_OPTIONS)
def write_report_task(out_dir: str, results: ArmResults, seed: int, backend: BackendName) -> QualificationSummary:
    """`report.md`, plots and `results.json`."""
    return write_report(Path(out_dir), results, seed=seed, backend=backend)


@flow(name="qualify", flow_run_name="qualify", persist_result=False, log_prints=False, validate_parameters=True)
def qualify_flow(
    out_dir: str, seed: int = 0, backend: BackendName = "native", per_family: int | None = None
) -> QualificationSummary:
    """Run the qualification into `out_dir`; `per_family` samples the cases for a smoke run."""
    try:
        results = run_arms_task(out_dir, seed, backend, per_family)
        return write_report_task(out_dir, calibrate_task(results), seed, backend)
    except EvidenceError as error:
        raise StageFailed(error.reason_code) from None
    except Exception as error:  # noqa: BLE001 - never let a raw message reach Prefect's state
        raise StageFailed(type(error).__name__) from None
