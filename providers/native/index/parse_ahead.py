"""Parsing ahead in worker processes while this process writes the index (large builds only).

Parsing is about half of a full build and SQLite's writes (full-text indexing mostly) the rest.
When a refresh must read many new bytes and more than one core is free, the new units' parses go
to worker processes, and the refresh writes each outcome in its own order as it arrives. At most
`IN_FLIGHT_PER_WORKER` outcomes per worker wait in memory, so peak memory stays that of a few
files. Appends, re-reads and small refreshes parse in process. A parse that raises in a worker
fails its unit as it would in process; a worker that dies leaves its units to this process.
"""

import dataclasses
import multiprocessing
import os
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from types import MappingProxyType
from typing import Final

import msgspec

from contracts.config import SourceKind
from providers.native.parsers import PARSER_MODULES, ParseOutcome, parse_session_file

MIN_BYTES: Final = 32_000_000
"""New bytes below which a refresh parses in process (the workers' start would not pay off)."""
IN_FLIGHT_PER_WORKER: Final = 2
MAX_WORKERS: Final = 2
"""Parsing a unit costs about what writing it does, so past two workers the writer is the bottleneck
and more would only hold memory (about 30 MB each)."""
Job = tuple[str, SourceKind, int]
"""A unit to parse from offset 0: (path, source, size in bytes)."""


def worker_count(jobs: list[Job], *, cpus: int | None = None, load: float | None = None) -> int:
    """How many parser workers a refresh should use for `jobs` (0: parse in process).

    Free cores are the cores this process may run on less what others use (`others_load`); workers
    run only when more than one is free (this process keeps writing beside them), and never more
    than the jobs after the first (one file alone leaves nothing to write while it is parsed).
    """
    if len(jobs) < 2 or sum(size for *_, size in jobs) < MIN_BYTES:
        return 0
    cpus = len(os.sched_getaffinity(0)) if cpus is None else cpus
    free = cpus - (others_load() if load is None else load)
    return min(MAX_WORKERS, int(free), len(jobs) - 1) if free > 1 else 0


def others_load() -> float:
    """How many cores other processes keep busy: the one-minute load average, or the tasks runnable
    right now besides this one when fewer (the average counts this process's own last minute)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as status:
            return load_of_others(status.read())
    except OSError:
        return os.getloadavg()[0]


def load_of_others(loadavg: str) -> float:
    """`others_load` from the text of `/proc/loadavg` (`1.50 0.90 0.40 3/250 12345`)."""
    fields = loadavg.split()
    average = float(fields[0])
    running = fields[3].split("/")[0] if len(fields) > 3 else ""
    return min(average, max(0, int(running) - 1)) if running.isdigit() else average


class ParsedAhead:
    """Outcomes of the jobs, parsed by `workers` processes in job order; `take` them in that order."""

    def __init__(self, jobs: Iterable[Job], workers: int) -> None:
        self._pending = iter(jobs)
        self._futures: dict[str, Future[bytes]] = {}
        self._limit = workers * IN_FLIGHT_PER_WORKER
        self._pool: ProcessPoolExecutor | None = None
        self._broken = False
        if workers > 0:
            self._pool = ProcessPoolExecutor(workers, mp_context=_start_method())
            self._submit()

    def take(self, path: str) -> ParseOutcome | None:
        """The outcome parsed for `path`, or None when it was not parsed ahead (parse it here).

        A parse that raised re-raises here, as it would have in process.
        """
        future = self._futures.pop(path, None)
        if future is None:
            return None
        self._submit()
        try:
            encoded = future.result()
        except BrokenProcessPool:
            self._broken = True  # this unit and the rest are parsed in process
            return None
        try:
            outcome = _OUTCOME_DECODER.decode(encoded)
        except msgspec.DecodeError:  # a value outside a record's declared type: parse it here, unchecked as ever
            return None
        return dataclasses.replace(outcome, skipped_records=MappingProxyType(dict(outcome.skipped_records)))

    def close(self) -> None:
        """Stop the workers; parses not yet taken are dropped."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._futures.clear()

    def __enter__(self) -> "ParsedAhead":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _submit(self) -> None:
        while self._pool is not None and not self._broken and len(self._futures) < self._limit:
            job = next(self._pending, None)
            if job is None:
                return
            path, source, _ = job
            try:
                self._futures[path] = self._pool.submit(_parse, path, source)
            except BrokenProcessPool:
                self._broken = True


def _start_method() -> multiprocessing.context.BaseContext:
    """`fork` from a single-threaded process (nothing to import, pages shared); otherwise a forkserver
    that imports the parsers once (a forked copy of a threaded process may inherit a held lock)."""
    if threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PARSER_MODULES))
    return context


def _parse(path: str, source: SourceKind) -> bytes:
    """In a worker: the parse as MessagePack, written and read in C (twice as fast as pickling the
    records; a mapping proxy, the skip counts' type, cannot be pickled at all)."""
    outcome = parse_session_file(Path(path), source)
    return _OUTCOME_ENCODER.encode(dataclasses.replace(outcome, skipped_records=dict(outcome.skipped_records)))


_OUTCOME_ENCODER: Final = msgspec.msgpack.Encoder()
_OUTCOME_DECODER: Final = msgspec.msgpack.Decoder(ParseOutcome)
