"""Fingerprints: ours equal LoopX's `normalize_progress_observation` on every observation."""

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixtures.conformance_cases import RESULT_CLASSES, ConformanceCase
from obelisk_session_evidence.contracts.observations import MAX_EVIDENCE_IDS, TypedProgressObservation
from tests.conformance.conftest import LOOPX_VERSION, LoopxAnswers, installed_loopx_version, require

pytestmark = pytest.mark.conformance

GOLDEN = {
    "work_item_id": "todo-progress",
    "surface_id": "surface-auth",
    "hypothesis_id": "hypothesis-boundary",
    "probe_kind": "probe-route-map",
    "result_class": "unchanged",
    "evidence_ids": ["evidence-route-map"],
}
GOLDEN_FINGERPRINT = "5bec67661e7edd9c"
ID_FIELDS = ("work_item_id", "surface_id", "hypothesis_id", "probe_kind", "blocker_id", "coverage_scope_id")

_FIRST = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
opaque_ids = st.builds(
    lambda first, rest: first + rest,
    st.sampled_from(_FIRST),
    st.text(alphabet=_FIRST + "._:/-", max_size=127),
)
"""Every string LoopX's identifier pattern admits: `^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$`."""


@st.composite
def observation_documents(draw: st.DrawFn) -> dict[str, Any]:
    """Observations with any subset of ids, evidence (repeats and order included), coverage."""
    document: dict[str, Any] = {"result_class": draw(st.sampled_from(RESULT_CLASSES))}
    if draw(st.booleans()):
        document["schema_version"] = "typed_progress_observation_v0"
    for field in ID_FIELDS:
        if draw(st.booleans()):
            document[field] = draw(opaque_ids)
    unique = draw(st.lists(opaque_ids, max_size=MAX_EVIDENCE_IDS, unique=True))
    evidence = unique + draw(st.lists(st.sampled_from(unique), max_size=4)) if unique else []
    if evidence or draw(st.booleans()):
        document["evidence_ids"] = draw(st.permutations(evidence))
    coverage = draw(st.sampled_from((None, True, False, "absent")))
    if coverage != "absent":
        document["coverage_complete"] = coverage
    attributable = {*ID_FIELDS, "coverage_complete"} & {k for k, v in document.items() if v is not None}
    if not attributable and not evidence:
        document["work_item_id"] = draw(opaque_ids)
    return document


@pytest.fixture(scope="session")
def normalize_progress_observation():
    """LoopX's own normaliser (pure Python; needs loopx, not Node)."""
    require(
        installed_loopx_version() == LOOPX_VERSION,
        f"loopx=={LOOPX_VERSION} is not installed (pip install -e '.[conformance]')",
    )
    from loopx.control_plane.work_items.progress_observation import (
        normalize_progress_observation,
    )

    return normalize_progress_observation


def test_normalize_progress_observation_golden_fingerprint(normalize_progress_observation) -> None:
    assert normalize_progress_observation(GOLDEN)["fingerprint"] == GOLDEN_FINGERPRINT
    assert TypedProgressObservation.model_validate(GOLDEN).computed_fingerprint() == GOLDEN_FINGERPRINT


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=observation_documents())
def test_computed_fingerprint_equals_loopx_on_generated_observations(
    normalize_progress_observation, document: dict[str, Any]
) -> None:
    theirs = normalize_progress_observation(document)
    ours = TypedProgressObservation.model_validate(document)
    assert ours.computed_fingerprint() == theirs["fingerprint"]
    assert ours.evidence_ids == theirs.get("evidence_ids", [])
    # LoopX's normalised form validates as ours, fingerprint included.
    assert TypedProgressObservation.model_validate(theirs).fingerprint == theirs["fingerprint"]


def test_computed_fingerprint_equals_loopx_on_every_case_document(
    normalize_progress_observation, generated_cases: list[ConformanceCase]
) -> None:
    checked = 0
    for case in generated_cases:
        for document in _observations_in(case):
            ours = TypedProgressObservation.model_validate(document).computed_fingerprint()
            assert ours == normalize_progress_observation(document)["fingerprint"], case.label
            checked += 1
    assert checked > len(generated_cases)


def test_delta_fingerprint_equals_loopx_runtime(loopx_answers: LoopxAnswers) -> None:
    for case, theirs in zip(loopx_answers.cases, loopx_answers.answers, strict=False):
        if "error" not in theirs:
            ours = TypedProgressObservation.model_validate(case.observation).computed_fingerprint()
            assert ours == theirs["observation_fingerprint"], case.label


def _observations_in(case: ConformanceCase) -> list[dict[str, Any]]:
    obligation = case.obligation
    found = [case.observation]
    for holder in (obligation, *obligation.get("triggers", [])):
        if "progress_baseline" in holder:
            found.append(holder["progress_baseline"])
        found.extend(holder.get("progress_window") or [])
    return found
