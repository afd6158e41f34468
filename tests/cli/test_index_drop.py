import json
import os

from click.testing import CliRunner
from jsonschema import Draft202012Validator

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.schemas import json_schema
from obelisk_session_evidence.state.paths import state_paths
from tests.lifecycle.helpers import populate, tree_digest


def _invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_index_drop_without_yes_exits_2_and_keeps_the_index():
    index = populate(state_paths().index_dir, {"index.sqlite": b"rows"})
    result = _invoke("index", "drop")
    assert (result.exit_code, result.stderr) == (
        2,
        "error: invalid_input: index drop deletes the native index; pass --yes to confirm\n",
    )
    assert (index / "index.sqlite").read_bytes() == b"rows"


def test_index_drop_yes_removes_the_index_and_nothing_else(tmp_path, monkeypatch):
    sessions = populate(tmp_path / "sessions", {"a/s.jsonl": b"{}\n"})
    obelisk_home = populate(tmp_path / "obelisk", {"obelisk.sqlite": os.urandom(512)})
    monkeypatch.setenv("OBELISK_HOME", str(obelisk_home))
    populate(state_paths().index_dir, {"index.sqlite": b"rows", "index.sqlite-wal": b"w"})
    before = [tree_digest(sessions), tree_digest(obelisk_home)]
    result = _invoke("index", "drop", "--yes", "--format", "json")
    assert result.exit_code == 0
    outcome = json.loads(result.stdout)
    Draft202012Validator(json_schema("obelisk_session_evidence_index_drop_v0")).validate(outcome)
    assert (outcome["reason_code"], outcome["removed_files"], outcome["removed_bytes"]) == (
        "index_dropped",
        3,
        5,
    )  # and the writer lock file
    assert not state_paths().index_dir.exists()
    assert [tree_digest(sessions), tree_digest(obelisk_home)] == before


def test_index_drop_text_when_absent():
    result = _invoke("index", "drop", "--yes")
    assert (result.exit_code, result.stdout) == (0, "no native index to drop.\n")
