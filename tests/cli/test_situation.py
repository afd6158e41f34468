"""`situation spool`: a valid situation in, the reference LoopX sends out; content never printed."""

import json

from click.testing import CliRunner

from fixtures.situations import situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.loopx.recall import spooled_situation
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.state.private_files import write_private
from tests.stages.helpers import enabled_policy

CANARY = "canary-heron-situation-8812"


def _document() -> str:
    return json.dumps(situation(hypothesis=f"the login route {CANARY}"))


def _enable_fixture_scope() -> None:
    write_private(state_paths().config_file, enabled_policy().config.model_dump_json().encode())


def test_spool_prints_a_reference_the_extension_resolves():
    _enable_fixture_scope()
    result = CliRunner().invoke(main, ["situation", "spool", "--situation", "-"], input=_document())
    assert result.exit_code == 0, result.stderr
    reference = result.stdout.strip()
    assert reference.startswith("replan-situation:sha256:") and CANARY not in result.stdout
    loaded, error = spooled_situation(state_paths(), reference, enabled_policy().config.enablements[0])
    assert error is None and loaded.proposed.route.hypothesis.endswith(CANARY)


def test_spool_json_names_the_reference_and_its_digest(tmp_path):
    _enable_fixture_scope()
    source = tmp_path / "situation.json"
    source.write_text(_document())
    result = CliRunner().invoke(main, ["situation", "spool", "--situation", str(source), "--format", "json"])
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert document["situation_ref"] == "replan-situation:" + document["digest"]
    assert CANARY not in result.stdout


def test_spool_refuses_a_situation_of_a_scope_that_is_not_enabled():
    """A spooled situation is bound to its enablement: without one there is nothing to bind it to."""
    result = CliRunner().invoke(main, ["situation", "spool", "--situation", "-"], input=_document())
    assert result.exit_code == 2 and result.stderr.startswith("error: scope_refused: not_enabled")
    assert CANARY not in result.stdout + result.stderr
    assert not (state_paths().spool_dir / "situations").exists()


def test_spool_rejects_an_invalid_situation_without_spooling_it():
    result = CliRunner().invoke(main, ["situation", "spool", "--situation", "-"], input='{"schema_version": 1}')
    assert result.exit_code == 2 and result.stderr.startswith("error: invalid_input")
    assert not (state_paths().spool_dir / "situations").exists()


def test_situation_help_has_an_example():
    for args in (["situation", "--help"], ["situation", "spool", "--help"]):
        assert "Example:" in CliRunner().invoke(main, args).stdout
