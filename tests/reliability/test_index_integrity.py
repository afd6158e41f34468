"""A damaged native index says so: random bit flips, a newer schema, a writer that died.

The index of a small world is built and sealed; each seed then flips bits of the database file
the way a disk or another program would (the seal left as it was). Every seed must read as the
typed `index_unavailable: index_damaged` naming the repair, in `index status` and in a lookup
(never `novel` over a `fresh` index, never an internal fault), and `index refresh` must repair it.
"""

import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.errors import IndexUnavailable
from obelisk_session_evidence.providers.native.index.integrity import REPAIR, seal_file
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.status import index_status
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.tokenizer import load_encoder
from tests.conftest import _SHARED_CACHE
from tests.reliability.figures import FIGURES, FULL
from tests.reliability.pipeline_runs import run_pipeline_measured
from tests.reliability.test_hostile_terms import _policy, _situation
from tests.reliability.worlds import World, build_world

pytestmark = pytest.mark.reliability

SEEDS = range(40) if FULL else range(0, 40, 5)
FLIPS_PER_SEED = 8
COMMANDS = [f"make deploy-{number} target-{number}" for number in range(4)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    world = build_world(tmp_path_factory.mktemp("integrity"), COMMANDS, canary="CANARY-INTEGRITY-3b7d")
    index_status(index_file(world.index_dir))  # seals the index as a first lookup leaves it
    return world


@pytest.fixture
def pristine(world: World, tmp_path: Path) -> Path:
    """A copy of the sealed index and its seal, put back after the test."""
    path = index_file(world.index_dir)
    saved = tmp_path / "saved"
    saved.mkdir()
    _decide(world)  # caches the repository binding, then the next open seals the file again
    index_status(path)
    for source in (path, seal_file(path)):
        shutil.copy2(source, saved / source.name)
    yield saved
    _restore(world, saved)


def _restore(world: World, saved: Path) -> None:
    path = index_file(world.index_dir)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    for name in (path.name, seal_file(path).name):
        shutil.copyfile(saved / name, world.index_dir / name)


def _decide(world: World, command: str = COMMANDS[0]):
    provider = NativeIndexProvider(world.index_dir, world.native_enablement())
    run = run_pipeline_measured(
        _situation([command]),
        provider=provider,
        policy=_policy(world.native_enablement()),
        encoder=load_encoder(_SHARED_CACHE),
    )
    return run.decision


def _flip(path: Path, seed: int) -> None:
    data = bytearray(path.read_bytes())
    rng = random.Random(seed)
    for _ in range(FLIPS_PER_SEED):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("seed", SEEDS)
def test_a_flipped_index_is_index_unavailable_and_refresh_repairs_it(world: World, pristine: Path, seed: int) -> None:
    path = index_file(world.index_dir)
    before = _decide(world)
    assert (before.retrieval.reason_code, before.comparison.verdict) == ("retrieved", "repeats_prior_failure")
    _flip(path, seed)
    FIGURES.cases["index_bit_flips"] += 1
    with pytest.raises(IndexUnavailable) as raised:
        index_status(path)
    assert raised.value.detail.startswith("index_damaged") and REPAIR in raised.value.detail
    damaged = _decide(world)
    assert damaged.retrieval.reason_code == "index_unavailable"
    assert damaged.comparison.verdict != "novel"
    report = refresh_index(path, {"claude": [world.claude_root, world.other_agent_root], "codex": [world.codex_root]})
    assert report.freshness == "fresh"
    repaired = _decide(world)
    assert repaired.retrieval.reason_code == "retrieved"
    assert repaired.comparison.verdict == before.comparison.verdict
    assert repaired.receipt.result_count == before.receipt.result_count


def test_index_status_of_a_flipped_index_exits_2_naming_the_repair(world: World, pristine: Path, monkeypatch) -> None:
    monkeypatch.setenv("OBELISK_SESSION_EVIDENCE_HOME", str(world.index_dir.parent))
    path = index_file(world.index_dir)
    _flip(path, 3)
    result = CliRunner().invoke(main, ["index", "status", "--format", "json"])
    assert result.exit_code == 2
    assert "index_unavailable" in result.output and "index refresh" in result.output
    assert "Traceback" not in result.output


def test_touching_the_index_is_no_damage(world: World, pristine: Path) -> None:
    path = index_file(world.index_dir)
    path.touch()
    assert index_status(path).freshness == "fresh"
    assert _decide(world).retrieval.reason_code == "retrieved"


def test_a_writer_that_died_before_sealing_is_checked_not_condemned(world: World, pristine: Path) -> None:
    path = index_file(world.index_dir)
    seal_file(path).write_text('{"state": "writing"}', encoding="ascii")
    connection = sqlite3.connect(path)
    connection.execute("UPDATE meta SET value = value WHERE key = 'last_refresh_at'")
    connection.commit()
    connection.close()
    assert index_status(path).freshness == "fresh"


def test_a_newer_schema_is_schema_too_new_in_status_and_lookups(world: World, pristine: Path) -> None:
    path = index_file(world.index_dir)
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO schema_migrations (name, applied_at) VALUES ('9999_from_a_newer_release', 0)")
    connection.commit()
    connection.close()
    with pytest.raises(IndexUnavailable) as raised:
        index_status(path)
    assert raised.value.detail.startswith("schema_too_new")
    decision = _decide(world)
    assert decision.retrieval.reason_code == "index_unavailable"
    assert decision.comparison.verdict != "novel"


@pytest.mark.parametrize("kind", ["dangling", "to_a_file", "fifo"])
def test_the_index_path_must_be_a_regular_file_inside_the_state_folder(tmp_path: Path, kind: str) -> None:
    outside = tmp_path / "outside" / "native.sqlite"
    outside.parent.mkdir()
    path = index_file(tmp_path / "state" / "index")
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        if kind == "to_a_file":
            outside.write_bytes(b"")
        path.symlink_to(outside)
    with pytest.raises(IndexUnavailable) as raised:
        index_status(path) if kind != "dangling" else refresh_index(path, {})
    assert raised.value.detail.startswith("index_path_not_a_file")
    assert not outside.exists() or outside.stat().st_size == 0


def test_an_index_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "index").symlink_to(elsewhere)
    with pytest.raises(IndexUnavailable):
        refresh_index(index_file(tmp_path / "state" / "index"), {})
    assert list(elsewhere.iterdir()) == []
