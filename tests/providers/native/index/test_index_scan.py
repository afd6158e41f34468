"""The refresh scan finds exactly the units `iter_session_paths` names, with their signatures."""

import os
import shutil
from pathlib import Path

import pytest

from fixtures.shared import REAL_CORPUS as SHARED_REAL_CORPUS
from obelisk_session_evidence.contracts.sources import SOURCE_KINDS
from obelisk_session_evidence.providers.native.index.cursor import file_signature
from obelisk_session_evidence.providers.native.index.scan import scan_root
from obelisk_session_evidence.providers.native.parsers import default_roots, iter_session_paths

REAL_CORPUS = Path(os.environ.get("NATIVE_REAL_CORPUS", str(SHARED_REAL_CORPUS)))
REAL_ROOTS = [
    ("claude", "claude-spotter"),
    ("claude", "claude-codemie"),
    ("codex", "codex-codemie"),
    ("pi", "pi-badlogic"),
    ("kimi", "kimi-moonshotai"),
    ("dsh", "dsh-deepseek"),
]


def _same_units(root: Path, source: str) -> None:
    state, units = scan_root(root, source)
    assert state == "indexed"
    assert [unit.path for unit in units] == sorted(str(path) for path in iter_session_paths(root, source))
    for unit in units:
        assert unit.signature == file_signature(Path(unit.path))


@pytest.mark.skipif(not REAL_CORPUS.is_dir(), reason="real corpus not present")
@pytest.mark.parametrize(("source", "folder"), REAL_ROOTS)
def test_scan_root_matches_iter_session_paths_on_the_real_corpus(source, folder):
    _same_units(REAL_CORPUS / folder, source)


@pytest.mark.parametrize("source", SOURCE_KINDS)
def test_scan_root_matches_iter_session_paths_on_generated_histories(generated, source):
    _same_units(default_roots(generated.home)[source], source)


def test_scan_root_picks_the_canonical_dsh_file(tmp_path):
    session = tmp_path / "--work--" / "abc"
    session.mkdir(parents=True)
    for name in ("session.jsonl", "session.v2.jsonl", "session.v2.jsonl.zstd", "session.v10.jsonl", "notes.jsonl"):
        (session / name).write_text("{}\n")
    _same_units(tmp_path, "dsh")
    assert [Path(unit.path).name for unit in scan_root(tmp_path, "dsh")[1]] == ["session.v10.jsonl"]


def test_scan_root_states(tmp_path):
    assert scan_root(tmp_path / "absent", "claude") == ("missing", [])
    (tmp_path / "file").write_text("x")
    assert scan_root(tmp_path / "file", "claude") == ("unreadable", [])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_scan_root_with_an_unlistable_folder_is_unreadable(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        assert scan_root(tmp_path, "claude")[0] == "unreadable"
    finally:
        locked.chmod(0o700)
        shutil.rmtree(locked)
