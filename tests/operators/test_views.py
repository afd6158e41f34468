"""The operator views (tags, tables, markdown) and the server environment, without a server."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from obelisk_session_evidence.batch.manifest import spool_batch
from obelisk_session_evidence.batch.run import report_batch, run_batch_directly
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.compose import decide
from obelisk_session_evidence.contracts.digests import agent_digest
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.flows.hardening import apply_prefect_environment
from obelisk_session_evidence.flows.operators import (
    MAX_AGENT_TAGS,
    batch_failure_message,
    batch_item_rows,
    batch_run_name,
    batch_tags,
    decision_run_name,
    decision_table,
    decision_tags,
    item_failure_message,
    merged_tags,
    summary_markdown,
)
from obelisk_session_evidence.flows.server import ServerAddress, database_kind, server_environment
from obelisk_session_evidence.state.paths import StatePaths
from tests.batch import standin

ROOT = Path(__file__).resolve().parents[2]


def _decision(paths, situation_id="view-1"):
    raw = json.dumps(standin.canary_situation(situation_id)).encode()
    return decide(load_contract(ReplanSituation, raw), paths=paths, provider_factory=standin.factory()).decision


def test_agent_digest_is_eight_hex_of_sha256():
    assert agent_digest("agent-fixture") == "037082b8"
    assert agent_digest(None) is None


def test_decision_tags_name_trigger_verdict_and_agent(enabled):
    assert decision_tags(_decision(enabled), "037082b8") == [
        "trigger:replan_repetition",
        "verdict:novel",
        "agent:037082b8",
    ]


def test_decision_table_holds_codes_counts_and_digests_only(enabled):
    rows = {row["field"]: row["value"] for row in decision_table(_decision(enabled))}
    assert list(rows)[:5] == ["situation", "trigger", "admission code", "retrieval code", "verdict"]
    assert rows["evidence type counts"] == "prior_failure 2"
    assert rows["truncation"] == "false (omitted 0)"
    assert rows["prior call revisions"] == "ancestor 0, not ancestor 0, unchecked 0, unrecorded 1"
    assert rows["verdict basis"] == "rests on 0 items, 0 successors"
    assert standin.CANARY not in json.dumps(rows)


def test_batch_views_hold_no_canary_and_cap_agent_tags(enabled, tmp_path):
    manifest_ref = spool_batch(enabled, standin.stalled_items(), out_dir=tmp_path / "out")
    run_batch_directly(enabled, manifest_ref, provider_factory=standin.factory())
    report = report_batch(enabled, manifest_ref)
    rows = batch_item_rows(report.records)
    markdown = summary_markdown(report.summary)
    assert len(rows) == 7 and {row["status"] for row in rows} == {"decided", "invalid_input"}
    assert "| `invalid_input` | 1 |" in markdown and "| `provider_crashed` | 1 |" in markdown
    assert standin.CANARY not in json.dumps(rows) + markdown
    tags = batch_tags(report.summary, report.summary.by_agent)
    assert tags[0] == "batch" and "agent:037082b8" in tags
    many = [f"{n:08x}" for n in range(MAX_AGENT_TAGS + 1)]
    assert batch_tags(report.summary, many)[-1] == "agent:many"


def test_merged_tags_keep_existing_first_once():
    assert merged_tags(["deployment", "batch"], ["batch", "verdict:novel"]) == [
        "deployment",
        "batch",
        "verdict:novel",
    ]


def test_server_environment_points_the_ui_at_its_port_and_drops_a_client_api_url(tmp_path):
    environ = {"PREFECT_API_URL": "http://127.0.0.1:4200/api", "PATH": "/bin"}
    env = server_environment(StatePaths(tmp_path), ServerAddress(4250), environ)
    assert "PREFECT_API_URL" not in env
    assert (env["PREFECT_SERVER_API_HOST"], env["PREFECT_SERVER_API_PORT"]) == ("127.0.0.1", "4250")
    assert env["PREFECT_HOME"] == str(tmp_path / "prefect")
    assert env["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false" and env["DO_NOT_TRACK"] == "1"
    assert env["PREFECT_UI_STATIC_DIRECTORY"].startswith(str(tmp_path / "prefect"))


def test_ui_and_clients_share_a_user_set_prefect_home(tmp_path, monkeypatch):
    user_home = tmp_path / "my-prefect"
    monkeypatch.setenv("PREFECT_HOME", str(user_home))
    monkeypatch.delenv("PREFECT_RESULTS_LOCAL_STORAGE_PATH")
    paths = StatePaths(tmp_path / "state")
    env = server_environment(paths, ServerAddress(4250))
    assert env["PREFECT_HOME"] == str(user_home)
    assert env["PREFECT_UI_STATIC_DIRECTORY"].startswith(str(user_home))
    apply_prefect_environment(paths)
    assert os.environ["PREFECT_HOME"] == str(user_home)
    assert os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"].startswith(str(user_home))


@pytest.mark.parametrize(
    ("environ", "kind"),
    [
        ({}, "sqlite"),
        ({"PREFECT_API_DATABASE_CONNECTION_URL": "postgresql+asyncpg://u:pw@127.0.0.1/prefect"}, "postgresql"),
        ({"PREFECT_SERVER_DATABASE_CONNECTION_URL": "sqlite+aiosqlite:////tmp/p.db"}, "sqlite"),
    ],
)
def test_database_kind_never_echoes_the_url(environ, kind):
    assert database_kind(environ) == kind


def test_ui_refuses_a_port_in_use():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        result = CliRunner().invoke(main, ["ui", "--port", str(port)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: prefect_server_failed: port {port} on 127.0.0.1 is already in use; pick another --port\n"
    )


def test_batch_spool_only_prints_the_manifest_digest(paths, tmp_path):
    source = tmp_path / "stalled.jsonl"
    standin.write_jsonl(source, standin.stalled_items())
    result = CliRunner().invoke(main, ["batch", "--in", str(source), "--out", str(tmp_path / "out"), "--spool-only"])
    assert result.exit_code == 0
    assert result.stdout.startswith("sha256:") and len(result.stdout.strip()) == 71
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (["--dask-address", "tcp://127.0.0.1:8786"], "error: invalid_input: --dask-address needs --task-runner dask\n"),
        (
            ["--no-prefect", "--task-runner", "dask"],
            "error: invalid_input: --no-prefect runs in this process: --task-runner dask needs Prefect\n",
        ),
    ],
)
def test_batch_rejects_inconsistent_options(tmp_path, args, stderr):
    source = tmp_path / "stalled.jsonl"
    standin.write_jsonl(source, standin.stalled_items(1))
    result = CliRunner().invoke(main, ["batch", "--in", str(source), "--out", str(tmp_path / "out"), *args])
    assert (result.exit_code, result.stderr) == (2, stderr)


def test_batch_empty_input_exits_2(tmp_path):
    source = tmp_path / "stalled.jsonl"
    source.write_text("\n")
    result = CliRunner().invoke(main, ["batch", "--in", str(source), "--out", str(tmp_path / "out")])
    assert (result.exit_code, result.stderr) == (2, "error: invalid_input: the batch input holds no items\n")


def test_run_names_and_state_messages_are_content_free_goldens(enabled, tmp_path):
    manifest_ref = spool_batch(enabled, standin.stalled_items(2), out_dir=tmp_path / "out")
    summary = run_batch_directly(enabled, manifest_ref, provider_factory=standin.factory())
    records = report_batch(enabled, manifest_ref).records
    [failed] = [record for record in records if record.status == "failed"]
    assert item_failure_message(failed) == "item at line 5 failed: invalid_input (<root>: unknown field (1))"
    assert batch_failure_message(summary) == "1 of 5 items failed (invalid_input 1); 4 decided"
    assert batch_run_name(manifest_ref) == f"reprocess-stalled/{manifest_ref[7:19]}"
    assert batch_run_name(manifest_ref, name="stalled.jsonl", items=5) == (
        f"reprocess-stalled/stalled.jsonl/5 items/{manifest_ref[7:19]}"
    )
    assert decision_run_name("stalled-0") == "replan-evidence/stalled-0"
    assert decision_run_name(None) == "replan-evidence/invalid"
    assert standin.CANARY not in item_failure_message(failed) + batch_failure_message(summary)


def test_batch_no_prefect_decides_without_importing_prefect(tmp_path):
    source = tmp_path / "stalled.jsonl"
    source.write_text(json.dumps(standin.canary_situation("plain-1")) + "\n")
    script = (
        "import sys\n"
        "from obelisk_session_evidence.cli import main\n"
        "try:\n    main()\n"
        "except SystemExit as done:\n"
        "    assert 'prefect' not in sys.modules, 'prefect was imported'\n"
        "    raise\n"
    )
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            "batch",
            "--in",
            str(source),
            "--out",
            str(tmp_path / "out"),
            "--no-prefect",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["decided"] == 1
    assert completed.stderr == ""
