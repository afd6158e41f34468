"""Parse throughput on the real corpus (and optionally on generated histories); prints numbers only.

Rates are given per CPU second of this process (stable on a shared machine) and per wall second.

Usage: python bench/parse_real_corpus.py [--corpus DIR] [--repeat N] [--generated-scale N --rounds N]
"""

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from fixtures.shared import REAL_CORPUS as SHARED_REAL_CORPUS
from fixtures.shared import REAL_CORPUS_SOURCES

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from obelisk_session_evidence.providers.native.parsers import default_roots, iter_session_paths, parse_session_file
from obelisk_session_evidence.qualify.session_writers import write_native_histories


def _units(corpus: Path) -> list[tuple[str, Path]]:
    """Every parseable unit of the real corpus: files, Kimi session folders, DSH session files."""
    units = []
    for folder, source in REAL_CORPUS_SOURCES.items():
        if source == "dsh":  # the snapshots keep their publisher's names: parse each file
            units += [(source, path) for path in sorted((corpus / folder).glob("*/session*.jsonl"))]
        else:
            units += [(source, path) for path in iter_session_paths(corpus / folder, source)]
    return units


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def _measure(units: list[tuple[str, Path]], repeat: int) -> dict[str, Counter[str]]:
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    for source, path in units:
        started, cpu_started = time.perf_counter(), time.process_time()
        for _ in range(repeat):
            outcome = parse_session_file(path, source)
        elapsed = (time.perf_counter() - started) / repeat
        cpu = (time.process_time() - cpu_started) / repeat
        row = totals[source]
        row["files"] += 1
        row["bytes"] += _size(path)
        row["seconds_us"] += int(elapsed * 1e6)
        row["cpu_us"] += int(cpu * 1e6)
        row["sessions"] += len(outcome.sessions)
        row["messages"] += len(outcome.messages)
        row["tool_calls"] += len(outcome.tool_calls)
        row["failures"] += sum(call.failed for call in outcome.tool_calls)
        row["summaries"] += len(outcome.summaries)
        row["skipped"] += outcome.skipped_total
    return totals


def _report(title: str, totals: dict[str, Counter[str]]) -> None:
    print(title)
    header = f"{'source':8}{'files':>6}{'MB':>8}{'sessions':>9}{'messages':>10}{'calls':>8}{'failed':>8}"
    print(header + f"{'summaries':>10}{'skipped':>8}{'MB/cpu-s':>9}{'msg/cpu-s':>10}{'MB/s':>7}")
    grand: Counter[str] = Counter()
    for source, row in sorted(totals.items()) + [("ALL", grand)]:
        if source != "ALL":
            grand.update(row)
        seconds, cpu = max(row["seconds_us"] / 1e6, 1e-9), max(row["cpu_us"] / 1e6, 1e-9)
        print(
            f"{source:8}{row['files']:>6}{row['bytes'] / 1e6:>8.2f}{row['sessions']:>9}{row['messages']:>10}"
            f"{row['tool_calls']:>8}{row['failures']:>8}{row['summaries']:>10}{row['skipped']:>8}"
            f"{row['bytes'] / 1e6 / cpu:>9.1f}{row['messages'] / cpu:>10.0f}{row['bytes'] / 1e6 / seconds:>7.1f}"
        )


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=SHARED_REAL_CORPUS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--generated-scale", type=int, default=0, help="also bench generated histories")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    real = _measure(_units(args.corpus), args.repeat)
    _report(f"real corpus ({args.corpus}), mean of {args.repeat} runs", real)
    if args.generated_scale:
        with tempfile.TemporaryDirectory() as scratch:
            started = time.perf_counter()
            manifest = write_native_histories(Path(scratch), scale=args.generated_scale, rounds_per_session=args.rounds)
            written = time.perf_counter() - started
            messages = sum(s.decisions + s.meta_messages for s in manifest.sessions)
            print(f"\ngenerated {len(manifest.sessions)} sessions, {messages} messages in {written:.1f}s")
            roots = default_roots(manifest.home)
            units = [(s, p) for s in roots for p in iter_session_paths(roots[s], s)]  # type: ignore[arg-type]
            _report("generated histories, 1 run", _measure(units, 1))


if __name__ == "__main__":
    main()
