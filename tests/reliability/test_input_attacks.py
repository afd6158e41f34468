"""Attacks 9 (input side): an unknown key made of private text is never echoed; `enable` without
any repository root, or with `/` or the home folder as a root, is refused."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fixtures.situations import situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.config import EnablementConfig
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.state.private_files import write_private
from tests.reliability.attack_stands import CANARY

IDS = (
    "--surface",
    "replan-history",
    "--agent-id",
    "agent-fixture",
    "--project-id",
    "project-fixture",
    "--repository-id",
    "repo-fixture",
)


def _invoke(*args, stdin=None):
    return CliRunner().invoke(main, list(args), input=stdin)


@pytest.mark.parametrize("where", ["root", "nested"])
def test_unknown_key_of_private_text_is_not_echoed_by_run(where):
    document = situation()
    if where == "root":
        document[f"{CANARY} password=hunter2"] = 1
    else:
        document["obligation"][f"{CANARY} password=hunter2"] = 1
    result = _invoke("run", "--situation", "-", stdin=json.dumps(document))
    assert result.exit_code == 2
    path = "<root>" if where == "root" else "obligation"
    assert result.stderr == f"error: invalid_input: {path}: unknown field (1)\n"
    assert CANARY not in result.output


def test_unknown_key_of_private_text_in_config_json_is_not_echoed_by_status():
    document = json.loads(EnablementConfig().model_dump_json())
    document[CANARY] = True
    write_private(state_paths().config_file, json.dumps(document).encode())
    result = _invoke("status", "--project-id", "project-fixture", "--format", "json")
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert report["reason_code"] == "config_invalid"
    assert report["config_detail"].startswith("config.json: <root>: unknown field")
    assert CANARY not in result.output


def test_a_mapping_key_of_private_text_is_not_echoed():
    document = json.loads(EnablementConfig().model_dump_json())
    document["enablements"] = [
        {
            "surface": "replan-history",
            "agent_id": "a",
            "project_id": "p",
            "repository_id": "r",
            "repo_roots": ["/src/r"],
            "source_roots": {CANARY: "/x"},
            "enabled_at": "2026-11-29T00:00:00Z",
        }
    ]
    write_private(state_paths().config_file, json.dumps(document).encode())
    result = _invoke("status", "--project-id", "p", "--format", "json")
    assert CANARY not in result.output
    assert "enablements.0.source_roots.<key>:" in json.loads(result.stdout)["config_detail"]


def test_enable_without_any_repository_root_is_refused():
    result = _invoke("enable", *IDS)
    assert result.exit_code == 2
    assert result.stderr == (
        "error: invalid_input: --repo-root or --historical-repo-root is required: a scope names its repository\n"
    )
    assert not state_paths().config_file.exists()


@pytest.mark.parametrize(
    ("option", "value", "label"),
    [
        ("--repo-root", "/", "--repo-root #1"),
        ("--repo-root", "HOME", "--repo-root #1"),
        ("--source-root", "claude=/", "--source-root #1"),
        ("--source-root", "claude=HOME", "--source-root #1"),
        ("--source-root", "claude=/usr/..", "--source-root #1"),
    ],
)
def test_enable_refuses_the_file_system_root_and_the_home_folder(tmp_path, option, value, label):
    value = value.replace("HOME", str(Path.home()))
    repo = tmp_path / "repo"
    repo.mkdir()
    roots = () if option == "--repo-root" else ("--repo-root", str(repo))
    result = _invoke("enable", *IDS, *roots, option, value)
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: invalid_input: {label} is / or the home folder; name the repository or session folder\n"
    )
    assert not state_paths().config_file.exists()
