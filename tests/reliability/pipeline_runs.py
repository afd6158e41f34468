"""Running the full pipeline under test: timed, optionally memory-traced, crashes counted.

A run goes through `stages.pipeline.run_pipeline` exactly as the cold path does; only the
provider is chosen by the test (the native index or the Obelisk adapter over the stand-in).
"""

import gc
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any

import pytest

from obelisk_session_evidence.contracts.config import AdmissionPolicy
from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.base import EvidenceProvider
from obelisk_session_evidence.stages.cap_by_tokens import TokenEncoder
from obelisk_session_evidence.stages.pipeline import (
    PipelineDependencies,
    Stage,
    StageValues,
    call_directly,
    run_pipeline,
)
from tests.reliability.figures import FIGURES

DIGEST_SALT = "reliability-salt"


@dataclass(frozen=True)
class MeasuredRun:
    """One run's public decision, its private stage values, and what it cost."""

    decision: ReplanEvidenceDecision
    values: StageValues
    seconds: float
    peak_bytes: int | None
    """Peak traced Python allocation during the run (None when not traced)."""

    @property
    def items(self) -> list[Any]:
        """The capped (private) items that would reach the Turn."""
        capped = self.values.capped.result
        return [] if capped is None else list(capped.items)

    def public_outputs(self, prefix: str = "") -> dict[str, str]:
        """Everything of this run that is public: the decision and its receipt, as JSON."""
        receipt = self.decision.receipt
        return {
            f"{prefix}decision": self.decision.model_dump_json(),
            f"{prefix}receipt": receipt.model_dump_json() if receipt is not None else "null",
        }


def run_pipeline_measured(
    situation: ReplanSituation,
    *,
    provider: EvidenceProvider | None,
    policy: AdmissionPolicy,
    encoder: TokenEncoder,
    trace_memory: bool = False,
) -> MeasuredRun:
    """Run every stage; an exception escaping the pipeline is counted as a crash and fails the test."""
    dependencies = PipelineDependencies(
        policy=policy,
        provider=provider,
        encoder=encoder,
        thresholds=RouteThresholds(),
        digest_salt=DIGEST_SALT,
    )
    peak = None
    reached: list[str] = []

    def call(stage: Stage, args: list[Any], options: dict[str, Any]) -> Any:
        reached.append(stage.name)
        return call_directly(stage, args, options)

    if trace_memory:
        gc.collect()
        tracemalloc.start()
    started = time.monotonic()
    try:
        run = run_pipeline(situation, dependencies, call=call)
    except Exception as error:
        FIGURES.crashes += 1
        pytest.fail(f"the pipeline raised {type(error).__name__} in stage {reached[-1]}", pytrace=False)
    finally:
        seconds = time.monotonic() - started
        if trace_memory:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    return MeasuredRun(decision=run.decision, values=run.values, seconds=seconds, peak_bytes=peak)
