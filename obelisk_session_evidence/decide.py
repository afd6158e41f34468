"""One decision for one situation, on the cold path (direct) or as the Prefect flow."""

from dataclasses import dataclass

from contracts.config import ProviderKind
from contracts.decision import ReplanEvidenceDecision
from contracts.evidence import HistoricalEvidenceResult
from contracts.json_input import load_contract
from contracts.situation import ReplanSituation
from obelisk_session_evidence.state import StatePaths, spool_situation
from obelisk_session_evidence.wiring import pipeline_dependencies
from stages.pipeline import run_pipeline


@dataclass(frozen=True, slots=True)
class DecisionOutput:
    """The public decision and the private capped result (None when not admitted)."""

    decision: ReplanEvidenceDecision
    private_result: HistoricalEvidenceResult | None


def decide(
    situation: ReplanSituation, *, paths: StatePaths, provider_kind: ProviderKind | None = None
) -> DecisionOutput:
    """Run the pipeline directly: no Prefect import, no server."""
    dependencies = pipeline_dependencies(paths, situation, provider_kind=provider_kind)
    decision, values = run_pipeline(situation, dependencies)
    return DecisionOutput(decision=decision, private_result=values["capped"].result)


def decide_with_prefect(
    raw_situation: bytes, *, paths: StatePaths, provider_kind: ProviderKind | None = None
) -> DecisionOutput:
    """Validate, spool privately, and run the `replan-evidence` flow on the spool digest only."""
    load_contract(ReplanSituation, raw_situation)
    reference = spool_situation(paths, raw_situation)
    from flows.hardening import apply_prefect_environment

    apply_prefect_environment(paths)
    from flows.replan_evidence import run_replan_evidence_flow

    return run_replan_evidence_flow(reference, provider_kind=provider_kind)
