"""What an operator sees of a `replan-evidence` run: static names, tags, a content-free table."""

import json
import os
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.digests import agent_digest
from obelisk_session_evidence.flows.replan_evidence import decide_with_prefect
from obelisk_session_evidence.state.paths import state_paths
from tests.batch import standin
from tests.operators.rest import PrefectRest
from tests.privacy import (
    canary_places_in_database,
    canary_places_in_files,
    drain_prefect_workers,
    prefect_database_path,
)

pytestmark = pytest.mark.prefect
STAGES = ["classify-gap", "admit", "retrieve", "cap-by-tokens", "compare-route", "receipt", "decision"]


def _api() -> PrefectRest:
    """The harness's REST API, once the client's queued events (task runs among them) are in."""
    from prefect.settings import PREFECT_API_URL

    drain_prefect_workers()
    return PrefectRest(PREFECT_API_URL.value())


def _decide(situation_id: str) -> None:
    raw = json.dumps(standin.canary_situation(situation_id)).encode()
    decide_with_prefect(raw, paths=state_paths())


def test_decision_run_is_named_by_its_situation_with_tags_and_one_table_artifact(
    prefect_harness, enabled, standin_backend
):
    _decide("operator-1")
    api = _api()
    run = api.latest_flow_run("replan-evidence")
    assert run["name"] == "replan-evidence/operator-1"
    assert set(run["tags"]) == {
        "trigger:replan_repetition",
        "verdict:novel",
        f"agent:{agent_digest('agent-fixture')}",
    }
    assert sorted(task["name"] for task in api.task_runs(run["id"])) == sorted(STAGES)
    [artifact] = api.artifacts(run["id"])
    assert (artifact["key"], artifact["type"]) == ("replan-evidence-decision", "table")
    rows = {row["field"]: row["value"] for row in json.loads(artifact["data"])}
    assert rows["admission code"] == "admitted" and rows["result count"] == "2"
    assert rows["provider version"] == "0.1.0 standin/1" and rows["freshness"] == "fresh"
    assert rows["result digest"].startswith("sha256:")


def test_provider_crash_run_is_tagged_and_leaves_no_canary(prefect_harness, enabled, standin_backend):
    _decide("crash-operator")
    api = _api()
    run = api.latest_flow_run("replan-evidence")
    assert run["state_type"] == "COMPLETED"
    assert "verdict:novelty_unverified" in run["tags"]
    database = prefect_database_path()
    assert canary_places_in_database(standin.CANARY, database) == []
    assert canary_places_in_files(standin.CANARY, database.parent, Path(os.environ["PREFECT_HOME"])) == []
