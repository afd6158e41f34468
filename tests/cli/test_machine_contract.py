"""Under `--format json` stdout holds exactly one JSON document whatever happens (a usage error,
an error after the decision), every JSON output has a schema_version and a published schema,
and a reader that closes stdout early is not an internal fault (exit 141, nothing on stderr)."""

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from jsonschema import Draft202012Validator

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.compose import use_provider_factory
from obelisk_session_evidence.contracts.schemas import json_schema
from obelisk_session_evidence.contracts.situation import EXAMPLE_SITUATION
from obelisk_session_evidence.state.paths import state_paths
from tests.batch import standin

ROOT = Path(__file__).resolve().parents[2]
CANARY = "SECRETRAWXYZ-usage"


def _invoke(*args, stdin=None):
    return CliRunner().invoke(main, list(args), input=stdin)


def _one_document(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert len(lines) == 1, f"{len(lines)} documents on stdout"
    return json.loads(lines[0])


def test_a_usage_error_under_format_json_is_one_error_document_naming_the_option_not_the_value():
    for args in (
        ("enable", "--format", "json", "--surface", CANARY),
        ("run", "--format=json", "--no-such-option"),
        ("status", "--format", "json"),  # --project-id missing
    ):
        result = _invoke(*args)
        assert result.exit_code == 2, result.output
        error = _one_document(result.stdout)
        Draft202012Validator(json_schema("obelisk_session_evidence_error_v0")).validate(error)
        assert error["reason_code"] == "invalid_input" and error["detail"].startswith("usage: ")
        assert CANARY not in result.stdout
    assert "--surface" in _invoke("enable", "--format", "json", "--surface", CANARY).stdout


def test_an_error_after_the_decision_leaves_the_decision_as_the_only_document(tmp_path):
    standin.enable_fixture_scope(state_paths())
    standin.install()
    try:
        document = {
            **EXAMPLE_SITUATION,
            "scope": {
                "agent_id": standin.FIXTURE_AGENT,
                "project_id": standin.FIXTURE_PROJECT,
                "repository_id": standin.FIXTURE_REPOSITORY,
            },
        }
        link = tmp_path / "private.json"
        link.symlink_to(tmp_path / "elsewhere.json")  # refused after the decision is printed
        result = _invoke(
            "run", "--situation", "-", "--format", "json", "--private-out", str(link), stdin=json.dumps(document)
        )
    finally:
        use_provider_factory(None)
    assert result.exit_code == 2, result.output
    decision = _one_document(result.stdout)
    assert decision["schema_version"] == "replan_evidence_decision_v0", result.output
    assert "private_target_refused" in result.stderr


def test_schema_format_json_prints_what_it_wrote(tmp_path):
    out = tmp_path / "schemas"
    result = _invoke("schema", "--out", str(out), "--format", "json")
    assert result.exit_code == 0, result.output
    document = _one_document(result.stdout)
    Draft202012Validator(json_schema("obelisk_session_evidence_schema_v0")).validate(document)
    assert {f"{name}.schema.json" for name in document["written"]} == {path.name for path in out.iterdir()}


def test_a_closed_stdout_exits_141_with_nothing_on_stderr():
    for output_format in ("json", "text"):
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "obelisk_session_evidence",
                "status",
                "--project-id",
                "p",
                "--format",
                output_format,
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        process.stdout.close()  # the reader is gone before the first line
        stderr = process.stderr.read()
        assert (process.wait(timeout=120), stderr) == (141, b"")
