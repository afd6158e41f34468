"""`run --provider obelisk` end to end through the real command line, over the stand-in."""

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from fixtures.obelisk_stand_in import StandIn
from fixtures.situations import situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.config import EnablementConfig
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.state.private_files import write_private
from tests.providers.obelisk.conftest import SPOTTER_ROOT, enablement_for

SCOPE = {"agent_id": "agent-1", "project_id": "proj-1", "repository_id": "repo-1"}


def _run(tmp_path: Path, stand_in: StandIn, command: str) -> tuple[dict, Path]:
    enablement = enablement_for(stand_in.home, roots=[SPOTTER_ROOT], sources=["claude"])
    enablement = enablement.model_copy(update={"obelisk_bin": str(stand_in.executable)})
    write_private(state_paths().config_file, EnablementConfig(enablements=[enablement]).model_dump_json().encode())
    path = tmp_path / "situation.json"
    path.write_text(json.dumps(situation(commands=[command], files=["assets/build.js"], scope=SCOPE)))
    private_out = tmp_path / "private.json"
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--situation",
            str(path),
            "--provider",
            "obelisk",
            "--format",
            "json",
            "--private-out",
            str(private_out),
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), private_out


def test_run_provider_obelisk_rejects_a_repeated_failure(
    tmp_path: Path, stand_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(stand_in.home))  # the HOME Obelisk runs with
    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    decision, private_out = _run(tmp_path, stand_in, "node assets/build.js 2>&1")
    assert decision["retrieval"]["reason_code"] == "retrieved"
    assert decision["receipt"]["provider_version"].endswith("obelisk-cli/0.2.3 template/3")
    assert decision["receipt"]["freshness"] == "fresh"
    assert decision["receipt"]["evidence_type_counts"]["prior_failure"] >= 1
    assert decision["comparison"]["verdict"] == "repeats_prior_failure"
    assert "Could not resolve" not in json.dumps(decision)
    assert "Could not resolve" in private_out.read_text()
    assert list((state_paths().root / "obelisk-queries").iterdir()) == []
