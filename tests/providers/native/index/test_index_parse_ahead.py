"""Parsing ahead in worker processes: when it runs, and that the index it builds is the serial one."""

import dataclasses
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.index import parse_ahead
from obelisk_session_evidence.providers.native.index.changes import scan_roots
from obelisk_session_evidence.providers.native.index.parse_ahead import (
    MIN_BYTES,
    ParsedAhead,
    start_method,
    worker_count,
)
from obelisk_session_evidence.providers.native.index.refresh import refresh_locked
from obelisk_session_evidence.providers.native.index.store import MEMORY, connect
from tests.providers.native.conftest import REAL_ROOTS, index_rows, requires_real_corpus
from tests.reliability.processes import process_alive

BIG = [("/a", "claude", MIN_BYTES // 2), ("/b", "claude", MIN_BYTES // 2), ("/c", "codex", 10)]


@pytest.mark.parametrize(
    ("jobs", "cpus", "load", "expected"),
    [
        (BIG, 2, 0.0, 2),  # an idle 2-core machine: two workers beside the writing process
        (BIG, 2, 0.5, 1),  # one and a half cores free: one worker
        (BIG, 2, 1.0, 0),  # one core free: parse here
        (BIG, 2, 3.5, 0),  # a busy machine
        (BIG[:2], 16, 0.0, 1),  # never more workers than the jobs after the first
        (BIG * 10, 16, 0.0, 2),  # nor more than the writer keeps busy
        ([("/a", "claude", MIN_BYTES - 1), ("/b", "claude", 0)], 8, 0.0, 0),  # too few bytes to pay off
        ([("/a", "claude", MIN_BYTES * 4)], 8, 0.0, 0),  # one file: nothing to write while it parses
    ],
)
def test_worker_count(jobs, cpus, load, expected) -> None:
    assert worker_count(jobs, cpus=cpus, load=load) == expected


def _build(workers: int) -> tuple[dict, int]:
    """The real corpus indexed with `workers` parser processes: its rows, and the files parsed ahead."""
    connection = connect(MEMORY)
    try:
        report = refresh_locked(connection, REAL_ROOTS, workers=workers)
        assert report.files_failed == 0 and report.freshness == "fresh"
        return index_rows(connection), report.files_parsed_ahead
    finally:
        connection.close()


@requires_real_corpus
def test_build_with_parser_workers_equals_the_serial_build() -> None:
    serial, parsed_ahead = _build(0)
    assert parsed_ahead == 0
    parallel, parsed_ahead = _build(2)
    assert parsed_ahead == len(serial["files"])  # every unit came from a worker
    assert parallel == serial


@requires_real_corpus
def test_the_report_says_how_many_workers_parsed_ahead() -> None:
    connection = connect(MEMORY)
    try:
        report = refresh_locked(connection, REAL_ROOTS, workers=2)
    finally:
        connection.close()
    assert (report.parser_workers, report.files_parsed_ahead) == (2, report.files_added)


def _die(path: str, source: str) -> bytes:
    os._exit(3)


CANARY = "canary-7f3a-private-session-text"


def _raise(path: str, source: str) -> bytes:
    raise ValueError(f"parser fault quoting the session: {CANARY}")


@requires_real_corpus
@pytest.mark.parametrize("start_method", ["fork", "forkserver"])
def test_a_parse_that_raises_in_a_worker_fails_its_unit_as_in_process(
    monkeypatch: pytest.MonkeyPatch, start_method: str
) -> None:
    """Under either start method (a threaded process gets a forkserver) the worker runs the parse it
    was given, so a failing one fails its unit in both."""
    # Fault injection inside the worker process: no real session makes the parser raise.
    monkeypatch.setattr(parse_ahead, "_parse", _raise)
    # The process-start boundary: both methods in one test process, whatever its threads.
    monkeypatch.setattr(parse_ahead, "start_method", lambda: multiprocessing.get_context(start_method))
    only_pi = {"pi": REAL_ROOTS["pi"]}
    connection = connect(MEMORY)
    try:
        report = refresh_locked(connection, only_pi, workers=1)
        failures = connection.execute("SELECT failure FROM files").fetchall()
        dumped = index_rows(connection)
    finally:
        connection.close()
    assert report.files_failed == len(failures) == 2 and report.freshness == "incomplete"
    assert set(failures) == {("ValueError",)}  # the class name only: the worker's message is dropped
    assert CANARY not in report.model_dump_json() and CANARY not in repr(dumped)


class _Unrebuildable(Exception):
    """An error whose pickle does not rebuild (its constructor takes two arguments, it keeps one)."""

    def __init__(self, first: str, second: str) -> None:
        super().__init__(first)


def _raise_unrebuildable(path: str, source: str) -> bytes:
    raise _Unrebuildable(CANARY, CANARY)


def _real_jobs() -> list[parse_ahead.Job]:
    units = scan_roots(REAL_ROOTS).units
    return [(unit.path, unit.source, unit.signature.size) for unit in units if unit.signature is not None]


@requires_real_corpus
def test_units_taken_out_of_order_are_parsed_here_and_the_rest_still_come_ahead() -> None:
    jobs = _real_jobs()[:6]  # worker 0 parses jobs 0, 2 and 4; worker 1 jobs 1, 3 and 5
    with ParsedAhead(jobs, 2) as ahead:
        later = ahead.take(jobs[4][0])  # passes over job 2 (and job 0) of worker 0
        passed_over = ahead.take(jobs[2][0])
        in_order = ahead.take(jobs[1][0])
    assert passed_over is None
    assert later == parse_ahead.parse_session_file(Path(jobs[4][0]), jobs[4][1])
    assert in_order == parse_ahead.parse_session_file(Path(jobs[1][0]), jobs[1][1])


@requires_real_corpus
def test_closing_before_every_unit_is_taken_stops_the_workers() -> None:
    jobs = _real_jobs()
    with ParsedAhead(jobs, 2) as ahead:
        assert ahead.take(jobs[0][0]) is not None
        workers = [child.pid for child in multiprocessing.active_children()]
    assert len(workers) == 2 and not multiprocessing.active_children()
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # reaped, not left running or a zombie


_PARENT_THAT_DIES = """
import sys, time
from obelisk_session_evidence.providers.native.index import parse_ahead
from tests.providers.native.conftest import REAL_ROOTS
from obelisk_session_evidence.providers.native.index.changes import scan_roots
units = [unit for unit in scan_roots(REAL_ROOTS).units if unit.signature is not None]
ahead = parse_ahead.ParsedAhead([(unit.path, unit.source, unit.signature.size) for unit in units], 2)
ahead.take(units[0].path)
print(*(worker._process.pid for worker in ahead._workers), flush=True)
time.sleep(600)
"""


@requires_real_corpus
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_workers_whose_refresh_was_killed_exit_instead_of_waiting_forever() -> None:
    parent = subprocess.Popen([sys.executable, "-c", _PARENT_THAT_DIES], stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(pid) for pid in parent.stdout.readline().split()]
    finally:
        parent.kill()  # no `close`, no `atexit`: the workers are left with full pipes and no reader
        parent.wait()
    assert len(workers) == 2
    deadline = time.monotonic() + 60  # a hang guard, not a speed check: they exit at their next write
    while any(process_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    stuck = [pid for pid in workers if process_alive(pid)]
    for pid in stuck:
        os.kill(pid, signal.SIGKILL)  # not left behind by a failing run
    assert not stuck


class _NoProcesses:
    """A start method whose processes never start (a process limit reached)."""

    Pipe = staticmethod(multiprocessing.Pipe)

    @staticmethod
    def get_start_method() -> str:
        return "fork"

    class Process:
        def __init__(self, **_: object) -> None:
            pass

        def start(self) -> None:
            raise BlockingIOError(11, "Resource temporarily unavailable")


class _SecondStartFails:
    """Forks its first worker; starting the second raises something other than a lack of processes."""

    def __init__(self) -> None:
        self._fork = multiprocessing.get_context("fork")
        self.Pipe = self._fork.Pipe
        self.processes: list[multiprocessing.process.BaseProcess] = []

    @staticmethod
    def get_start_method() -> str:
        return "fork"

    def Process(self, **arguments: object) -> multiprocessing.process.BaseProcess:
        if self.processes:
            raise RuntimeError("no second worker")
        self.processes.append(self._fork.Process(**arguments))
        return self.processes[-1]


@requires_real_corpus
def test_a_failed_start_stops_the_workers_already_started(monkeypatch: pytest.MonkeyPatch) -> None:
    context = _SecondStartFails()
    # The process-start boundary: a start that fails on the second worker cannot be caused on demand.
    monkeypatch.setattr(parse_ahead, "start_method", lambda: context)
    with pytest.raises(RuntimeError):
        ParsedAhead(_real_jobs(), 2)
    assert len(context.processes) == 1 and not multiprocessing.active_children()


@requires_real_corpus
@pytest.mark.parametrize(
    ("name", "replacement"),
    [
        ("_parse", _die),  # a worker that dies
        ("_parse", _raise_unrebuildable),  # a worker's error that does not rebuild here
        ("start_method", _NoProcesses),  # a worker that cannot start
    ],
)
def test_units_a_worker_cannot_deliver_are_parsed_in_this_process(
    monkeypatch: pytest.MonkeyPatch, name: str, replacement: object
) -> None:
    serial, _ = _build(0)
    # Fault injection at the worker boundary: its body (`_parse`) or its start; none can be caused on demand.
    monkeypatch.setattr(parse_ahead, name, replacement)
    survived, parsed_ahead = _build(2)
    assert parsed_ahead == 0 and survived == serial


def test_parsed_ahead_without_workers_parses_nothing(tmp_path: Path) -> None:
    with ParsedAhead([(str(tmp_path / "a.jsonl"), "claude", 10)], 0) as ahead:
        assert ahead.take(str(tmp_path / "a.jsonl")) is None


@requires_real_corpus
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process parents from /proc")
def test_a_threaded_process_builds_through_a_forkserver() -> None:
    """Prefect runs tasks in threads: a forked copy of a threaded process could inherit a held lock."""
    serial, _ = _build(0)
    release = threading.Event()
    waiting = threading.Thread(target=release.wait, daemon=True)
    waiting.start()
    try:
        method = start_method().get_start_method()
        with ParsedAhead(_real_jobs()[:4], 2) as ahead:
            parents = {_parent_of(child.pid) for child in multiprocessing.active_children()}
            assert ahead.started == 2
        threaded, parsed_ahead = _build(2)
    finally:
        release.set()
        waiting.join()
    assert method == "forkserver"
    assert parents and os.getpid() not in parents  # the forkserver's children, not forks of this process
    assert parsed_ahead == len(serial["files"]) and threaded == serial


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="ascii") as status:
        return int(status.read().rsplit(")", 1)[1].split()[1])


def _undeclared_role(path: str, source: str) -> bytes:
    outcome = parse_ahead.parse_session_file(Path(path), source)
    message = dataclasses.replace(outcome.messages[0], role="narrator")  # outside `Role`
    changed = dataclasses.replace(outcome, messages=(message,), skipped_records=dict(outcome.skipped_records))
    return parse_ahead._OUTCOME_ENCODER.encode(changed)


@requires_real_corpus
def test_an_outcome_outside_the_record_types_is_parsed_here_instead(monkeypatch: pytest.MonkeyPatch) -> None:
    serial, _ = _build(0)
    # Fault injection inside the worker process: a parser never produces a value outside its types.
    monkeypatch.setattr(parse_ahead, "_parse", _undeclared_role)
    parallel, parsed_ahead = _build(2)
    assert parsed_ahead == 0 and parallel == serial


@pytest.mark.parametrize(
    ("loadavg", "expected"),
    [
        ("1.02 0.80 0.40 1/250 12345", 0),  # the minute's load was this process: nobody else runs
        ("3.50 2.00 1.00 5/250 12345", 3.5),  # four others runnable now, fewer on average
        ("0.40 0.30 0.20 3/250 12345", 0.4),  # a burst now, little over the minute
        ("2.00 1.00 0.50", 2.0),  # no task counts: the average alone
    ],
)
def test_load_of_others(loadavg: str, expected: float) -> None:
    assert parse_ahead.load_of_others(loadavg) == expected
