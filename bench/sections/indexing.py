"""Section 3: full builds, no-change and append refreshes, and peak memory on one large session file.

The real corpus ×10 (ten copies of every real folder) is built in a child process three ways: as
refresh decides (parser workers only when more than one core is free), in process, and with two
parser workers; its CPU is the child's and its workers' (`RUSAGE_CHILDREN` once they are reaped).
Builds go into a new temporary index each time (`refresh_index` over the roots: parse, resolve
repositories, write rows and full-text rows, one transaction per file). Refreshes run against the
cached corpora's indexes; an append adds one round to one Claude session (the shape Claude Code
appends, `bench.refresh_incremental._append_round`) and the bench cuts the file back afterwards.
Peak memory is measured in a child process (`VmHWM`), next to the same child's RSS before it
starts the refresh.
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from bench._corpus import REAL_CORPUS, REAL_ROOTS
from bench._report import ROOT, Table, count, ms, ratio
from bench._scaled import Corpus, restore_append_target
from bench.refresh_incremental import _append_round
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file

NOCHANGE_TARGET_S: Final = 0.3
BUILD_TARGET_MB_CPU_S: Final = 105.0
BUILD_TARGET_PEAK_MIB: Final = 150.0
REAL_COPIES: Final = 10
BUILD_MODES: Final = {"as refresh decides": None, "in process": 0, "2 parser workers": 2}
"""How the real corpus ×10 is built: the workers refresh chooses (None), or a fixed count."""


def build_table(real_repeat: int, scaled: Sequence[tuple[str, Corpus]]) -> tuple[Table, dict[str, float]]:
    """3a: full builds of the real corpus and of scaled generated corpora; returns the real MB/s (wall, CPU)."""
    table = Table(
        "3a. Indexing: full build (new index each time)",
        ("corpus", "n", "files", "MB", "messages", "wall s (median)", "CPU s", "MB/s", "MB per CPU-s", "messages/s"),
    )
    figures: dict[str, float] = {}
    if real_repeat and all(path.exists() for paths in REAL_ROOTS.values() for path in paths):
        wall, cpu = _build_rows(table, f"real corpus ({REAL_CORPUS})", REAL_ROOTS, real_repeat)
        figures.update(real_build_mb_s=wall, real_build_mb_cpu_s=cpu)
        figures.update(_scaled_real_rows(table))
    elif real_repeat:
        table.skip("real corpus", f"{REAL_CORPUS} not found; set NATIVE_REAL_CORPUS")
    else:
        table.skip("real corpus", "not in this profile")
    for label, corpus in scaled:
        _build_rows(table, f"generated, {label} messages", corpus.roots, 1)
    table.notes += [
        f"Targets: >= {BUILD_TARGET_MB_CPU_S:.0f} MB per CPU-second on the real corpus ×{REAL_COPIES} (as refresh"
        f" decides), with peak memory <= {BUILD_TARGET_PEAK_MIB:.0f} MB. MB are session-file bytes read; a shared"
        " machine's wall time includes waiting for the CPU.",
        f"Real corpus ×{REAL_COPIES}: CPU and peak memory include the parser workers' (peak = the building"
        " process's high-water mark plus each worker's); `workers` is how many parsed beside the writing process.",
    ]
    return table, figures


def _scaled_real_rows(table: Table) -> dict[str, float]:
    """The real corpus ×10 built in a child process per mode; the figures of the mode refresh decides."""
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ose-bench-real10-") as work:
        for mode, workers in BUILD_MODES.items():
            command = [sys.executable, "-m", "bench.sections.indexing", "--build-child", work, str(workers)]
            answer = subprocess.run(
                command, cwd=ROOT, env=_child_environment(), capture_output=True, text=True, check=False, timeout=3600
            )
            label = f"real corpus ×{REAL_COPIES}, {mode}"
            if answer.returncode != 0:
                table.skip(label, f"child failed: {answer.stderr.strip()[-160:]}")
                continue
            built = json.loads(answer.stdout.strip().splitlines()[-1])
            megabytes = built["bytes"] / 1e6
            peak = (built["peak_kib"] + built["workers"] * built["worker_peak_kib"]) / 1024
            table.add(
                f"{label} ({built['workers']} workers, peak {peak:.0f} MiB)",
                1,
                count(built["files"]),
                f"{megabytes:.1f}",
                count(built["messages"]),
                f"{built['wall_s']:.2f}",
                f"{built['cpu_s']:.2f}",
                f"{megabytes / built['wall_s']:.1f}",
                f"{megabytes / built['cpu_s']:.1f}",
                count(built["messages"] / built["wall_s"]),
            )
            if workers is None:
                figures.update(
                    real10_build_mb_cpu_s=megabytes / built["cpu_s"],
                    real10_build_mb_s=megabytes / built["wall_s"],
                    real10_build_peak_mib=peak,
                    real10_build_workers=built["workers"],
                )
    return figures


def _build_rows(table: Table, label: str, roots, repeat: int) -> tuple[float, float]:
    walls, cpus, report = [], [], None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="ose-bench-build-") as work:
            started, cpu = time.perf_counter(), time.process_time()
            report = refresh_index(index_file(Path(work) / "index"), roots)
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
    assert report is not None
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    megabytes = report.bytes_read / 1e6
    table.add(
        label,
        repeat,
        count(report.files_seen),
        f"{megabytes:.1f}",
        count(report.messages_written),
        f"{wall:.2f}",
        f"{cpu:.2f}",
        f"{megabytes / wall:.1f}",
        f"{megabytes / cpu:.1f}",
        count(report.messages_written / wall),
    )
    return megabytes / wall, megabytes / cpu


def refresh_table(
    nochange: Corpus | None, append: Sequence[tuple[str, str, Corpus]], *, repeat: int
) -> tuple[Table, dict[str, float]]:
    """3b: no-change refreshes, and one appended round as the corpus grows in bytes and in files."""
    table = Table(
        "3b. Indexing: refresh when little or nothing changed",
        (
            "refresh",
            "corpus",
            "files",
            "MB",
            "n",
            "wall ms p50",
            "wall ms min–max",
            "CPU ms p50",
            "bytes read",
            "p50 ÷ 1×",
        ),
    )
    figures: dict[str, float] = {}
    if nochange is not None:
        refresh_index(nochange.index_path, nochange.roots)
        walls, cpus = [], []
        for _ in range(repeat):
            started, cpu = time.perf_counter(), time.process_time()
            report = refresh_index(nochange.index_path, nochange.roots)
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
            assert report.files_unchanged == report.files_seen and not report.content_changed
        figures["nochange_s"] = statistics.median(walls)
        figures["nochange_cpu_s"] = statistics.median(cpus)
        figures["nochange_files"] = report.files_seen
        table.add(
            "no change",
            _corpus_label(nochange),
            count(report.files_seen),
            f"{nochange.stats['bytes'] / 1e6:.0f}",
            repeat,
            ms(statistics.median(walls)),
            f"{ms(min(walls))}–{ms(max(walls))}",
            ms(statistics.median(cpus)),
            0,
            "",
        )
    base: dict[str, float] = {}
    for growth, factor, corpus in append:
        walls, cpus, read = [], [], []
        # Start from an index as fresh as its files: a migration since the cached index was built may
        # have it read every file again once, which is no append.
        refresh_index(corpus.index_path, corpus.roots)
        try:
            for number in range(repeat):
                _append_round(corpus.append_target, number)
                started, cpu = time.perf_counter(), time.process_time()
                report = refresh_index(corpus.index_path, corpus.roots)
                walls.append(time.perf_counter() - started)
                cpus.append(time.process_time() - cpu)
                read.append(report.bytes_read)
                assert report.files_appended == 1 and report.files_reread == 0, "the append was not incremental"
        finally:
            restore_append_target(corpus)
        p50 = statistics.median(walls)
        base.setdefault(growth, p50)
        figures[f"append_{growth}_{factor.rstrip('×')}x_s"] = p50
        figures[f"append_{growth}_{factor.rstrip('×')}x_cpu_s"] = statistics.median(cpus)
        table.add(
            f"append one round ({growth} grow {factor})",
            _corpus_label(corpus),
            count(corpus.stats["files"]),
            f"{corpus.stats['bytes'] / 1e6:.1f}",
            repeat,
            ms(p50),
            f"{ms(min(walls))}–{ms(max(walls))}",
            ms(statistics.median(cpus)),
            count(statistics.median(read)),
            ratio(p50, base[growth]),
        )
    table.notes += [
        f"Targets: no-change refresh of 10,000 files <= {NOCHANGE_TARGET_S} s; an append costs O(appended bytes),"
        " so it stays flat as the bytes grow (the bytes read column is the appended round only).",
        "Growth in files adds one stat per file to every refresh (what the no-change row costs), so an"
        " append over 100× the files is expected to cost about what a no-change refresh of those files does.",
    ]
    return table, figures


def _corpus_label(corpus: Corpus) -> str:
    stats = corpus.stats
    return f"{count(stats['messages'])} msgs, {stats['rounds']} rounds/session"


def memory_table(session_file: Path | None, megabytes: int) -> Table:
    """3c: peak RSS of a process that indexes one large session file from nothing."""
    table = Table(
        "3c. Indexing: peak memory for one large session file (new process, new index)",
        (
            "file",
            "MB",
            "messages",
            "tool calls",
            "wall s",
            "MB/s",
            "RSS before refresh MiB",
            "peak RSS MiB",
            "peak − before MiB",
        ),
    )
    if session_file is None:
        table.skip(f"one {megabytes} MB Claude session", "not in this profile")
        return table
    with tempfile.TemporaryDirectory(prefix="ose-bench-rss-") as work:
        command = [
            sys.executable,
            "-m",
            "bench.sections.indexing",
            "--rss-child",
            str(session_file.parent.parent),
            str(Path(work) / "index"),
        ]
        answer = subprocess.run(
            command, cwd=ROOT, env=_child_environment(), capture_output=True, text=True, check=False, timeout=3600
        )
    if answer.returncode != 0:
        table.skip(f"one {megabytes} MB Claude session", f"child failed: {answer.stderr.strip()[-160:]}")
        return table
    result = json.loads(answer.stdout.strip().splitlines()[-1])
    before, peak = result["before_kib"] / 1024, result["peak_kib"] / 1024
    size = session_file.stat().st_size / 1e6
    table.add(
        "one Claude Code session (generated: 4 records per round, ~1.5 KB tool output)",
        f"{size:.0f}",
        count(result["messages"]),
        count(result["tool_calls"]),
        f"{result['seconds']:.1f}",
        f"{size / result['seconds']:.1f}",
        f"{before:.0f}",
        f"{peak:.0f}",
        f"{peak - before:.0f}",
    )
    return table


def _child_environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _rss_child(projects_root: str, index_dir: str) -> None:
    """In the child: RSS after imports, then index the file from nothing and report the peak.

    `/proc/self/status` is read rather than `ru_maxrss`, which Linux carries over from the parent
    across fork and exec (it would report the bench's own size).
    """
    before = _status_kib("VmRSS")
    started = time.perf_counter()
    report = refresh_index(index_file(Path(index_dir)), {"claude": [Path(projects_root)]})
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "before_kib": before,
                "peak_kib": _status_kib("VmHWM"),
                "seconds": seconds,
                "messages": report.messages_written,
                "tool_calls": report.tool_calls_written,
            }
        )
    )


def _build_child(work: str, workers: str) -> None:
    """In the child: copy the real corpus ×10 (not timed), build it, report CPU with the workers'.

    `RUSAGE_CHILDREN` counts the workers once reaped: forked ones when the refresh joins them, a
    forkserver's when the server itself is stopped and reaped here.
    """
    import multiprocessing.forkserver
    import shutil

    roots: dict[str, list[Path]] = {}
    for copy in range(REAL_COPIES):
        for source, paths in REAL_ROOTS.items():
            for path in paths:
                target = Path(work) / f"copy{copy}" / path.name
                if not target.exists():
                    shutil.copytree(path, target, symlinks=True)
                roots.setdefault(source, []).append(target)
    index = Path(work) / f"index-{workers}"
    before = _cpu_seconds(resource.RUSAGE_SELF)
    started = time.perf_counter()
    report = refresh_index(index_file(index), roots, workers=None if workers == "None" else int(workers))
    wall = time.perf_counter() - started
    server = multiprocessing.forkserver._forkserver
    if server._forkserver_pid is not None:
        server._stop()
    cpu = _cpu_seconds(resource.RUSAGE_SELF) + _cpu_seconds(resource.RUSAGE_CHILDREN) - before
    shutil.rmtree(index)
    print(
        json.dumps(
            {
                "bytes": report.bytes_read,
                "files": report.files_seen,
                "messages": report.messages_written,
                "wall_s": wall,
                "cpu_s": cpu,
                "workers": report.parser_workers,
                "peak_kib": _status_kib("VmHWM"),
                "worker_peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
            }
        )
    )


def _cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--rss-child":
        _rss_child(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "--build-child":
        _build_child(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(
            "usage: python -m bench.sections.indexing --rss-child PROJECTS_ROOT INDEX_DIR"
            " | --build-child WORK_DIR WORKERS"
        )
