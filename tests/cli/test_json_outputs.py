"""Every `--format json` output validates against its published schema, on real command output.

Outputs that need a Prefect server (`ui`, `serve`, batch through the flow) are checked the same
way in tests/operators; `enable`, `status`, `disable` and `index` in their own test modules.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.compose import use_provider_factory
from obelisk_session_evidence.contracts.schemas import json_schema
from obelisk_session_evidence.state.paths import state_paths
from tests.batch import standin

SCHEMAS = Path(__file__).resolve().parents[2] / "contracts" / "schemas"


def _invoke(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, list(args), input=stdin)


def _valid(document: object, contract: str) -> None:
    """Against the generated schema and the committed copy `schema` publishes."""
    committed = json.loads((SCHEMAS / f"{contract}.schema.json").read_text())
    assert committed == json_schema(contract)
    Draft202012Validator(committed).validate(document)


@pytest.fixture
def standin_scope():
    standin.enable_fixture_scope(state_paths())
    standin.install()
    yield
    use_provider_factory(None)


def test_batch_summary_and_every_item_record_match_their_schemas(standin_scope, tmp_path):
    items = tmp_path / "stalled.jsonl"
    standin.write_jsonl(items, standin.stalled_items(2))
    result = _invoke("batch", "--in", str(items), "--out", str(tmp_path / "out"), "--no-prefect", "--format", "json")
    assert result.exit_code == 2  # the invalid item fails
    summary = json.loads(result.stdout)
    _valid(summary, "reprocess_stalled_summary_v0")
    _valid(json.loads((tmp_path / "out" / "summary.json").read_text()), "reprocess_stalled_summary_v0")
    records = sorted((tmp_path / "out" / "records").glob("*.json"))
    assert len(records) == summary["items"] == 5
    for record in records:
        _valid(json.loads(record.read_text()), "reprocess_stalled_item_v0")


def test_batch_spool_only_json_matches_its_schema(tmp_path):
    items = tmp_path / "stalled.jsonl"
    standin.write_jsonl(items, standin.stalled_items(1) * 2)
    result = _invoke("batch", "--in", str(items), "--out", str(tmp_path / "out"), "--spool-only", "--format", "json")
    assert result.exit_code == 0, result.output
    spooled = json.loads(result.stdout)
    _valid(spooled, "reprocess_stalled_spool_v0")
    assert (spooled["items"], spooled["input_count"]) == (4, 8)


def test_qualify_json_matches_its_schema_and_names_every_target(tmp_path):
    result = _invoke(
        "qualify", "--out", str(tmp_path / "q"), "--backend", "standin", "--per-family", "1", "--format", "json"
    )
    assert result.exit_code in (0, 2), result.output
    summary = json.loads(result.stdout)
    _valid(summary, "obelisk_session_evidence_qualify_v0")
    names = [t["name"] for t in summary["targets"]]
    assert names[:4] == ["precision", "recall", "false_repeat_rate", "tokens_p95"]
    assert names[4:] in ([], ["real_precision", "real_recall", "real_traps"])  # when the real set ran
    assert summary["targets_met"] == all(t["met"] for t in summary["targets"]) == (result.exit_code == 0)


@pytest.mark.parametrize(
    ("args", "stdin", "code", "exit_code"),
    [
        (("run", "--situation", "-"), '{"situation_id": 1}', "invalid_input", 2),
        (("run", "--situation", "/nonexistent/situation.json"), None, "invalid_input", 2),
        (("status", "--project-id", "bad id"), None, "invalid_input", 2),
        (("index", "drop"), None, "invalid_input", 2),
    ],
)
def test_every_error_under_format_json_is_a_typed_envelope_on_stdout(args, stdin, code, exit_code):
    result = _invoke(*args, "--format", "json", stdin=stdin)
    envelope = json.loads(result.stdout)
    _valid(envelope, "obelisk_session_evidence_error_v0")
    assert (result.exit_code, envelope["reason_code"], envelope["exit_code"], envelope["ok"]) == (
        exit_code,
        code,
        exit_code,
        False,
    )
    assert result.stderr == f"error: {code}: {envelope['detail']}\n"


def test_an_internal_fault_envelope_names_the_type_only():
    from obelisk_session_evidence.cli.common import error_envelope
    from obelisk_session_evidence.contracts.error_envelope import ErrorEnvelope

    envelope = error_envelope(KeyError(standin.CANARY), 1)
    _valid(json.loads(envelope.model_dump_json()), "obelisk_session_evidence_error_v0")
    assert envelope == ErrorEnvelope(reason_code="internal_error", detail="KeyError", exit_code=1)


def test_a_stage_failure_envelope_names_the_stage_and_cause():
    from obelisk_session_evidence.cli.common import error_envelope
    from obelisk_session_evidence.contracts.errors import StageFailed

    envelope = error_envelope(StageFailed.at("compare-route", "stage_crashed"), 1)
    _valid(json.loads(envelope.model_dump_json()), "obelisk_session_evidence_error_v0")
    assert (envelope.reason_code, envelope.stage, envelope.cause) == ("stage_failed", "compare-route", "stage_crashed")
