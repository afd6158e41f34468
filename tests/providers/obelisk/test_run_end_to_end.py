"""`run --provider obelisk` end to end against the stand-in CLI, through the real command line."""

import json

from click.testing import CliRunner

from contracts.config import EnablementConfig
from fixtures.obelisk_stand_in import CANARY
from fixtures.situations import situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.state.private_files import write_private


def _run(tmp_path, enablement, stand_in, commands):
    config = EnablementConfig(
        enablements=[enablement.model_copy(update={"obelisk_bin": str(stand_in.executable)})]
    )
    write_private(state_paths().config_file, config.model_dump_json().encode())
    document = situation(
        commands=commands,
        files=["tests/unit/test_retry.py"],
        scope={"agent_id": "agent-1", "project_id": "proj-1", "repository_id": "repo-1"},
    )
    path = tmp_path / "situation.json"
    path.write_text(json.dumps(document))
    private_out = tmp_path / "private.json"
    result = CliRunner().invoke(
        main,
        ["run", "--situation", str(path), "--provider", "obelisk", "--format", "json",
         "--private-out", str(private_out)],
    )
    return result, private_out


def test_run_provider_obelisk_rejects_a_repeated_failure(tmp_path, enablement, stand_in):
    result, private_out = _run(tmp_path, enablement, stand_in, ["pytest -x tests/unit"])
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert decision["retrieval"]["reason_code"] == "retrieved"
    assert decision["receipt"]["provider_version"].startswith("0.1.0 obelisk-cli/")
    assert decision["receipt"]["result_count"] >= 1
    assert decision["comparison"]["verdict"] == "repeats_prior_failure"
    assert decision["semantic_delta"]["reason_code"] == "route_repeats_prior_failure"
    assert CANARY not in result.output
    assert CANARY in private_out.read_text()  # the private result carries the snippets, privately


def test_run_provider_obelisk_keeps_a_novel_route(tmp_path, enablement, stand_in):
    result, _ = _run(tmp_path, enablement, stand_in, ["ruff check src/retry.py"])
    decision = json.loads(result.stdout)
    assert result.exit_code == 0 and decision["retrieval"]["reason_code"] == "retrieved"
    assert decision["comparison"]["verdict"] in {"novel", "novelty_unverified"}
    assert decision["semantic_delta"]["outcomes"] == ["new_probe_family"]
