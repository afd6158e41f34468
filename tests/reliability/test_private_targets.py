"""Attack 1 (and 9's stale file): private files never change a folder the tool did not create,
never replace a special file, and a run that is not admitted leaves no earlier private result."""

import json
import os
import stat

import pytest
from click.testing import CliRunner

from fixtures.situations import situation
from obelisk_session_evidence.batch.manifest import spool_batch
from obelisk_session_evidence.batch.run import run_batch_directly
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.errors import EvidenceError
from obelisk_session_evidence.state.paths import state_paths
from tests.reliability.attack_stands import CANARY, admitted_config, make_special, situation_file

SPECIAL_KINDS = ["fifo", "socket", "chardev"]
KIND_NAMES = {"fifo": "a FIFO", "socket": "a socket", "chardev": "a character device"}


def _run(*args):
    return CliRunner().invoke(main, ["run", *args])


def _shared_sticky_folder(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    return shared


def test_private_out_in_a_sticky_shared_folder_keeps_the_folder_mode(tmp_path):
    admitted_config()
    shared = _shared_sticky_folder(tmp_path)
    target = shared / "private.json"
    result = _run("--situation", situation_file(tmp_path), "--format", "json", "--private-out", str(target))
    assert result.exit_code == 0
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_private_out_creates_missing_folders_owner_only(tmp_path):
    admitted_config()
    target = tmp_path / "made" / "by" / "tool" / "private.json"
    result = _run("--situation", situation_file(tmp_path), "--private-out", str(target))
    assert result.exit_code == 0
    for folder in (tmp_path / "made", tmp_path / "made" / "by", target.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_private_out_at_a_special_file_is_refused_and_the_decision_still_printed(tmp_path, kind):
    admitted_config()
    target = tmp_path / "target"
    make_special(target, kind)
    before = os.lstat(target)
    result = _run("--situation", situation_file(tmp_path), "--format", "json", "--private-out", str(target))
    assert result.exit_code == 2
    assert _decision_of(result)["admission"]["admitted"] is True
    assert result.stderr == (
        f"error: private_target_refused: --private-out: the target is {KIND_NAMES[kind]}, not a regular file\n"
    )
    after = os.lstat(target)
    assert (after.st_ino, stat.S_IFMT(after.st_mode)) == (before.st_ino, stat.S_IFMT(before.st_mode))
    assert CANARY not in result.output


def test_private_out_at_a_symbolic_link_is_refused_and_the_link_target_untouched(tmp_path):
    admitted_config()
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("theirs")
    target = tmp_path / "link.json"
    target.symlink_to(elsewhere)
    result = _run("--situation", situation_file(tmp_path), "--private-out", str(target))
    assert result.exit_code == 2 and "private_target_refused" in result.stderr
    assert target.is_symlink() and elsewhere.read_text() == "theirs"


def test_not_admitted_run_removes_an_earlier_private_result(tmp_path):
    target = tmp_path / "private.json"
    target.write_text(json.dumps({"snippet": CANARY}))
    result = _run("--situation", situation_file(tmp_path), "--format", "json", "--private-out", str(target))
    assert result.exit_code == 0
    assert _decision_of(result)["admission"]["reason_code"] == "not_enabled"
    assert not target.exists()


def test_not_admitted_run_never_removes_a_special_file(tmp_path):
    target = tmp_path / "fifo"
    os.mkfifo(target)
    result = _run("--situation", situation_file(tmp_path), "--format", "json", "--private-out", str(target))
    assert result.exit_code == 2 and stat.S_ISFIFO(os.lstat(target).st_mode)
    assert _decision_of(result)["admission"]["reason_code"] == "not_enabled"


def _items():
    return [json.dumps(situation(situation_id=f"s-{n}")).encode() for n in range(2)]


def test_batch_out_in_a_sticky_shared_folder_keeps_the_folder_mode(tmp_path):
    shared = _shared_sticky_folder(tmp_path)
    paths = state_paths()
    summary = run_batch_directly(paths, spool_batch(paths, _items(), out_dir=shared))
    assert summary.decided == 2
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert stat.S_IMODE((shared / "decisions").stat().st_mode) == 0o700
    assert stat.S_IMODE((shared / "summary.json").stat().st_mode) == 0o600


@pytest.mark.parametrize("kind", ["fifo", "chardev"])
def test_batch_summary_at_a_special_file_is_refused_before_any_item(tmp_path, kind):
    out = tmp_path / "out"
    out.mkdir()
    make_special(out / "summary.json", kind)
    paths = state_paths()
    with pytest.raises(EvidenceError) as refused:
        spool_batch(paths, _items(), out_dir=out)
    assert refused.value.reason_code == "private_target_refused"
    assert not (out / "decisions").exists()
    assert not stat.S_ISREG(os.lstat(out / "summary.json").st_mode)


def test_batch_cli_refuses_a_special_summary_with_one_line(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "summary.json")
    source = tmp_path / "items.jsonl"
    source.write_bytes(b"\n".join(_items()))
    result = CliRunner().invoke(main, ["batch", "--in", str(source), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr == ("error: private_target_refused: the target is a FIFO, not a regular file\n")


def _decision_of(result) -> dict:
    """The decision on stdout's first line; under `--format json` an error envelope follows it."""
    lines = result.stdout.splitlines()
    if len(lines) > 1:
        assert json.loads(lines[1])["schema_version"] == "obelisk_session_evidence_error_v0"
    return json.loads(lines[0])
