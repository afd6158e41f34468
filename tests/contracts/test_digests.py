import hashlib

from obelisk_session_evidence.contracts.digests import (
    canonical_digest,
    canonical_json,
    observation_fingerprint,
    salted_digest,
)
from obelisk_session_evidence.contracts.observations import TypedProgressObservation

GOLDEN_OBSERVATION = {
    "work_item_id": "todo-progress",
    "surface_id": "surface-auth",
    "hypothesis_id": "hypothesis-boundary",
    "probe_kind": "probe-route-map",
    "result_class": "unchanged",
    "evidence_ids": ["evidence-route-map"],
}


def test_observation_fingerprint_matches_loopx_golden():
    assert observation_fingerprint(GOLDEN_OBSERVATION) == "5bec67661e7edd9c"


def test_typed_observation_computed_fingerprint_matches_loopx_golden():
    observation = TypedProgressObservation.model_validate(GOLDEN_OBSERVATION)
    assert observation.computed_fingerprint() == "5bec67661e7edd9c"


def test_canonical_json_sorts_keys_and_keeps_non_ascii():
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


def test_canonical_digest_is_sha256_of_canonical_utf8():
    expected = hashlib.sha256('{"a":"é","b":[1,2]}'.encode()).hexdigest()
    assert canonical_digest({"b": [1, 2], "a": "é"}) == "sha256:" + expected


def test_salted_digest_depends_on_salt():
    assert salted_digest(["pytest -x"], salt="a") != salted_digest(["pytest -x"], salt="b")
    assert salted_digest(["pytest -x"], salt="a") != canonical_digest(["pytest -x"])
