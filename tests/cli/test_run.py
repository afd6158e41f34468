import json
import os
import stat
import subprocess
import sys
from datetime import UTC, datetime

from click.testing import CliRunner

from fixtures.situations import situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.config import Enablement, EnablementConfig
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.state.private_files import write_private

CANARY = "SECRETRAWXYZ-cli"


def _invoke(*args, stdin=None):
    return CliRunner().invoke(main, list(args), input=stdin)


def _situation_file(tmp_path, **kwargs):
    path = tmp_path / "situation.json"
    path.write_text(json.dumps(situation(**kwargs)))
    return str(path)


def test_run_prints_decision_json_when_not_enabled(tmp_path):
    result = _invoke("run", "--situation", _situation_file(tmp_path), "--format", "json")
    assert result.exit_code == 0
    decision = json.loads(result.stdout)
    assert decision["admission"] == {"admitted": False, "reason_code": "not_enabled"}
    assert decision["receipt"] is None


def test_run_reads_standard_input(tmp_path):
    result = _invoke("run", "--situation", "-", "--format", "json", stdin=json.dumps(situation()))
    assert result.exit_code == 0 and json.loads(result.stdout)["situation_id"] == "situation-1"


def test_run_invalid_input_is_one_line_naming_the_field(tmp_path):
    document = {**situation(), "surprise": CANARY}
    result = _invoke("run", "--situation", "-", stdin=json.dumps(document))
    assert result.exit_code == 2
    assert result.stderr == "error: invalid_input: <root>: unknown field (1)\n"
    assert CANARY not in result.output


def test_run_unreadable_file_exits_2(tmp_path):
    missing = tmp_path / "missing.json"
    result = _invoke("run", "--situation", str(missing))
    assert (result.exit_code, result.stderr) == (
        2,
        f"error: invalid_input: cannot read {missing}: No such file or directory\n",
    )


def test_run_text_format_is_readable(tmp_path):
    result = _invoke("run", "--situation", _situation_file(tmp_path))
    assert result.exit_code == 0 and "not admitted (not_enabled)" in result.stdout


def test_run_admitted_writes_private_result_0600_and_keeps_stdout_clean(tmp_path):
    config = EnablementConfig(
        enablements=[
            Enablement(
                surface="replan-history",
                agent_id="agent-fixture",
                project_id="project-fixture",
                repository_id="repo-fixture",
                provider="obelisk",
                obelisk_bin="/nonexistent/obelisk",
                enabled_at=datetime(2026, 11, 29, tzinfo=UTC),
            )
        ]
    )
    write_private(state_paths().config_file, config.model_dump_json().encode())
    private_out = tmp_path / "private.json"
    result = _invoke(
        "run",
        "--situation",
        _situation_file(tmp_path, commands=[f"pytest {CANARY}"], hypothesis=CANARY),
        "--format",
        "json",
        "--private-out",
        str(private_out),
    )
    assert result.exit_code == 0 and CANARY not in result.output
    decision = json.loads(result.stdout)
    assert decision["retrieval"]["reason_code"] == "provider_unavailable"
    assert stat.S_IMODE(private_out.stat().st_mode) == 0o600
    assert json.loads(private_out.read_text())["freshness"] == "unknown"


def test_run_prefect_without_api_is_a_typed_error(tmp_path):
    # A fresh process: the session's Prefect test server must not count as a configured API.
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PREFECT_API")}
    environment["PREFECT_HOME"] = str(tmp_path / "prefect-home")
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "obelisk_session_evidence",
            "run",
            "--situation",
            _situation_file(tmp_path),
            "--prefect",
        ],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert completed.returncode == 2
    assert completed.stderr.startswith("error: prefect_api_not_configured")


def test_schema_writes_every_public_contract(tmp_path):
    result = _invoke("schema", "--out", str(tmp_path))
    assert result.exit_code == 0
    assert (tmp_path / "replan_evidence_decision_v0.schema.json").exists()
    assert (tmp_path / "replan_situation_v0.schema.json").exists()
