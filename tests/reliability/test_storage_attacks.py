"""Attack 8: a full disk or a read-only target. Every I/O error is one typed line (exit 2), never
a traceback or a path; the decision still reaches stdout when only --private-out failed; the
tokenizer cache is optional. The full and read-only disks are real tmpfs mounts under tmp_path."""

import json
import os
import shutil
import subprocess
import sys

from click.testing import CliRunner

from fixtures.situations import situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.tokenizer import load_encoder
from tests.reliability.attack_stands import (
    CANARY,
    admitted_config,
    fill,
    situation_file,
    small_tmpfs,
)
from tests.reliability.worlds import build_world, write_config


def _run(*args):
    return CliRunner().invoke(main, ["run", *args])


def test_private_out_on_a_full_disk_is_one_line_and_the_decision_is_printed(tmp_path):
    admitted_config()
    with small_tmpfs(tmp_path / "full", size="256k") as full:
        fill(full)
        result = _run(
            "--situation", situation_file(tmp_path), "--format", "json", "--private-out", str(full / "private.json")
        )
        left = sorted(os.listdir(full))
    assert result.exit_code == 2
    assert _decision_of(result)["admission"]["admitted"] is True
    assert result.stderr == "error: storage_failed: --private-out: ENOSPC (no space left on device)\n"
    assert left == ["filler"]  # no temp file left behind


def test_private_out_on_a_read_only_disk_is_one_line_and_the_decision_is_printed(tmp_path):
    admitted_config()
    with small_tmpfs(tmp_path / "ro", size="64k", read_only=True) as read_only:
        result = _run(
            "--situation",
            situation_file(tmp_path),
            "--format",
            "json",
            "--private-out",
            str(read_only / "private.json"),
        )
    assert result.exit_code == 2
    assert _decision_of(result)["admission"]["admitted"] is True
    assert result.stderr == "error: storage_failed: --private-out: EROFS (read-only file system)\n"


def test_enable_on_a_read_only_state_folder_is_one_typed_line(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    with small_tmpfs(tmp_path / "ro-state", size="64k", read_only=True) as state:
        monkeypatch.setenv("OBELISK_SESSION_EVIDENCE_HOME", str(state))
        result = CliRunner().invoke(
            main,
            [
                "enable",
                "--surface",
                "replan-history",
                "--agent-id",
                "a",
                "--project-id",
                "p",
                "--repository-id",
                "r",
                "--repo-root",
                str(repo),
            ],
        )
    assert result.exit_code == 2
    assert result.stderr == "error: storage_failed: local storage: EROFS (read-only file system)\n"


def test_tokens_are_counted_when_the_cache_has_no_room(tmp_path):
    with small_tmpfs(tmp_path / "small", size="5m") as small:
        encoder = load_encoder(small / "cache" / "tiktoken")
        leftovers = [name for name in os.listdir(small / "cache" / "tiktoken") if name.startswith(".")]
    assert len(encoder.encode_ordinary("hello offline world")) == 3
    assert leftovers == []


def test_an_admitted_run_on_a_5_mb_state_home_decides_and_counts_tokens(tmp_path):
    command = "pytest tests/test_payment.py -k refund"
    world = build_world(tmp_path / "world", [command], canary=CANARY)
    with small_tmpfs(tmp_path / "small-state", size="5m") as state:
        shutil.copytree(world.index_dir, state / "index")
        write_config(state, world.native_enablement())
        document = situation(commands=[command], hypothesis=f"the refund path {CANARY}")
        completed = subprocess.run(
            [sys.executable, "-m", "obelisk_session_evidence", "run", "--situation", "-", "--format", "json"],
            input=json.dumps(document),
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "OBELISK_SESSION_EVIDENCE_HOME": str(state)},
        )
        temp_files = [path for path in state.rglob(".*") if path.is_file()]
    assert completed.returncode == 0, completed.stderr[-300:]
    decision = json.loads(completed.stdout)
    assert decision["retrieval"]["reason_code"] == "retrieved"
    assert decision["receipt"]["result_count"] >= 1
    assert temp_files == []
    assert CANARY not in completed.stdout + completed.stderr


def test_run_on_a_read_only_state_home_is_one_typed_line(tmp_path, monkeypatch):
    with small_tmpfs(tmp_path / "ro-state", size="64k", read_only=True) as state:
        monkeypatch.setenv("OBELISK_SESSION_EVIDENCE_HOME", str(state / "home"))
        result = _run("--situation", situation_file(tmp_path), "--format", "json")
    assert result.exit_code == 2
    assert result.stderr == "error: storage_failed: local storage: EROFS (read-only file system)\n"
    assert CANARY not in result.output


def _decision_of(result) -> dict:
    """The decision on stdout's first line; under `--format json` an error envelope follows it."""
    lines = result.stdout.splitlines()
    if len(lines) > 1:
        assert json.loads(lines[1])["schema_version"] == "obelisk_session_evidence_error_v0"
    return json.loads(lines[0])
