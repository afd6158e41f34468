"""A refresh killed with SIGKILL at random points, and two refreshes at once: nothing lost or doubled.

Each trial starts a refresh in a child process, kills it at a point drawn from a fixed seed (by
refresh progress, plus a random delay so the kill lands inside a unit's transaction as often as
between two), then checks that the index opens, passes `PRAGMA integrity_check` and the FTS5
integrity check, that the next refresh completes, and that the final content equals a clean build
of the same files (`index_dump`: every row of every table, rowids and timestamps aside).

Kinds of trial: a first build killed (forked children, and the real `index refresh` command); an
incremental refresh killed while it appends, re-reads, adds and deletes files.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from obelisk_session_evidence.contracts.index_status import RefreshReport
from obelisk_session_evidence.providers.native.index.refresh import refresh_index, refresh_locked
from obelisk_session_evidence.providers.native.index.store import MEMORY, connect, index_file
from obelisk_session_evidence.providers.native.parsers import default_roots
from obelisk_session_evidence.qualify.session_writers import FixtureManifest, write_native_histories
from tests.providers.native.index.transcripts import ClaudeTranscript
from tests.reliability.figures import FIGURES, FULL
from tests.reliability.index_dump import IndexDump, index_dump, integrity_problems
from tests.reliability.leaks import assert_no_canary
from tests.reliability.processes import start_forked

pytestmark = pytest.mark.reliability

CANARY = "CANARY-WRITER-93ad"
SEED = 9
FIRST_BUILD_TRIALS = 40 if FULL else 13
CLI_TRIALS = 5 if FULL else 1
INCREMENTAL_TRIALS = 25 if FULL else 6
"""20 trials in the default run (issue 9's minimum), 70 in `make test-reliability`."""
HISTORY_SCALE, HISTORY_ROUNDS = (16, 6) if FULL else (3, 3)
"""Histories whose first build takes about 3 s (full run) or under a second (default run): kill
points are drawn by refresh progress, so a small history still sees kills at every stage."""
CHILD_TIMEOUT_S = 120.0
RESUME_WAIT_S = 30.0


@dataclass(frozen=True)
class Histories:
    """Generated five-agent histories, and what a clean build of them holds."""

    manifest: FixtureManifest
    roots: dict[str, list[Path]]
    clean: IndexDump
    units: int
    build_s: float


def _clean_build(roots: dict[str, list[Path]]) -> tuple[IndexDump, RefreshReport, float]:
    connection = connect(MEMORY)
    try:
        started = time.monotonic()
        report = refresh_locked(connection, roots)
        return index_dump(connection), report, time.monotonic() - started
    finally:
        connection.close()


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> Histories:
    root = tmp_path_factory.mktemp("writer-histories")
    manifest = write_native_histories(root, scale=HISTORY_SCALE, rounds_per_session=HISTORY_ROUNDS)
    private = ClaudeTranscript(manifest.home / ".claude" / "projects", "canary-session", str(manifest.repo_root))
    private.user(f"Deploy with the token {CANARY}").bash(
        f"deploy --token {CANARY}", f"denied {CANARY}", exit_code=1
    ).write()
    roots = {source: [path] for source, path in default_roots(manifest.home).items()}
    clean, report, seconds = _clean_build(roots)
    assert report.freshness == "fresh" and clean.entries
    return Histories(manifest, roots, clean, report.files_seen, seconds)


def _refresh_child(report_progress: Callable[..., None], index: str, roots: dict[str, list[str]]) -> str:
    paths = {source: [Path(p) for p in values] for source, values in roots.items()}
    return refresh_index(Path(index), paths, progress=report_progress, wait_s=RESUME_WAIT_S).model_dump_json()


def _as_text(roots: dict[str, list[Path]]) -> dict[str, list[str]]:
    return {source: [str(path) for path in paths] for source, paths in roots.items()}


def _after_the_kill(index: Path, roots: dict[str, list[Path]], clean: IndexDump) -> RefreshReport:
    """The index opens and is sound; the next refresh completes; the content equals a clean build."""
    if index.exists():
        connection = connect(index)  # migrations too, if the kill came before they committed
        try:
            assert integrity_problems(connection) == []
        finally:
            connection.close()
    report = refresh_index(index, roots, wait_s=RESUME_WAIT_S)
    assert report.freshness == "fresh"
    connection = connect(index)
    try:
        assert integrity_problems(connection) == []
        assert index_dump(connection).differences(clean) == {}
    finally:
        connection.close()
    assert refresh_index(index, roots, wait_s=RESUME_WAIT_S).content_changed is False
    return report


def _kill_point(trial: int, units: int, unit_s: float) -> tuple[int, float]:
    """`(progress to wait for, delay after it)`: the first trial kills at once, the second after the
    last unit (during deletions and the final commit), the rest anywhere."""
    rng = random.Random(SEED * 1000 + trial)
    if trial == 0:
        return -1, 0.0
    if trial == 1:
        return units, rng.uniform(0.0, 0.01)
    return rng.randint(-1, units), rng.uniform(0.0, 2 * unit_s)


def _note_kill(killed_running: bool, at: float) -> None:
    """Count a trial and where its kill landed (a fraction of the refresh's units, or of its time)."""
    FIGURES.cases["killed_writer"] += 1
    notes = FIGURES.notes.setdefault(
        "killed_writer", {"killed_mid_refresh": 0, "finished_before_kill": 0, "kill_points": []}
    )
    notes["killed_mid_refresh" if killed_running else "finished_before_kill"] += 1
    notes["kill_points"].append(round(at, 2))


@pytest.mark.parametrize("trial", range(FIRST_BUILD_TRIALS))
def test_refresh_index_first_build_killed_at_random_resumes_to_a_clean_build(
    trial: int, histories: Histories, tmp_path: Path, caplog, capfd
) -> None:
    index = index_file(tmp_path / "index")
    target, delay = _kill_point(trial, histories.units, histories.build_s / histories.units)
    child = start_forked(_refresh_child, str(index), _as_text(histories.roots))
    child.wait_for_progress(target, timeout_s=CHILD_TIMEOUT_S)
    time.sleep(delay)
    killed_running = child.kill()
    _note_kill(killed_running, max(child.progress.value, 0) / histories.units)
    report = _after_the_kill(index, histories.roots, histories.clean)
    captured = capfd.readouterr()
    assert_no_canary(
        CANARY,
        tmp_path / "public",
        {"report": report.model_dump_json(), "log": caplog.text, "stdout": captured.out, "stderr": captured.err},
    )


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("obelisk-session-evidence")
    return [str(script)] if script.exists() else [sys.executable, "-m", "obelisk_session_evidence"]


def _root_options(roots: dict[str, list[Path]]) -> list[str]:
    return [option for source, paths in roots.items() for path in paths for option in ("--root", f"{source}={path}")]


@pytest.mark.parametrize("trial", range(CLI_TRIALS))
def test_index_refresh_command_killed_at_random_resumes_to_a_clean_build(
    trial: int, histories: Histories, tmp_path: Path
) -> None:
    """The real command (`index refresh --root SOURCE=PATH`), killed once it has started writing."""
    state = tmp_path / "state"
    index = index_file(state / "index")
    environment = {**os.environ, "OBELISK_SESSION_EVIDENCE_HOME": str(state)}
    command = [*_cli(), "index", "refresh", *_root_options(histories.roots), "--format", "json"]
    process = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + CHILD_TIMEOUT_S
    while not Path(f"{index}-wal").exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    delay = random.Random(SEED * 7 + trial).uniform(0.0, histories.build_s)
    time.sleep(delay)
    killed_running = process.poll() is None
    process.send_signal(signal.SIGKILL)
    stdout, stderr = process.communicate(timeout=30)
    _note_kill(killed_running, delay / histories.build_s)
    report = _after_the_kill(index, histories.roots, histories.clean)
    assert_no_canary(
        CANARY, tmp_path / "public", {"cli_stdout": stdout, "cli_stderr": stderr, "report": report.model_dump_json()}
    )


class IncrementalHistories:
    """Twenty Claude sessions, then a change of every kind the incremental refresh handles."""

    def __init__(self, root: Path) -> None:
        self.claude = root / "claude"
        self.transcripts = [ClaudeTranscript(self.claude, f"s{n:02d}", f"/work/repo/{n % 3}") for n in range(20)]
        for n, transcript in enumerate(self.transcripts):
            for step in range(5):
                transcript.user(f"step {step} of {n} {CANARY}").bash(
                    f"make target-{n}-{step}", f"out {CANARY}", exit_code=step % 2
                )
            transcript.write()

    @property
    def roots(self) -> dict[str, list[Path]]:
        return {"claude": [self.claude]}

    def change(self) -> None:
        """Appends (same inode), a torn tail, deletions, replacements, a shrink, new sessions."""
        for transcript in self.transcripts[:8]:
            transcript.user(f"more {CANARY}").bash("make more", f"again {CANARY}", exit_code=1).write()
        torn = self.transcripts[8]
        torn.user(f"half {CANARY}")
        with open(torn.path, "a", encoding="utf-8") as handle:
            handle.write(torn.lines.pop()[:40])
        for transcript in self.transcripts[9:11]:
            transcript.path.unlink()
        for transcript in self.transcripts[11:13]:
            fresh = ClaudeTranscript(self.claude, transcript.session_id, transcript.cwd, counter=500)
            fresh.user(f"rewritten {CANARY}").bash("make rewritten", f"x {CANARY}", exit_code=3)
            temporary = transcript.path.with_suffix(".tmp")
            temporary.write_text("".join(line + "\n" for line in fresh.lines), encoding="utf-8")
            temporary.replace(transcript.path)
        shrink = self.transcripts[13].path
        lines = shrink.read_text(encoding="utf-8").splitlines(keepends=True)
        shrink.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
        for n in range(20, 24):
            ClaudeTranscript(self.claude, f"s{n:02d}", "/work/repo/0").user(f"new {n} {CANARY}").bash(
                "make new", "ok"
            ).write()


@pytest.mark.parametrize("trial", range(INCREMENTAL_TRIALS))
def test_refresh_index_incremental_refresh_killed_at_random_resumes_to_a_clean_build(
    trial: int, tmp_path: Path, caplog, capfd
) -> None:
    histories = IncrementalHistories(tmp_path / "histories")
    index = index_file(tmp_path / "index")
    first = refresh_index(index, histories.roots)
    histories.change()
    clean, report, seconds = _clean_build(histories.roots)
    target, delay = _kill_point(trial, report.files_seen, seconds / report.files_seen)
    child = start_forked(_refresh_child, str(index), _as_text(histories.roots))
    child.wait_for_progress(target, timeout_s=CHILD_TIMEOUT_S)
    time.sleep(delay)
    _note_kill(child.kill(), max(child.progress.value, 0) / report.files_seen)
    resumed = _after_the_kill(index, histories.roots, clean)
    captured = capfd.readouterr()
    assert_no_canary(
        CANARY,
        tmp_path / "public",
        {
            "reports": [first.model_dump_json(), resumed.model_dump_json()],
            "log": caplog.text,
            "stdout": captured.out,
            "stderr": captured.err,
        },
    )


def _refresh_at_the_signal(
    report_progress: Callable[..., None], index: str, roots: dict[str, list[str]], go: str
) -> dict[str, Any]:
    """Wait for the start file, then refresh (waiting for any other writer); say how long it took."""
    while not Path(go).exists():
        time.sleep(0.001)
    started = time.monotonic()
    report = json.loads(_refresh_child(report_progress, index, roots))
    return {"report": report, "seconds": time.monotonic() - started}


def test_refresh_index_two_at_once_one_waits_and_both_finish(
    histories: Histories, tmp_path: Path, caplog, capfd
) -> None:
    index, go = index_file(tmp_path / "index"), tmp_path / "go"
    children = [start_forked(_refresh_at_the_signal, str(index), _as_text(histories.roots), str(go)) for _ in range(2)]
    go.touch()
    outcomes = [child.result(timeout_s=CHILD_TIMEOUT_S) for child in children]
    FIGURES.cases["concurrent_refresh"] += 1
    assert [status for status, _ in outcomes] == ["ok", "ok"], outcomes
    reports = sorted((value["report"] for _, value in outcomes), key=lambda report: report["files_added"])
    # One did the work; the other waited for the writer lock and then found nothing to do.
    assert (reports[0]["files_added"], reports[0]["files_unchanged"]) == (0, histories.units)
    assert (reports[1]["files_added"], reports[1]["files_unchanged"]) == (histories.units, 0)
    assert all(report["freshness"] == "fresh" for report in reports)
    connection = connect(index)
    try:
        assert integrity_problems(connection) == []
        assert index_dump(connection).differences(histories.clean) == {}
    finally:
        connection.close()
    captured = capfd.readouterr()
    assert_no_canary(
        CANARY,
        tmp_path / "public",
        {
            "reports": [json.dumps(r) for r in reports],
            "log": caplog.text,
            "stdout": captured.out,
            "stderr": captured.err,
        },
    )
