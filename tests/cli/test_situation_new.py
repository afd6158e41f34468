"""`situation new`: a valid replan_situation_v0 without LoopX, for the enabled scope, that `run`
decides as an operator's request for history; the schema's example is what it writes."""

import json
import stat

from click.testing import CliRunner
from jsonschema import Draft202012Validator

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.compose import use_provider_factory
from obelisk_session_evidence.contracts.schemas import json_schema
from obelisk_session_evidence.contracts.situation import EXAMPLE_SITUATION
from obelisk_session_evidence.state.paths import state_paths
from tests.batch import standin

ROUTE = ("--command", "pytest tests/test_auth.py -x", "--file", "tests/test_auth.py")
EXAMPLE_ROUTE = (*ROUTE, "--hypothesis", "the token refresh races the logout")
EXAMPLE_SCOPE = ("--agent-id", "codex-main", "--project-id", "my-project", "--repository-id", "my-repo")


def _invoke(*args, stdin=None):
    return CliRunner().invoke(main, list(args), input=stdin)


def test_the_situation_is_valid_and_run_decides_it_as_an_operator_request():
    standin.enable_fixture_scope(state_paths())
    standin.install()
    try:
        built = _invoke("situation", "new", *ROUTE)
        assert built.exit_code == 0, built.output
        document = json.loads(built.stdout)
        Draft202012Validator(json_schema("replan_situation_v0")).validate(document)
        assert document["scope"] == {
            "agent_id": standin.FIXTURE_AGENT,
            "project_id": standin.FIXTURE_PROJECT,
            "repository_id": standin.FIXTURE_REPOSITORY,
        }
        decided = _invoke("run", "--situation", "-", "--format", "json", stdin=built.stdout)
        assert decided.exit_code == 0, decided.output
        decision = json.loads(decided.stdout)
        assert decision["trigger"] == "operator_requested_history"
        assert decision["admission"]["reason_code"] == "admitted"
        assert decision["retrieval"]["reason_code"] == "retrieved"
    finally:
        use_provider_factory(None)


def test_the_schema_example_is_what_situation_new_writes():
    built = _invoke("situation", "new", *EXAMPLE_ROUTE, *EXAMPLE_SCOPE, "--situation-id", "manual-5f2c9e1a7b3d4c60")
    document = json.loads(built.stdout)
    (example,) = json_schema("replan_situation_v0")["examples"]
    assert example == EXAMPLE_SITUATION
    Draft202012Validator(json_schema("replan_situation_v0")).validate(example)
    del document["obligation"]["obligation_id"], example["obligation"]["obligation_id"]
    assert document == example


def test_out_writes_a_private_file_and_prints_no_route_text(tmp_path):
    target = tmp_path / "situation.json"
    canary = "SECRETRAWXYZ-manual"
    for output_format in ("json", "text"):
        written = _invoke(
            "situation",
            "new",
            "--command",
            f"make {canary}",
            *EXAMPLE_SCOPE,
            "--out",
            str(target),
            "--format",
            output_format,
        )
        assert written.exit_code == 0, written.output
        assert canary not in written.output
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        assert json.loads(target.read_bytes())["proposed"]["route"]["commands"] == [f"make {canary}"]
    Draft202012Validator(json_schema("obelisk_session_evidence_situation_written_v0")).validate(
        json.loads(_invoke("situation", "new", *ROUTE, *EXAMPLE_SCOPE, "--out", str(target), "--format", "json").stdout)
    )


def test_without_a_route_or_an_enabled_scope_it_refuses_with_the_reason():
    no_route = _invoke("situation", "new", *EXAMPLE_SCOPE)
    assert no_route.exit_code == 2 and "at least one --command" in no_route.stderr
    no_scope = _invoke("situation", "new", *ROUTE)
    assert no_scope.exit_code == 2 and "no enabled scope matches" in no_scope.stderr


def test_situation_spool_json_has_a_schema_version_and_matches_its_schema():
    """Only an enabled scope's situation is spooled (it is bound to that enablement), by `situation
    spool` and by `situation new --spool` alike; both print the same reference document."""
    standin.enable_fixture_scope(state_paths())
    built = _invoke("situation", "new", *ROUTE)
    assert built.exit_code == 0, built.output
    spooled = _invoke("situation", "spool", "--situation", "-", "--format", "json", stdin=built.stdout)
    assert spooled.exit_code == 0, spooled.output
    document = json.loads(spooled.stdout)
    assert document["schema_version"] == "obelisk_session_evidence_situation_spool_v0"
    Draft202012Validator(json_schema("obelisk_session_evidence_situation_spool_v0")).validate(document)
    assert document["situation_ref"] == "replan-situation:" + document["digest"]
    not_enabled = _invoke("situation", "new", *ROUTE, *EXAMPLE_SCOPE, "--spool", "--format", "json")
    assert not_enabled.exit_code == 2 and json.loads(not_enabled.stdout)["detail"] == "not_enabled"
    spooled_by_new = _invoke("situation", "new", *ROUTE, "--spool", "--format", "json")
    assert spooled_by_new.exit_code == 0, spooled_by_new.output
    Draft202012Validator(json_schema("obelisk_session_evidence_situation_spool_v0")).validate(
        json.loads(spooled_by_new.stdout)
    )
