"""Smoke test of the operator server: `ui` up, a decision and a small batch through it, then
Prefect's REST API and database checked for runs, task names, tags, artifacts and no canary.

Clients run as CLI subprocesses (with the stand-in provider), as an operator's would: each has its
own Prefect settings, so nothing in this test process talks to the server but the REST reader.
"""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from jsonschema import Draft202012Validator

from obelisk_session_evidence.contracts.digests import agent_digest
from obelisk_session_evidence.contracts.schemas import json_schema
from tests.batch import standin
from tests.operators.rest import PrefectRest
from tests.privacy import canary_places_in_database, canary_places_in_files

pytestmark = pytest.mark.prefect
ROOT = Path(__file__).resolve().parents[2]
STAGES = ["admit", "cap-by-tokens", "classify-gap", "compare-route", "decision", "receipt", "retrieve"]
STOP_DEADLINE = 60
"""Seconds a served process may take to stop after SIGINT."""


def _cli(server, *args: str, standin_provider: bool = True) -> subprocess.CompletedProcess:
    entry = (
        ["-m", "tests.operators.cli_with_standin"]
        if standin_provider
        else ["-c", "from obelisk_session_evidence.cli import main; main()"]
    )
    return subprocess.run(
        [sys.executable, *entry, *args], cwd=ROOT, env=server.client_env(), capture_output=True, timeout=600
    )


@pytest.fixture(scope="module")
def smoke(operator_server, tmp_path_factory):
    """Enable the fixture scope, then run one decision and one small batch through the server."""
    from obelisk_session_evidence.state.paths import StatePaths

    work = tmp_path_factory.mktemp("smoke")
    standin.enable_fixture_scope(StatePaths(operator_server.state))
    situation = work / "situation.json"
    situation.write_text(json.dumps(standin.canary_situation("smoke-decision")))
    items = work / "stalled.jsonl"
    standin.write_jsonl(items, standin.stalled_items(3))
    out = work / "out"
    decision = _cli(operator_server, "run", "--prefect", "--situation", str(situation), "--format", "json")
    batch = _cli(operator_server, "batch", "--in", str(items), "--out", str(out), "--format", "json")
    return {"decision": decision, "batch": batch, "out": out, "server": operator_server}


def test_ui_binds_loopback_and_points_the_ui_at_its_own_port(operator_server):
    facts = operator_server.facts
    assert facts["url"].startswith("http://127.0.0.1:") and facts["url"] != "http://127.0.0.1:4200"
    assert facts["ui_api_url"] == facts["api_url"] == facts["url"] + "/api"
    assert facts["database"] == "sqlite"
    assert Path(facts["prefect_home"]) == operator_server.state / "prefect"
    assert (operator_server.state / "prefect" / "prefect.db").exists()
    settings = httpx.get(facts["url"] + "/ui-settings", timeout=10).json()
    assert settings["api_url"] == facts["api_url"]
    print(f"server ready in {facts['ready_seconds']} s (fixture {operator_server.started_in_s} s)")


def test_decision_run_is_visible_with_stage_tasks_tags_and_artifact(smoke):
    assert smoke["decision"].returncode == 0, smoke["decision"].stderr[-2000:]
    assert smoke["decision"].stderr == b""  # as quiet as batch: Prefect's lines are in the UI
    api = PrefectRest(smoke["server"].api_url)
    run = api.latest_flow_run("replan-evidence")
    assert (run["name"], run["state_type"]) == ("replan-evidence/smoke-decision", "COMPLETED")
    assert set(run["parameters"]) == {"situation_ref", "provider_kind", "state_ref"}
    assert run["parameters"]["state_ref"] is None  # the CLI's own state folder: no path is stored
    assert {"trigger:replan_repetition", "verdict:novel", f"agent:{agent_digest('agent-fixture')}"} <= set(run["tags"])
    assert sorted(task["name"] for task in api.task_runs(run["id"])) == STAGES
    assert [a["key"] for a in api.artifacts(run["id"])] == ["replan-evidence-decision"]


def test_batch_run_is_visible_with_item_tasks_tags_and_summary(smoke):
    batch = smoke["batch"]
    assert batch.returncode == 2, batch.stderr[-2000:]  # the invalid item fails; the rest decide
    summary = json.loads(batch.stdout)
    assert (summary["items"], summary["decided"], summary["failed"]) == (6, 5, 1)
    assert summary["failures_by_reason"] == {"invalid_input": 1}
    assert summary["provider_faults_by_reason"] == {"provider_crashed": 1}
    api = PrefectRest(smoke["server"].api_url)
    run = api.latest_flow_run("reprocess-stalled")
    assert (run["name"], run["state_type"]) == (
        f"reprocess-stalled/stalled.jsonl/6 items/{summary['manifest_ref'][7:19]}",
        "FAILED",
    )
    assert run["state"]["message"] == "1 of 6 items failed (invalid_input 1); 5 decided"
    assert run["parameters"] == {"manifest_ref": run["parameters"]["manifest_ref"], "state_ref": None}
    assert {"batch", "trigger:replan_repetition", "verdict:novel", "verdict:novelty_unverified"} <= set(run["tags"])
    names = sorted(task["name"] for task in api.task_runs(run["id"]))
    assert names == [
        "item-1/stalled-0",
        "item-2/stalled-1",
        "item-3/stalled-2",
        "item-4/other-agent",
        "item-5/crash-1",
        "item-6/invalid-1",
        "plan-batch",
        "summarize-batch",
    ]
    keys = sorted(a["key"] for a in api.artifacts(run["id"]))
    assert keys == ["reprocess-stalled-items", "reprocess-stalled-summary"]
    assert len(list((smoke["out"] / "decisions").glob("*.json"))) == 5


def test_serve_registers_both_deployments_on_a_work_pool(operator_server):
    api = PrefectRest(operator_server.api_url)
    api.post("work_pools/", {"name": "smoke-pool", "type": "process"})
    served = _cli(operator_server, "serve", "--work-pool", "smoke-pool", "--format", "json", standin_provider=False)
    assert served.returncode == 0, served.stderr[-2000:]
    assert json.loads(served.stdout)["deployments"] == [
        "replan-evidence/obelisk-session-evidence",
        "reprocess-stalled/obelisk-session-evidence",
    ]
    deployments = api.post("deployments/filter", {"work_pools": {"name": {"any_": ["smoke-pool"]}}})
    assert sorted(d["name"] for d in deployments) == ["obelisk-session-evidence"] * 2
    assert all(d["parameter_openapi_schema"]["required"] for d in deployments)


def test_run_prefect_verbose_shows_prefects_own_lines(smoke, tmp_path):
    situation = tmp_path / "situation.json"
    situation.write_text(json.dumps(standin.canary_situation("smoke-verbose")))
    verbose = _cli(smoke["server"], "run", "--prefect", "--verbose", "--situation", str(situation), "--format", "json")
    assert verbose.returncode == 0, verbose.stderr[-2000:]
    assert b"Finished in state Completed()" in verbose.stderr
    assert standin.CANARY.encode() not in verbose.stderr


def test_ui_and_serve_json_match_their_schemas(operator_server):
    Draft202012Validator(json_schema("obelisk_session_evidence_ui_v0")).validate(operator_server.facts)


def test_serve_without_a_work_pool_serves_both_deployments_in_process(operator_server, tmp_path):
    api = PrefectRest(operator_server.api_url)
    items = tmp_path / "stalled.jsonl"
    other_agent = {"agent_id": "agent-served", "project_id": "project-served", "repository_id": "repo-served"}
    items.write_text(json.dumps(standin.canary_situation("served-1", scope=other_agent)) + "\n")
    spooled = _cli(
        operator_server,
        "batch",
        "--in",
        str(items),
        "--out",
        str(tmp_path / "out"),
        "--spool-only",
        standin_provider=False,
    )
    manifest_ref = spooled.stdout.decode().strip()
    # Files, not pipes: the served runs inherit them and write their logs there; an undrained pipe
    # that fills blocks the server (it then never stops).
    out, err = tmp_path / "serve.stdout", tmp_path / "serve.stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from obelisk_session_evidence.cli import main; main()",
                "serve",
                "--limit",
                "1",
                "--format",
                "json",
            ],
            cwd=ROOT,
            env={**operator_server.client_env(), "PYTHONFAULTHANDLER": "1"},  # a hang shows its stacks
            stdout=stdout,
            stderr=stderr,
            # Ctrl-C as at a terminal: a suite started in the background (`make test &`) hands its
            # children SIGINT ignored, and a served process rightly keeps ignoring it then.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    try:
        line = _first_line(out, process, deadline=time.monotonic() + 180)
        assert line, err.read_text(errors="replace")[-2000:] if process.poll() is not None else "no output"
        announced = json.loads(line)
        Draft202012Validator(json_schema("obelisk_session_evidence_serve_v0")).validate(announced)
        assert (announced["work_pool"], announced["ids"]) == (None, None)
        [deployment] = api.post(
            "deployments/filter",
            {
                "flows": {"name": {"any_": ["reprocess-stalled"]}},
                "deployments": {"name": {"any_": ["obelisk-session-evidence"]}},
            },
        )
        created = api.post(
            f"deployments/{deployment['id']}/create_flow_run", {"parameters": {"manifest_ref": manifest_ref}}
        )
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            run = api.get(f"flow_runs/{created['id']}")
            if run["state_type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
                break
            time.sleep(0.25)
        if run["state_type"] != "COMPLETED":
            process.send_signal(signal.SIGINT)
            process.wait(timeout=STOP_DEADLINE)
            pytest.fail(f"{run['state']['message']}: {out.read_text()[-3000:]!r} {err.read_text()[-3000:]!r}")
        assert run["name"] == f"reprocess-stalled/stalled.jsonl/1 item/{manifest_ref[7:19]}"
        assert json.loads((tmp_path / "out" / "summary.json").read_text())["decided"] == 1
    finally:
        process.send_signal(signal.SIGINT)
        try:
            stopped = process.wait(timeout=STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # the fault handler writes every thread's stack to `err`
            try:
                process.wait(timeout=STOP_DEADLINE)
            finally:
                process.kill()
            pytest.fail(f"serve did not stop on SIGINT: {err.read_text(errors='replace')[-6000:]}")
        assert stopped == 0, err.read_text(errors="replace")[-3000:]


def _first_line(path: Path, process: subprocess.Popen[bytes], *, deadline: float) -> str:
    """The first whole line the process wrote to `path`, polled until `deadline` or its exit."""
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace")
        if "\n" in text:
            return text.split("\n", 1)[0]
        if process.poll() is not None:
            return ""
        time.sleep(0.1)
    return ""


def test_no_canary_anywhere_in_the_api_database_or_public_outputs(smoke):
    server = smoke["server"]
    api = PrefectRest(server.api_url)
    api.read_everything()
    assert len(api.answers) > 20
    assert not api.holds(standin.CANARY)
    prefect_home = server.state / "prefect"
    assert canary_places_in_database(standin.CANARY, prefect_home / "prefect.db") == []
    assert canary_places_in_files(standin.CANARY, prefect_home, smoke["out"]) == []
    for result in (smoke["decision"], smoke["batch"]):
        assert standin.CANARY.encode() not in result.stdout + result.stderr
    # Control: the canary is in the private spool, where it belongs, and the scan sees it there.
    assert canary_places_in_files(standin.CANARY, server.state / "spool") != []
