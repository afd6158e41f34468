"""The one ordered pipeline. The direct cold path and the Prefect flow both run this list."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contracts.config import AdmissionPolicy
from contracts.decision import ReplanEvidenceDecision
from contracts.situation import ReplanSituation
from contracts.thresholds import RouteThresholds
from providers.base import EvidenceProvider
from stages.admit import admit
from stages.cap_by_tokens import TokenEncoder, cap_by_tokens
from stages.classify_gap import classify_gap
from stages.compare_route import compare_route
from stages.decision import decision
from stages.receipt import receipt
from stages.retrieve import retrieve


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
    Stage(
        "compare-route", compare_route, ("situation", "gap", "capped"), "comparison", ("thresholds",)
    ),
    Stage("receipt", receipt, ("admission", "capped"), "receipt", ("digest_salt",)),
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


StageCall = Callable[[Stage, list[Any], dict[str, Any]], Any]


def call_directly(stage: Stage, args: list[Any], options: dict[str, Any]) -> Any:
    """Run a stage as a plain function call (the cold path)."""
    return stage.function(*args, **options)


def run_pipeline(
    situation: ReplanSituation,
    dependencies: PipelineDependencies,
    *,
    call: StageCall = call_directly,
) -> tuple[ReplanEvidenceDecision, dict[str, Any]]:
    """Run every stage in order; return the public decision and all stage values (private)."""
    values: dict[str, Any] = {"situation": situation}
    for stage in PIPELINE:
        args = [values[name] for name in stage.inputs]
        options = {name: getattr(dependencies, name) for name in stage.options}
        values[stage.output] = call(stage, args, options)
    return values["decision"], values
