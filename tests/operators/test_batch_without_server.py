"""`batch` with no PREFECT_API_URL: the flow runs against a temporary local API on the state
directory's Prefect database, and `ui` started afterwards on that state shows the runs.

Clients are CLI subprocesses with the stand-in provider and a clean environment (no PREFECT_*),
as a first try or a cron job would be.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from obelisk_session_evidence.batch.outputs import decisions_in
from obelisk_session_evidence.contracts.schemas import json_schema
from obelisk_session_evidence.flows.server import free_port, start_prefect_server, stop_prefect_server
from obelisk_session_evidence.state.paths import StatePaths
from tests.batch import standin
from tests.operators.rest import PrefectRest
from tests.privacy import canary_places_in_database, canary_places_in_files
from tests.reliability.processes import process_alive

pytestmark = pytest.mark.prefect
ROOT = Path(__file__).resolve().parents[2]
ITEMS = 12
"""Admitted items; with the other agent's, the crashing and the invalid one, 15 (the last invalid)."""
STARTED = re.compile(
    r"^temporary Prefect API started in (\d+\.\d) s \(no PREFECT_API_URL\); these runs stay in (\S+), "
)


def _clean_env(state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "OBELISK_"))}
    env.update(OBELISK_SESSION_EVIDENCE_HOME=str(state), PYTHONPATH=str(ROOT))
    return env


def _batch(state: Path, items: Path, out: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.operators.cli_with_standin",
            "batch",
            "--in",
            str(items),
            "--out",
            str(out),
            "--format",
            "json",
            *options,
        ],
        cwd=ROOT,
        env=_clean_env(state),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def serverless(tmp_path_factory):
    """One batch with no API configured, the same batch with --no-prefect, then `ui`'s server
    started on the same state directory (stopped at the end)."""
    work = tmp_path_factory.mktemp("serverless")
    state = Path(tempfile.mkdtemp(prefix="ose-serverless-state-"))
    standin.enable_fixture_scope(StatePaths(state))
    items = work / "stalled.jsonl"
    standin.write_jsonl(items, standin.stalled_items(ITEMS))  # enough task runs to outrun a busy server
    flowed = _batch(state, items, work / "flow")
    direct = _batch(state, items, work / "direct", "--no-prefect")
    server = start_prefect_server(StatePaths(state), port=free_port(), environ=_clean_env(state))
    try:
        yield {
            "flowed": flowed,
            "direct": direct,
            "work": work,
            "state": state,
            "api": PrefectRest(server.address.api_url),
        }
    finally:
        stop_prefect_server(server.process)


def test_batch_without_a_server_says_once_that_a_temporary_api_started(serverless):
    flowed = serverless["flowed"]
    assert flowed.returncode == 2, flowed.stderr[-2000:]  # the invalid item fails
    lines = flowed.stderr.splitlines()
    assert len(lines) == 1, flowed.stderr[-2000:]
    started = STARTED.match(lines[0])
    assert started is not None, lines[0]
    assert started.group(2) == str(serverless["state"] / "prefect")
    print(f"temporary API start-up: {started.group(1)} s")


def test_decisions_are_the_same_with_and_without_prefect(serverless):
    flowed, direct = json.loads(serverless["flowed"].stdout), json.loads(serverless["direct"].stdout)
    for summary in (flowed, direct):
        Draft202012Validator(json_schema("reprocess_stalled_summary_v0")).validate(summary)
    fields = ("items", "decided", "failed", "by_verdict", "by_retrieval", "failures_by_reason")
    assert {f: flowed[f] for f in fields} == {f: direct[f] for f in fields}
    assert decisions_in(serverless["work"] / "flow") == decisions_in(serverless["work"] / "direct")
    assert serverless["direct"].stderr == ""


def test_the_runs_are_visible_in_ui_afterwards_with_a_failed_state_and_named_items(serverless):
    api = serverless["api"]
    summary = json.loads(serverless["flowed"].stdout)
    run = api.latest_flow_run("reprocess-stalled")
    assert (run["name"], run["state_type"]) == (
        f"reprocess-stalled/stalled.jsonl/15 items/{summary['manifest_ref'][7:19]}",
        "FAILED",
    )
    assert run["state"]["message"] == "1 of 15 items failed (invalid_input 1); 14 decided"
    tasks = {task["name"]: task for task in api.task_runs(run["id"])}
    assert tasks["item-15/invalid-1"]["state_type"] == "FAILED"
    assert tasks["item-15/invalid-1"]["state"]["message"] == (
        "item at line 15 failed: invalid_input (<root>: unknown field (1))"
    )
    assert sum(name.startswith("item-") for name in tasks) == 15
    assert api.logs(run["id"]), "the run's logs reached the database before the temporary API stopped"


def test_every_task_run_the_flow_started_is_recorded_in_its_final_state(serverless):
    """The temporary API stops only once the server has written what the flow sent: no task run
    left Running, the summary task recorded, the state messages of failed items there."""
    api = serverless["api"]
    run = api.latest_flow_run("reprocess-stalled")
    tasks = api.task_runs(run["id"])
    summary = json.loads(serverless["flowed"].stdout)
    assert sorted(task["name"] for task in tasks if not task["name"].startswith("item-")) == [
        "plan-batch",
        "summarize-batch",
    ]
    assert len(tasks) == summary["processed_this_run"] + 2
    assert {
        task["name"]: task["state_type"] for task in tasks if task["state_type"] not in ("COMPLETED", "FAILED")
    } == {}
    flush_markers = api.post("/events/filter", {"filter": {"event": {"name": ["obelisk.records-flushed"]}}})
    assert len(flush_markers["events"]) == 1, "the marker sent after every other event reached the database"


def test_no_canary_in_the_database_the_temporary_api_wrote(serverless):
    api = serverless["api"]
    api.read_everything()
    assert not api.holds(standin.CANARY)
    prefect_home = serverless["state"] / "prefect"
    assert canary_places_in_database(standin.CANARY, prefect_home / "prefect.db") == []
    assert canary_places_in_files(standin.CANARY, prefect_home, serverless["work"] / "flow") == []


def _api_servers(pid: int) -> list[int]:
    """The children of `pid` that run Prefect's API app (through the parent-death watch)."""
    try:
        children = [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    servers = []
    for child in children:
        try:
            if b"prefect.server.api.server:create_app" in Path(f"/proc/{child}/cmdline").read_bytes():
                servers.append(child)
        except OSError:
            continue
    return servers


@pytest.mark.reliability
def test_a_sigkilled_batch_leaves_no_temporary_api_behind(tmp_path):
    state = Path(tempfile.mkdtemp(prefix="ose-killed-state-"))
    standin.enable_fixture_scope(StatePaths(state))
    items = tmp_path / "stalled.jsonl"
    standin.write_jsonl(items, standin.stalled_items(2))
    command = [sys.executable, "-m", "tests.operators.cli_with_standin", "batch", "--in", str(items)]
    batch = subprocess.Popen(
        [*command, "--out", str(tmp_path / "out"), "--format", "json"],
        cwd=ROOT,
        env=_clean_env(state),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while not (servers := _api_servers(batch.pid)) and batch.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert servers, "the batch started no temporary API"
    batch.kill()
    batch.wait()
    deadline = time.monotonic() + 120
    while any(process_alive(pid) for pid in servers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(process_alive(pid) for pid in servers), "the temporary API outlived its SIGKILLed batch"
