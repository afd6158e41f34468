"""The one ordered pipeline. The direct cold path and the Prefect flow both run this list."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

from obelisk_session_evidence.contracts.config import AdmissionPolicy
from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision
from obelisk_session_evidence.contracts.errors import EvidenceError, StageFailed
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceReceipt, HistoricalEvidenceResult
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.stage_values import (
    Admission,
    CappedEvidence,
    GapAssessment,
    Retrieval,
    RouteComparison,
)
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.base import EvidenceProvider
from obelisk_session_evidence.stages.admit import admit
from obelisk_session_evidence.stages.cap_by_tokens import TokenEncoder, cap_by_tokens
from obelisk_session_evidence.stages.classify_gap import classify_gap
from obelisk_session_evidence.stages.compare_route import compare_route
from obelisk_session_evidence.stages.decision import decision
from obelisk_session_evidence.stages.receipt import receipt
from obelisk_session_evidence.stages.retrieve import retrieve


@dataclass(frozen=True, slots=True)
class Stage:
    """One step: its task name, its function, the values it reads and the one it produces."""

    name: str
    function: Callable[..., Any]
    inputs: tuple[str, ...]
    output: str
    options: tuple[str, ...] = ()


PIPELINE: tuple[Stage, ...] = (
    Stage("classify-gap", classify_gap, ("situation",), "gap"),
    Stage("admit", admit, ("situation", "gap"), "admission", ("policy",)),
    Stage("retrieve", retrieve, ("admission",), "retrieval", ("provider",)),
    Stage("cap-by-tokens", cap_by_tokens, ("admission", "retrieval"), "capped", ("encoder",)),
    Stage("compare-route", compare_route, ("situation", "gap", "capped"), "comparison", ("thresholds",)),
    Stage("receipt", receipt, ("admission", "capped", "comparison"), "receipt", ("digest_salt",)),
    Stage(
        "decision",
        decision,
        ("situation", "admission", "retrieval", "comparison", "receipt"),
        "decision",
    ),
)


@dataclass(frozen=True, slots=True)
class PipelineDependencies:
    """Everything a stage may touch besides its inputs: injected, never looked up."""

    policy: AdmissionPolicy
    provider: EvidenceProvider | None
    encoder: TokenEncoder
    thresholds: RouteThresholds
    digest_salt: str


@dataclass(frozen=True, slots=True)
class StageValues:
    """Every value the stages produced, named as `PIPELINE` names them. Private: in memory only."""

    situation: ReplanSituation
    gap: GapAssessment
    admission: Admission
    retrieval: Retrieval
    capped: CappedEvidence
    comparison: RouteComparison
    receipt: HistoricalEvidenceReceipt | None
    decision: ReplanEvidenceDecision


@dataclass(frozen=True, slots=True)
class PipelineRun:
    """One run of the pipeline: the public decision, the private result, and every stage value."""

    values: StageValues

    @property
    def decision(self) -> ReplanEvidenceDecision:
        """The public `replan_evidence_decision_v0` (codes, numbers and digests only)."""
        return self.values.decision

    @property
    def private_result(self) -> HistoricalEvidenceResult | None:
        """The capped private result for the admitted Turn, naming what the verdict rests on and
        what worked after it; None when nothing was looked up."""
        result = self.values.capped.result
        if result is None:
            return None
        # Always compare-route's: a basis a provider put in its answer never passes for the verdict's.
        return result.model_copy(update={"verdict_basis": self.values.comparison.verdict_basis})


STAGE_VALUE_NAMES = frozenset(field.name for field in fields(StageValues))


@contextmanager
def stage_errors(stage: Stage) -> Iterator[None]:
    """The one boundary every runner puts around a stage: a fault becomes a `StageFailed` that
    names the stage and a reason code, never the original message (it may carry content)."""
    try:
        yield
    except StageFailed:
        raise
    except EvidenceError as error:
        raise StageFailed.at(stage.name, error.reason_code) from None
    except Exception:
        raise StageFailed.at(stage.name, "stage_crashed") from None


StageCall = Callable[[Stage, list[Any], dict[str, Any]], Any]


def call_directly(stage: Stage, args: list[Any], options: dict[str, Any]) -> Any:
    """Run a stage as a plain function call (the cold path)."""
    with stage_errors(stage):
        return stage.function(*args, **options)


def run_pipeline(
    situation: ReplanSituation,
    dependencies: PipelineDependencies,
    *,
    call: StageCall = call_directly,
) -> PipelineRun:
    """Run every stage in order; a failing stage raises `StageFailed`."""
    values: dict[str, Any] = {"situation": situation}
    for stage in PIPELINE:
        args = [values[name] for name in stage.inputs]
        options = {name: getattr(dependencies, name) for name in stage.options}
        values[stage.output] = call(stage, args, options)
    return PipelineRun(StageValues(**values))
