"""Cold `run` processes against the bare interpreter, pair by pair, in one run.

Builds a small demo index (the demo's generated histories of five agents, enabled and refreshed
through the CLI), then for each situation, admitted (the demo's repeated failing test) and not
admitted (the same situation for a project that is not enabled), runs N pairs of

    bare:  .venv/bin/python -I -c 'import sqlite3, json'
    run:   obelisk-session-evidence run --situation FILE --format json

back to back, so that a load drift hits both halves of a pair alike. A pair's ratio is its run's
wall time over its bare wall time; the report gives the median of the pair ratios, the medians of
each series (wall and CPU), and the issue's targets (admitted <= 8x, not admitted <= 5x). Each
round also pairs the bare interpreter with the stack's floor (`bench._processes.STACK_FLOOR`: click
and pydantic imported, one closed model validated), the least any `run` can cost here.

`--tree PATH` (repeatable) runs the same pairs for other source trees (for example an export of
an earlier commit: `git archive <commit> | tar -x -C /tmp/before`), interleaved with this one in
the same loop, so before and after are measured under the same load. `--importtime` adds the top
outermost imports (`python -X importtime`, cumulative, the minimum of 3 runs) per situation and tree.
The rank table's and tiktoken's costs are measured once, in a new process.

    .venv/bin/python -m bench.cold_run [--pairs 8] [--tree /tmp/before] [--importtime] [--out FILE]
"""

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from bench._processes import BARE_INTERPRETER, STACK_FLOOR
from bench._report import ROOT
from obelisk_session_evidence.contracts.sources import SOURCE_KINDS

TARGETS: Final = {"admitted": 8.0, "not_admitted": 5.0}
"""Issue 17: a cold `run` process at most this many times the bare interpreter (pair by pair)."""
DEFAULT_OUT: Final = ROOT / "bench" / "results" / "cold_run.json"
_IMPORTTIME: Final = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


@dataclass(slots=True)
class Series:
    """Wall and CPU seconds (user + system) of each process, in pair order."""

    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)


@dataclass(slots=True)
class Pairs:
    """One situation under one tree: the bare interpreter and the `run` process, pair by pair."""

    tree: str
    situation: str
    bare: Series = field(default_factory=Series)
    run: Series = field(default_factory=Series)
    verdicts: set[str] = field(default_factory=set)

    def summary(self) -> dict[str, object]:
        ratios = [run / bare for run, bare in zip(self.run.walls, self.bare.walls, strict=False)]
        cpu_ratios = [run / bare for run, bare in zip(self.run.cpus, self.bare.cpus, strict=False) if bare > 0]
        median_ratio = statistics.median(ratios)
        target = TARGETS.get(self.situation)
        return {
            "tree": self.tree,
            "situation": self.situation,
            "pairs": len(ratios),
            "bare_wall_ms_median": round(statistics.median(self.bare.walls) * 1000, 1),
            "run_wall_ms_median": round(statistics.median(self.run.walls) * 1000, 1),
            "bare_cpu_ms_median": round(statistics.median(self.bare.cpus) * 1000, 1),
            "run_cpu_ms_median": round(statistics.median(self.run.cpus) * 1000, 1),
            "wall_ratio_median": round(median_ratio, 2),
            "wall_ratio_min": round(min(ratios), 2),
            "wall_ratio_max": round(max(ratios), 2),
            "cpu_ratio_median": round(statistics.median(cpu_ratios), 2) if cpu_ratios else None,
            "target_ratio": target,
            "met": None if target is None else median_ratio <= target,
            "decisions": sorted(self.verdicts),
        }


def _spawn(argv: list[str], environ: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall and CPU seconds of one child process (its own rusage, from wait4) and its stdout; a
    failing child stops the bench."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout, stderr = process.stdout.read(), process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    if process.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} exited {process.returncode}: {stderr.decode()[-300:]}")
    return wall, usage.ru_utime + usage.ru_stime, stdout


def build_demo_state(home: Path) -> dict[str, Path]:
    """The demo's histories enabled and refreshed under `home`; the two situation files."""
    environ = _environment(ROOT, home)
    histories = subprocess.run(
        [sys.executable, "-m", "fixtures.demo_histories", str(home / "histories")],
        env=environ,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    roots = dict(line.split("=", 1) for line in histories.split())
    roots = {name: shlex.split(value)[0] for name, value in roots.items()}
    sources = SOURCE_KINDS
    cli = [sys.executable, "-m", "obelisk_session_evidence"]
    subprocess.run(
        [
            *cli,
            "enable",
            "--surface",
            "replan-history",
            "--agent-id",
            "agent-fixture",
            "--project-id",
            "project-fixture",
            "--repository-id",
            "repo-fixture",
            "--repo-root",
            roots["REPO_ROOT"],
            *(arg for s in sources for arg in ("--source-root", f"{s}={roots[s.upper() + '_ROOT']}")),
            *("--trigger", "replan_repetition", "--trigger", "operator_requested_history"),
            "--format",
            "json",
        ],
        env=environ,
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            *cli,
            "index",
            "refresh",
            *(arg for s in sources for arg in ("--root", f"{s}={roots[s.upper() + '_ROOT']}")),
            "--format",
            "json",
        ],
        env=environ,
        check=True,
        capture_output=True,
    )
    from fixtures.situations import situation

    admitted = situation(situation_id="demo-repeat-failure")
    not_admitted = json.loads(json.dumps(admitted))
    not_admitted["scope"]["project_id"] = "project-not-enabled"
    files = {"admitted": home / "admitted.json", "not_admitted": home / "not_admitted.json"}
    files["admitted"].write_text(json.dumps(admitted))
    files["not_admitted"].write_text(json.dumps(not_admitted))
    return files


def _environment(tree: Path, home: Path) -> dict[str, str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "PREFECT"))}
    return {**environ, "PYTHONPATH": str(tree), "OBELISK_SESSION_EVIDENCE_HOME": str(home)}


def _run_argv(situation_file: Path) -> list[str]:
    script = Path(sys.executable).with_name("obelisk-session-evidence")
    return [str(script), "run", "--situation", str(situation_file), "--format", "json"]


def _decision_code(stdout: bytes) -> str:
    decision = json.loads(stdout)
    return f"{decision['admission']['reason_code']}/{decision['comparison']['verdict']}"


def measure(trees: list[Path], files: dict[str, Path], home: Path, pairs: int) -> list[Pairs]:
    """Every tree and situation, pair by pair, interleaved; one warm-up pair each is dropped."""
    bare = [sys.executable, *BARE_INTERPRETER]
    series = {(tree, name): Pairs(str(tree), name) for tree in trees for name in files}
    floor = Pairs("-", "stack_floor")
    for round_number in range(pairs + 1):
        bare_wall, bare_cpu, _ = _spawn(bare, _environment(ROOT, home))
        floor_wall, floor_cpu, _ = _spawn([sys.executable, *STACK_FLOOR], _environment(ROOT, home))
        if round_number > 0:
            floor.bare.walls.append(bare_wall)
            floor.bare.cpus.append(bare_cpu)
            floor.run.walls.append(floor_wall)
            floor.run.cpus.append(floor_cpu)
        for (tree, name), pair in series.items():
            environ = _environment(tree, home)
            bare_wall, bare_cpu, _ = _spawn(bare, environ)
            run_wall, run_cpu, stdout = _spawn(_run_argv(files[name]), environ)
            if round_number == 0:
                continue  # the warm-up pair: page cache and bytecode
            pair.bare.walls.append(bare_wall)
            pair.bare.cpus.append(bare_cpu)
            pair.run.walls.append(run_wall)
            pair.run.cpus.append(run_cpu)
            code = _decision_code(stdout)
            if code.startswith("admitted/") != (name == "admitted"):
                raise SystemExit(f"the {name} situation was decided {code}: the series would measure the wrong path")
            pair.verdicts.add(code)
    return [*series.values(), floor]


def top_imports(tree: Path, situation_file: Path, home: Path, count: int, runs: int = 3) -> list[dict[str, object]]:
    """The `count` outermost imports (those not made by another module's import: a command's
    modules, and what loads lazily later) with the largest cumulative time, each the minimum
    over `runs` processes (the load of the machine only ever adds)."""
    environ = _environment(tree, home)
    best: dict[str, tuple[int, int]] = {}
    for _ in range(runs):
        completed = subprocess.run(
            [sys.executable, "-X", "importtime", *_run_argv(situation_file)],
            env=environ,
            capture_output=True,
            text=True,
            check=True,
        )
        for match in map(_IMPORTTIME.match, completed.stderr.splitlines()):
            if match and len(match.group(3)) == 1:  # one space: not nested in another import
                own, cumulative, name = int(match.group(1)), int(match.group(2)), match.group(4)
                seen = best.get(name, (own, cumulative))
                best[name] = (min(seen[0], own), min(seen[1], cumulative))
    ranked = sorted(best.items(), key=lambda item: -item[1][1])[:count]
    return [
        {"module": name, "self_ms": own / 1000, "cumulative_ms": cumulative / 1000}
        for name, (own, cumulative) in ranked
    ]


_ENCODER_COSTS: Final = r"""
import json, shutil, sys, time
from pathlib import Path
cache, text = Path(sys.argv[1]), Path(sys.argv[2]).read_text()
def cpu_ms(action):
    started = time.process_time()
    result = action()
    return round((time.process_time() - started) * 1000, 2), result
from obelisk_session_evidence import tokenizer
shutil.rmtree(cache, ignore_errors=True)
figures = {"rank_table_first_build_ms": cpu_ms(lambda: tokenizer.load_ranks(cache))[0]}
figures["rank_table_load_ms"], ranked = cpu_ms(lambda: tokenizer.load_ranked_encoder(cache))
figures["tiktoken_build_ms"], reference = cpu_ms(lambda: tokenizer.load_encoder(cache))
figures["ranked_encode_ms"], ids = cpu_ms(lambda: ranked.encode_ordinary(text))
figures["tiktoken_encode_ms"], expected = cpu_ms(lambda: reference.encode_ordinary(text))
figures.update(text_bytes=len(text.encode()), tokens=len(ids), equal=ids == expected)
print(json.dumps(figures))
"""


def encoder_costs(home: Path) -> dict[str, object]:
    """One new process: the rank table's first build and its load, tiktoken's build, and both
    encoders on the demo's private result (about 5 KB of JSON evidence), ids compared."""
    environ = _environment(ROOT, home)
    private = home / "private.json"
    subprocess.run(
        [*_run_argv(home / "admitted.json"), "--private-out", str(private)],
        env=environ,
        check=True,
        capture_output=True,
    )
    completed = subprocess.run(
        [sys.executable, "-c", _ENCODER_COSTS, str(home / "encoder-cache"), str(private)],
        env=environ,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(completed.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=8, help="pairs per situation and tree (default 8)")
    parser.add_argument(
        "--tree",
        type=Path,
        action="append",
        default=[],
        help="another source tree to measure in the same loop (repeatable)",
    )
    parser.add_argument("--importtime", action="store_true", help="also list the top imports per run")
    parser.add_argument("--top", type=int, default=15, help="imports listed with --importtime")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON results (default {DEFAULT_OUT})")
    arguments = parser.parse_args()
    trees = [tree.resolve() for tree in arguments.tree] + [ROOT]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ose-cold-run-") as scratch:
        home = Path(scratch)
        files = build_demo_state(home)
        results = measure(trees, files, home, arguments.pairs)
        imports = (
            {
                f"{tree} {name}": top_imports(tree, file, home, arguments.top)
                for tree in trees
                for name, file in files.items()
            }
            if arguments.importtime
            else {}
        )
        encoders = encoder_costs(home)
    summaries = [pairs.summary() for pairs in results]
    report = {
        "schema": "cold_run_v1",
        "python": sys.executable,
        "bare": " ".join(BARE_INTERPRETER),
        "stack_floor": " ".join(STACK_FLOOR),
        "load_average": os.getloadavg(),
        "seconds": round(time.monotonic() - started, 1),
        "series": summaries,
        "top_imports": imports,
        "encoders": encoders,
    }
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"cold run vs bare interpreter, {arguments.pairs} pairs each, load {os.getloadavg()[0]:.1f}")
    print(f"{'tree':40} {'situation':13} {'bare ms':>8} {'run ms':>8} {'run cpu':>8} {'ratio':>6} {'target':>6}  met")
    for row in summaries:
        print(
            f"{str(row['tree'])[-40:]:40} {row['situation']:13} {row['bare_wall_ms_median']:8.1f} "
            f"{row['run_wall_ms_median']:8.1f} {row['run_cpu_ms_median']:8.1f} {row['wall_ratio_median']:6.2f} "
            f"{'-' if row['target_ratio'] is None else row['target_ratio']:>6}  "
            f"{'-' if row['met'] is None else 'yes' if row['met'] else 'no'}"
        )
    for label, rows in imports.items():
        print(f"\ntop outermost imports (cumulative ms, self ms; min of 3 runs): {label}")
        for row in rows:
            print(f"  {row['cumulative_ms']:8.1f} {row['self_ms']:8.1f}  {row['module']}")
    print(f"\nencoders (ms CPU, one process): {json.dumps(encoders)}")
    print(f"\nwritten to {arguments.out} in {report['seconds']} s")


if __name__ == "__main__":
    main()
