"""The flow end to end under one Prefect test server, and the canary scan of everything it stored."""

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY, situation
from obelisk_session_evidence.contracts.config import Enablement, EnablementConfig
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.flows.replan_evidence import decide_with_prefect
from obelisk_session_evidence.state.paths import StatePaths, state_paths
from obelisk_session_evidence.state.private_files import write_private
from obelisk_session_evidence.state.spool import held_count, spool_document, spooled_path
from tests.batch import standin
from tests.privacy import (
    canary_places_in_database,
    canary_places_in_files,
    drain_prefect_workers,
    prefect_database_path,
)

pytestmark = pytest.mark.prefect
CANARY = "SECRETRAWXYZ-flow"


def _canary_situation() -> bytes:
    """Every free-text field of a situation carries the canary (ids are public by contract)."""
    document = situation(
        commands=[f"pytest {CANARY} -x", f"echo {CANARY}"],
        files=[f"src/{CANARY}.py"],
        hypothesis=f"the {CANARY} boundary",
        blocker=f"{CANARY} blocks",
    )
    return json.dumps(document).encode()


def _scan(canary: str) -> list[str]:
    drain_prefect_workers()
    database = prefect_database_path()
    prefect_home = Path(os.environ["PREFECT_HOME"])
    return canary_places_in_database(canary, database) + canary_places_in_files(canary, database.parent, prefect_home)


def test_flow_not_admitted_matches_direct_pipeline(prefect_harness):
    output = decide_with_prefect(_canary_situation(), paths=state_paths())
    assert output.decision.admission.reason_code == "not_enabled"
    assert output.private_result is None


def test_flow_removes_the_copy_it_spooled_and_keeps_one_spooled_before(prefect_harness):
    """`run --prefect` spools the situation for its flow run only: its query terms go when it ends."""
    raw = _canary_situation()
    decide_with_prefect(raw, paths=state_paths())
    assert held_count(state_paths(), "situations") == 0
    reference = spool_document(state_paths(), "situations", raw)  # a reference LoopX may still send
    decide_with_prefect(raw, paths=state_paths())
    assert spooled_path(state_paths(), "situations", reference).is_file()


def test_flow_admitted_provider_absent_fails_open(prefect_harness):
    standin.enable_fixture_scope(state_paths(), provider="obelisk", obelisk_bin="/nonexistent/obelisk")
    output = decide_with_prefect(_canary_situation(), paths=state_paths())
    assert output.decision.admission.admitted
    assert output.decision.retrieval.reason_code == "provider_unavailable"
    assert output.decision.receipt.freshness == "unknown"
    assert output.decision.comparison.verdict == "novelty_unverified"


def test_flow_leaves_no_canary_in_prefect_storage(prefect_harness):
    standin.enable_fixture_scope(state_paths(), provider="obelisk", obelisk_bin="/nonexistent/obelisk")
    decide_with_prefect(_canary_situation(), paths=state_paths())
    assert _scan(CANARY) == []


def test_canary_scan_negative_control_finds_a_logged_canary(prefect_harness):
    from prefect import flow, get_run_logger

    leaked = "SECRETRAWXYZ-control"

    @flow(name="canary-control", persist_result=False)
    def leaky() -> None:
        get_run_logger().info("leak %s", leaked)

    leaky()
    assert "table:log" in _scan(leaked)


def test_flow_decides_under_a_state_folder_other_than_the_environments(prefect_harness, tmp_path):
    """The flow reads the spool of the state folder it is given, not the environment's, and the
    folder's path never becomes a flow parameter (Prefect stores those)."""
    from prefect.settings import PREFECT_API_URL

    from tests.operators.rest import PrefectRest

    other = StatePaths(tmp_path / "SECRETRAWXYZ-state-path")
    output = decide_with_prefect(_canary_situation(), paths=other)
    assert output.decision.admission.reason_code == "not_enabled"
    assert not state_paths().spool_dir.exists()
    drain_prefect_workers()
    run = PrefectRest(PREFECT_API_URL.value()).latest_flow_run("replan-evidence")
    assert run["parameters"]["state_ref"].startswith("state-")
    assert "SECRETRAWXYZ-state-path" not in json.dumps(run)
    assert _scan("SECRETRAWXYZ-state-path") == []


@pytest.mark.parametrize("situation_id", ["flow-equals-direct-1", "flow-equals-direct-2", "crash-flow-equals-direct"])
def test_flow_and_direct_call_give_the_same_decision(prefect_harness, situation_id):
    """One pipeline: the Prefect flow and `decide` answer alike (the stand-in answers both, and
    crashes for `crash-` situations, which both turn into the same typed empty result)."""
    from obelisk_session_evidence.compose import decide, use_provider_factory

    paths = state_paths()
    standin.enable_fixture_scope(paths)
    raw = json.dumps(standin.canary_situation(situation_id)).encode()
    direct = decide(load_contract(ReplanSituation, raw), paths=paths, provider_factory=standin.factory())
    standin.install()
    try:
        flowed = decide_with_prefect(raw, paths=paths)
    finally:
        use_provider_factory(None)
    assert flowed.decision == direct.decision
    assert flowed.private_result == direct.private_result
    assert flowed.values.capped.prior_calls == direct.values.capped.prior_calls


def test_flow_with_native_prior_calls_leaves_no_canary_in_prefect_storage(prefect_harness, tmp_path):
    """Prior calls (command, output, cwd, files) carry a canary through the native provider; none reaches Prefect."""
    from tests.providers.native.index.transcripts import ClaudeTranscript

    secret = "SECRETRAWXYZ-prior-call"
    root = tmp_path / "claude"
    session = ClaudeTranscript(root, "s1", f"/work/alpha/{secret}")
    session.bash(f"pytest tests/test_auth.py -x --tag {secret}", f"FAILED {secret}", exit_code=1)
    session.call("Read", {"file_path": f"/work/alpha/{secret}.py"}, secret)
    session.write()
    _enable_native(root)
    document = situation(commands=["pytest tests/test_auth.py -x"], files=[f"{secret}.py"])
    output = decide_with_prefect(json.dumps(document).encode(), paths=state_paths())
    assert output.decision.retrieval.reason_code == "retrieved"
    assert output.decision.receipt.result_count > 0
    assert secret not in output.decision.model_dump_json()
    assert _scan(secret) == []


def test_flow_naming_a_failure_and_its_successor_leaves_no_canary_in_prefect_storage(prefect_harness, tmp_path):
    """The verdict's basis (the failure it rests on, what worked after it) travels between the
    flow's tasks as opaque refs: the private result names them, the receipt counts them, and
    nothing of the calls behind them reaches Prefect."""
    from tests.providers.native.index.transcripts import ClaudeTranscript

    secret = "SECRETRAWXYZ-successor"
    root = tmp_path / "claude"
    session = ClaudeTranscript(root, "s1", "/work/alpha")
    session.bash(f"pytest tests/test_{secret}.py", "(eval):1: command not found: pytest", exit_code=127)
    session.bash(f"uv run pytest tests/test_{secret}.py", f"tests/test_{secret}.py .\n1 passed in 0.02s")
    session.write()
    _enable_native(root)
    document = situation(commands=[f"pytest tests/test_{secret}.py"])
    output = decide_with_prefect(json.dumps(document).encode(), paths=state_paths())
    assert output.decision.comparison.verdict == "repeats_prior_failure"
    assert (output.decision.receipt.verdict_items, output.decision.receipt.successor_items) == (1, 1)
    assert len(output.private_result.verdict_basis.successors) == 1
    assert secret not in output.decision.model_dump_json()
    assert _scan(secret) == []


def _enable_native(root: Path) -> None:
    """Enable the fixture scope on the native provider over the Claude sessions under `root`."""
    config = EnablementConfig(
        enablements=[
            Enablement(
                surface="replan-history",
                agent_id=FIXTURE_AGENT,
                project_id=FIXTURE_PROJECT,
                repository_id=FIXTURE_REPOSITORY,
                provider="native",
                repo_roots=["/work/alpha"],
                sources=["claude"],
                source_roots={"claude": str(root)},
                enabled_at=datetime(2026, 11, 29, tzinfo=UTC),
            )
        ]
    )
    write_private(state_paths().config_file, config.model_dump_json().encode())
