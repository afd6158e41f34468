"""Parsing ahead in worker processes while this process writes the index (large builds only).

Parsing is about half of a full build and SQLite's writes (full-text indexing mostly) the rest.
When a refresh must read many new bytes and more than one core is free, the new units' parses go
to worker processes, and the refresh writes each outcome in its own order as it arrives. Each
worker holds at most the outcome it is sending plus `PIPE_BYTES` in its pipe before it waits for
this process to read, so peak memory stays that of a few files. Appends, re-reads and small
refreshes parse in process. A parse that raises in a worker fails its unit as it would in process;
a worker that dies leaves its units to this process.
"""

import contextlib
import dataclasses
import fcntl
import multiprocessing
import os
import pickle
import signal
import threading
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection
from pathlib import Path
from types import MappingProxyType
from typing import Final

import msgspec

from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.native.parsers import PARSER_MODULES, ParseOutcome, parse_session_file

MIN_BYTES: Final = 32_000_000
"""New bytes below which a refresh parses in process (the workers' start would not pay off)."""
PIPE_BYTES: Final = 1 << 20
"""Each worker's pipe (Linux's default ceiling for an unprivileged process; 64 KiB elsewhere)."""
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
    """Outcomes of the jobs, parsed by `workers` processes; `take` them in job order.

    Job `i` goes to worker `i mod workers`, which parses its share in order and writes each outcome
    to its own pipe; this process reads them in the main thread as it takes them. No executor: its
    feeder and result threads, pickled calls and results and futures cost 0.2 s CPU of a 2.7 s build
    of the real corpus ×10.
    """

    def __init__(self, jobs: Iterable[Job], workers: int) -> None:
        self._workers: list[_Worker] = []
        self._places: dict[str, tuple[_Worker, int]] = {}
        self.delivered = 0
        """Outcomes taken that a worker parsed (the others were, or are to be, parsed in process)."""
        if workers > 0:
            pending = list(jobs)
            context = start_method()
            for number in range(workers):
                share = [(path, source) for path, source, _ in pending[number::workers]]
                try:
                    worker = _Worker(context, share, others=self._workers)
                except OSError:  # no process to be had (limits, memory): this share is parsed in process
                    break
                except BaseException:
                    self.close()  # the workers already started do not outlive a failed start
                    raise
                self._workers.append(worker)
                self._places.update((path, (worker, position)) for position, (path, _) in enumerate(share))

    @property
    def started(self) -> int:
        """Worker processes running (fewer than asked when no process could be had; 0 once closed)."""
        return len(self._workers)

    def take(self, path: str) -> ParseOutcome | None:
        """The outcome parsed for `path`, or None when it was not parsed ahead (parse it here).

        A parse that raised re-raises here, as it would have in process.
        """
        place = self._places.pop(path, None)
        if place is None:
            return None
        worker, position = place
        encoded = worker.result(position)
        if encoded is None:
            return None
        try:
            outcome = _OUTCOME_DECODER.decode(encoded)
        except msgspec.DecodeError:  # a value outside a record's declared type: parse it here, unchecked as ever
            return None
        self.delivered += 1
        return dataclasses.replace(outcome, skipped_records=MappingProxyType(dict(outcome.skipped_records)))

    def close(self) -> None:
        """Stop the workers; parses not yet taken are dropped."""
        for worker in self._workers:
            worker.stop()
        self._workers.clear()
        self._places.clear()

    def __enter__(self) -> "ParsedAhead":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


_Context = multiprocessing.context.ForkContext | multiprocessing.context.ForkServerContext
"""The start methods `start_method` chooses between."""


class _Worker:
    """One parser process and the pipe its outcomes arrive on, read in the order it parses them."""

    def __init__(
        self,
        context: _Context,
        share: list[tuple[str, SourceKind]],
        *,
        others: list["_Worker"],
    ) -> None:
        self._results, sender = context.Pipe(duplex=False)
        try:
            _widen(sender)
            # A forked worker closes its copies of the pipes' reading ends: once this process is gone, its
            # next write fails and it exits, instead of waiting forever on a full pipe it holds open itself.
            forked = context.get_start_method() == "fork"
            readers = tuple(worker._results.fileno() for worker in [*others, self]) if forked else ()
            # The parse goes by reference, so a forkserver's worker runs the same function a forked one would.
            self._process = context.Process(target=_serve, args=(share, sender, readers, _parse), daemon=True)
            self._process.start()
        except BaseException:
            self._results.close()
            raise
        finally:
            sender.close()  # only the worker writes: its death is an end of file here
        self._read = 0
        """How many outcomes were read from the pipe so far (the position of the next one)."""
        self._broken = False

    def result(self, position: int) -> bytes | None:
        """The encoded outcome of the worker's `position`th job (re-raising its parse's error); None
        when the worker died or the job was passed over (the caller parses it then)."""
        try:
            while not self._broken and self._read <= position:
                message = self._results.recv_bytes()
                self._read += 1
                if self._read > position:
                    if not message:  # the job's error follows: raised here, or parsed in process
                        _raised(self._results.recv_bytes())
                    return message or None
                if not message:
                    self._results.recv_bytes()  # a passed-over job's error
        except (EOFError, OSError):
            self._broken = True  # this unit and the worker's others are parsed in process
        return None

    def stop(self) -> None:
        """Close the pipe and end the process (one still parsing is terminated, not waited for)."""
        self._results.close()
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()
        self._process.close()


def _raised(pickled: bytes) -> None:
    """Raise the error a worker's parse raised; return (parse here) when it could not be sent."""
    try:
        error = pickle.loads(pickled) if pickled else None
    except Exception:
        return None
    if isinstance(error, Exception):
        raise error
    return None


def _widen(sender: Connection) -> None:
    """A pipe of `PIPE_BYTES`: a worker writes a typical outcome without waiting for each read."""
    with contextlib.suppress(OSError, AttributeError):  # only Linux has F_SETPIPE_SZ; the default still works
        fcntl.fcntl(sender.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def _serve(
    share: list[tuple[str, SourceKind]],
    sender: Connection,
    readers: tuple[int, ...],
    parse: Callable[[str, SourceKind], bytes],
) -> None:
    """In a worker: parse the share in order and send each outcome (an error: an empty message, then
    the error pickled). A full pipe holds the worker until this process reads; a closed one ends it."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the CLI's handlers, inherited through fork:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the refresh stops its workers itself
    for descriptor in readers:
        os.close(descriptor)
    with contextlib.suppress(BrokenPipeError):
        for path, source in share:
            try:
                encoded = parse(path, source)
            except Exception as error:
                sender.send_bytes(b"")
                sender.send_bytes(_pickled(error))
                continue
            sender.send_bytes(encoded)
            del encoded


def _pickled(error: Exception) -> bytes:
    """The error pickled, without its traceback; empty when it does not pickle (parse it there)."""
    try:
        return pickle.dumps(error.with_traceback(None))
    except Exception:
        return b""


def start_method() -> _Context:
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
