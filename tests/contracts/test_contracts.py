import json
from pathlib import Path

import pytest

from fixtures.situations import situation
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceReceipt, HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.schemas import PUBLIC_CONTRACTS, json_schema
from obelisk_session_evidence.contracts.situation import ReplanSituation

SCHEMA_DIR = Path(__file__).parents[2] / "contracts" / "schemas"

RECEIPT = {
    "schema_version": "historical_evidence_receipt_v0",
    "request_id": "req-1",
    "provider_id": "obelisk-session-evidence",
    "provider_version": "0.1.0 native-index/1",
    "index_revision_digest": "sha256:" + "0" * 64,
    "scope_digest": "sha256:" + "1" * 64,
    "query_digest": "sha256:" + "2" * 64,
    "result_digest": "sha256:" + "3" * 64,
    "result_count": 0,
    "evidence_type_counts": {},
    "freshness": "unknown",
    "truncated": False,
    "omitted_count": 0,
    "prior_call_revisions": {"ancestor": 1, "not_ancestor": 2, "unchecked": 3, "unrecorded": 4},
    "verdict_items": 2,
    "successor_items": 1,
    "grants_new_action_authority": False,
    "external_writes_performed": False,
    "raw_content_captured": False,
}


def _bytes(document: dict) -> bytes:
    return json.dumps(document).encode()


def test_load_contract_round_trips_situation():
    loaded = load_contract(ReplanSituation, _bytes(situation()))
    assert load_contract(ReplanSituation, loaded.model_dump_json().encode()) == loaded


def test_load_contract_round_trips_receipt():
    receipt = load_contract(HistoricalEvidenceReceipt, _bytes(RECEIPT))
    assert json.loads(receipt.model_dump_json()) == RECEIPT


def test_a_receipt_written_before_revisions_were_counted_still_loads():
    earlier = {name: value for name, value in RECEIPT.items() if name != "prior_call_revisions"}
    assert load_contract(HistoricalEvidenceReceipt, _bytes(earlier)).prior_call_revisions is None


def test_a_receipt_written_before_the_verdict_basis_was_counted_still_loads():
    earlier = {name: value for name, value in RECEIPT.items() if name not in ("verdict_items", "successor_items")}
    loaded = load_contract(HistoricalEvidenceReceipt, _bytes(earlier))
    assert (loaded.verdict_items, loaded.successor_items) == (None, None)


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({**situation(), "unexpected": 1}, "<root>: unknown field (1)"),
        ({**situation(), "schema_version": "replan_situation_v1"}, "schema_version: Input should be"),
        ({**situation(), "situation_id": "has spaces"}, "situation_id: String should match pattern"),
        ({**situation(), "operator_request": {"requested": "yes"}}, "operator_request.requested:"),
        (situation(commands=["x" * (64 * 1024 + 1)]), "proposed.route.commands.0: String should have at most"),
    ],
)
def test_load_contract_rejects_with_field_name(document, field):
    with pytest.raises(InvalidInput) as caught:
        load_contract(ReplanSituation, _bytes(document))
    assert str(caught.value).startswith("invalid_input: " + field)


@pytest.mark.parametrize(
    "literal", ["grants_new_action_authority", "external_writes_performed", "raw_content_captured"]
)
def test_load_contract_rejects_true_on_false_literals(literal):
    with pytest.raises(InvalidInput, match=literal):
        load_contract(HistoricalEvidenceReceipt, _bytes({**RECEIPT, literal: True}))


def test_load_contract_rejects_cross_agent_flag_in_request():
    request = {
        "request_id": "req-1",
        "situation_id": "s-1",
        "trigger": "replan_repetition",
        "scope": {"agent_id": "a", "project_id": "p", "repository_id": "r", "allow_cross_agent": True},
        "evidence_types": ["prior_failure"],
        "query_terms": ["pytest"],
        "limits": {"max_sessions": 1, "max_items": 1, "max_snippet_chars": 10, "max_total_chars": 10},
    }
    with pytest.raises(InvalidInput, match="scope.allow_cross_agent"):
        load_contract(HistoricalEvidenceRequest, _bytes(request))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"a": 1, "a": 2}', "duplicate key"),
        (b'{"a": NaN}', "NaN is not a JSON number"),
        (b'{"a": ', "not valid JSON"),
        (b"\xff\xfe", "not valid UTF-8"),
    ],
)
def test_load_contract_rejects_malformed_json(raw, message):
    with pytest.raises(InvalidInput, match=message):
        load_contract(ReplanSituation, raw)


def test_load_contract_error_never_echoes_the_value():
    canary = "CANARY-VALUE-9d2c"
    with pytest.raises(InvalidInput) as caught:
        load_contract(ReplanSituation, _bytes({**situation(), "situation_id": canary + " x"}))
    assert canary not in str(caught.value)


def test_observation_fingerprint_mismatch_is_rejected():
    document = situation()
    document["proposed"]["observation"]["fingerprint"] = "0" * 16
    with pytest.raises(InvalidInput, match="proposed.observation"):
        load_contract(ReplanSituation, _bytes(document))


@pytest.mark.parametrize("name", sorted(PUBLIC_CONTRACTS))
def test_json_schema_matches_committed_copy(name):
    committed = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())
    assert committed == json_schema(name), "run `obelisk-session-evidence schema --out contracts/schemas`"
