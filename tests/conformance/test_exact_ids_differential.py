"""Differential: our exact-id step equals LoopX's `semantic_delta_from_writeback` exactly."""

import itertools
import time
from collections import Counter
from typing import Any

import pytest

from fixtures.conformance_cases import (
    CORE_OUTCOME_SETS,
    EVIDENCE_STATES,
    EXTRA_FAMILIES,
    ID_STATES,
    JUDGED_IDS,
    RESULT_CLASSES,
    ConformanceCase,
)
from obelisk_session_evidence.comparators.exact_ids import exact_id_delta
from obelisk_session_evidence.contracts.decision import SemanticDelta
from obelisk_session_evidence.contracts.observations import TypedProgressObservation
from obelisk_session_evidence.contracts.situation import Obligation
from tests.conformance.conftest import LoopxAnswers, record_timing

pytestmark = pytest.mark.conformance

COMPARED_FIELDS = (
    "accepted",
    "outcomes",
    "satisfying_outcomes",
    "required_any_of",
    "observation_fingerprint",
    "obligation_id",
)
MINIMUM_CASES = 1000
SHOWN_MISMATCHES = 8


@pytest.fixture(scope="session")
def our_deltas(loopx_answers: LoopxAnswers) -> list[SemanticDelta]:
    """Our exact-id delta for every generated case, in case order."""
    started = time.monotonic()
    deltas = [
        exact_id_delta(
            Obligation.model_validate(case.obligation),
            TypedProgressObservation.model_validate(case.observation),
        )
        for case in loopx_answers.cases
    ]
    record_timing("exact_id_seconds", time.monotonic() - started)
    return deltas


def _mismatch(ours: SemanticDelta, theirs: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Compared fields that differ, as (ours, LoopX's); empty when equal."""
    if "error" in theirs:
        # LoopX refuses the input outright: ours must refuse it too, never accept.
        if ours.accepted or ours.outcomes or ours.reason_code != "acceptance_hold_widened":
            return {"refusal": (ours.model_dump(), theirs["message"])}
        return {}
    differing = {
        field: (getattr(ours, field), theirs.get(field))
        for field in COMPARED_FIELDS
        if getattr(ours, field) != theirs.get(field)
    }
    # LoopX names a refusal only sometimes; when it does, ours names the same one.
    if "reason_code" in theirs and theirs["reason_code"] != ours.reason_code:
        differing["reason_code"] = (ours.reason_code, theirs["reason_code"])
    return differing


@pytest.mark.parametrize("family", [*CORE_OUTCOME_SETS, *EXTRA_FAMILIES])
def test_exact_id_delta_equals_loopx(family: str, loopx_answers: LoopxAnswers, our_deltas: list[SemanticDelta]) -> None:
    mismatches = [
        (case.label, differing)
        for case, ours, theirs in zip(loopx_answers.cases, our_deltas, loopx_answers.answers, strict=False)
        if case.coordinates["family"] == family and (differing := _mismatch(ours, theirs))
    ]
    checked = sum(case.coordinates["family"] == family for case in loopx_answers.cases)
    assert checked > 0
    assert not mismatches, f"{len(mismatches)} of {checked} {family} cases differ from LoopX; first: " + "\n".join(
        f"{label}: {differing}" for label, differing in mismatches[:SHOWN_MISMATCHES]
    )


def test_loopx_refuses_only_widened_acceptance_holds(loopx_answers: LoopxAnswers) -> None:
    refused = Counter(
        case.coordinates["family"]
        for case, theirs in zip(loopx_answers.cases, loopx_answers.answers, strict=False)
        if "error" in theirs
    )
    assert set(refused) <= {"acceptance_hold"}
    assert all(
        "acceptance recovery cannot widen" in theirs["message"] for theirs in loopx_answers.answers if "error" in theirs
    )


def test_generated_cases_cover_every_class_outcome_set_and_combination(
    generated_cases: list[ConformanceCase],
) -> None:
    assert len(generated_cases) >= MINIMUM_CASES
    seen = {
        (c.coordinates["family"], c.coordinates["result_class"], c.coordinates["evidence"])
        + tuple(c.coordinates[field] for field in JUDGED_IDS[c.coordinates["result_class"]])
        for c in generated_cases
    }
    for family in (*CORE_OUTCOME_SETS, *EXTRA_FAMILIES):
        for result_class in RESULT_CLASSES:
            width = len(JUDGED_IDS[result_class])
            for states in itertools.product(ID_STATES, repeat=width):
                for evidence in EVIDENCE_STATES:
                    assert (family, result_class, evidence, *states) in seen


def test_loopx_accepts_and_refuses_in_every_outcome_set(loopx_answers: LoopxAnswers) -> None:
    accepted: dict[str, Counter[bool]] = {}
    for case, theirs in zip(loopx_answers.cases, loopx_answers.answers, strict=False):
        family = case.coordinates["family"]
        accepted.setdefault(family, Counter())[bool(theirs.get("accepted"))] += 1
    for family, counts in accepted.items():
        assert counts[False], family
        # A typed observation never yields new_runnable_successor: only a Todo transition
        # settles a succession gap, so LoopX refuses every one of these writebacks.
        assert bool(counts[True]) == (family != "succession_gap"), family
