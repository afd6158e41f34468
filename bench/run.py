"""Run the benchmarks and write one markdown report: `make bench` (full) or `make bench-quick`.

    .venv/bin/python -m bench.run --full    # -> bench/results/latest.md and latest.json (about 1 h on 2 busy cores)
    .venv/bin/python -m bench.run --quick   # -> bench/results/quick.md and quick.json (under 3 min, warm cache)
    .venv/bin/python -m bench.run --smoke --out report.md   # seconds; checks that every section renders

Beside each markdown report goes a JSON file (same name, `.json`): the run's named figures and,
per target of issue 17, the figure it is judged on and a `met` flag (`bench/_targets.py`).

Sections: 1 cold-path decision (end to end, per stage), 2 peers (rg, a bare FTS5 query), 3
indexing (full build, no-change and append refresh, peak memory, peak memory as one session grows
to 1M lines), 4 private context size, 5 batch, 6 tokenizer and comparator, 7 the Obelisk adapter,
8 replay throughput. Generated corpora are cached in `.state/bench/` (keyed by seed and shape),
so only the first run pays for generating them. Everything is seeded: the histories (`--seed`,
default 7) and the situations (`bench.batch_throughput.stalled_situations`, seed 5). No number
here is asserted anywhere; the report states each target and the figure reached.
"""

import argparse
import contextlib
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bench._report import ROOT, Table, machine_description, percentile, render
from bench._scaled import (
    DECISION_ROUNDS,
    Corpus,
    decision_scale,
    default_cache_dir,
    files_scale,
    generated_corpus,
    single_session_file,
)
from bench._targets import NOCHANGE_FILES, REPLAY_CALLS, results_document, targets_table, write_results
from bench.batch_throughput import stalled_situations
from bench.sections import batch, cold_path, cold_path_tables, indexing, obelisk_adapter, tokenizer
from bench.session_peak_memory import peak_table
from obelisk_session_evidence.contracts.limits import DEFAULT_LIMITS

RESULTS: Final = ROOT / "bench" / "results"
TARGET_DECISION_SIZE: Final = 100_000
APPEND_BASE_ROUNDS: Final = 4
"""Rounds per session of the append corpora's 1× (about 8 KB a session); 57 and 585 give 10× and 100× the bytes."""


@dataclass(frozen=True, slots=True)
class Profile:
    """How much of each section a run measures."""

    name: str
    results_file: str | None
    sizes: tuple[int, ...]
    """Messages in the generated decision indexes."""
    situations: int
    """Situations decided in process per index size (the first of `stalled_situations`)..."""
    spawns: dict[int, int]
    """New-process `run` decisions per index size, each paired with a bare interpreter."""
    situations_at: dict[int, int] = field(default_factory=dict)
    """...unless this names fewer for a size."""
    prefect_sizes: tuple[int, ...] = ()
    prefect_warm: int = 0
    prefect_cli: int = 0
    uncapped_samples: dict[int, int] = field(default_factory=dict)
    """Admitted queries per index size whose uncapped size and rg output are measured too."""
    real_build_repeat: int = 0
    scaled_builds: tuple[int, ...] = ()
    nochange_files: int = 0
    append_bytes_rounds: tuple[int, ...] = ()
    append_files: tuple[int, ...] = ()
    append_repeat: int = 3
    rss_megabytes: int = 0
    session_lines: tuple[int, ...] = ()
    """Lines of the one growing session of section 3d (each size in Claude's and Codex's format)."""
    batch_items: int = 0
    batch_prefect: bool = False
    tokenizer_loads: int = 0
    sample_chars: int = 1_000_000
    obelisk_calls: int = 5
    replay_calls: int = 0
    """Shell calls replayed in section 8 (generated history); the real corpus too when it is present."""
    """Lookups of each kind in section 7 (the adapter against the native provider)."""
    why_less: dict[str, str] = field(default_factory=dict)
    """Why this profile leaves a measurement out, by key (shown as `not run (...)`)."""


PROFILES: Final = {
    "smoke": Profile(
        name="smoke",
        results_file=None,
        sizes=(2_000,),
        situations=8,
        spawns={2_000: 1},
        uncapped_samples={2_000: 2},
        scaled_builds=(2_000,),
        nochange_files=40,
        append_bytes_rounds=(APPEND_BASE_ROUNDS,),
        append_files=(40,),
        append_repeat=2,
        rss_megabytes=1,
        session_lines=(1_000, 10_000),
        batch_items=5,
        sample_chars=20_000,
        obelisk_calls=2,
        replay_calls=100,
        why_less={"prefect": "--smoke", "batch_prefect": "--smoke", "sizes": "--smoke", "replay": "--smoke"},
    ),
    "quick": Profile(
        name="quick",
        results_file="quick.md",
        sizes=(10_000, 100_000),
        situations=200,
        situations_at={100_000: 40},
        spawns={10_000: 12},
        uncapped_samples={10_000: 10},
        real_build_repeat=1,
        scaled_builds=(10_000,),
        nochange_files=NOCHANGE_FILES,
        append_bytes_rounds=(APPEND_BASE_ROUNDS, 57),
        append_files=(100, 1_000),
        append_repeat=3,
        rss_megabytes=10,
        session_lines=(10_000, 100_000),
        batch_items=100,
        tokenizer_loads=2,
        replay_calls=1_000,
        why_less={
            "replay": "--quick replays 1,000 calls; run `make bench`",
            "prefect": "--quick: a standing server takes 10–25 s to start; run `make bench`",
            "batch_prefect": "--quick: needs the standing server; run `make bench`",
            "sizes": "--quick measures 10k and 100k only; run `make bench`",
        },
    ),
    "full": Profile(
        name="full",
        results_file="latest.md",
        sizes=(10_000, 100_000, 1_000_000),
        situations=200,
        spawns={10_000: 30, 100_000: 100, 1_000_000: 10},
        prefect_sizes=(100_000,),
        prefect_warm=200,
        prefect_cli=30,
        uncapped_samples={10_000: 50, 100_000: 50, 1_000_000: 5},
        real_build_repeat=3,
        scaled_builds=(10_000, 100_000),
        nochange_files=10_000,
        append_bytes_rounds=(APPEND_BASE_ROUNDS, 57, 585),
        append_files=(100, 1_000, 10_000),
        append_repeat=5,
        rss_megabytes=100,
        session_lines=(10_000, 100_000, 1_000_000),
        batch_items=1_000,
        batch_prefect=True,
        tokenizer_loads=5,
        obelisk_calls=20,
        replay_calls=10_000,
    ),
}


def size_label(messages: int) -> str:
    """`10k`, `100k`, `1M`."""
    if messages >= 1_000_000 and messages % 1_000_000 == 0:
        return f"{messages // 1_000_000}M"
    return f"{messages // 1000}k" if messages >= 1000 and messages % 1000 == 0 else str(messages)


class Bench:
    """One run of the profile: the corpora cache, the standing server, the tables and the figures."""

    def __init__(self, profile: Profile, *, cache: Path, seed: int, sizes: tuple[int, ...]) -> None:
        self.profile, self.cache, self.seed, self.sizes = profile, cache, seed, sizes
        self.started = time.monotonic()
        self.server: Any | None = None
        self.server_problem: str | None = None
        self.figures: dict[str, Any] = {}
        self.tables: dict[str, Table] = {}
        self.runs: list[cold_path.SizeRun] = []
        self.size_failures: dict[int, str] = {}

    def log(self, message: str) -> None:
        print(f"[{time.monotonic() - self.started:7.1f} s] {message}", file=sys.stderr, flush=True)

    def corpus(self, *, scale: int, rounds: int) -> Corpus:
        return generated_corpus(self.cache, seed=self.seed, scale=scale, rounds=rounds, log=self.log)

    @contextlib.contextmanager
    def standing_server(self) -> Iterator[None]:
        """Start the Prefect server when the profile has Prefect rows; a failure becomes a reason."""
        wanted = (self.profile.prefect_sizes and set(self.profile.prefect_sizes) & set(self.sizes)) or (
            self.profile.batch_prefect and self.profile.batch_items
        )
        if not wanted:
            yield
            return
        from bench._prefect import standing_server

        self.log("starting a standing Prefect server (SQLite unless BENCH_PG_URL)")
        with contextlib.ExitStack() as stack:
            try:
                self.server = stack.enter_context(standing_server())
                self.log(f"server ready in {self.server.ready_seconds} s at {self.server.address.url}")
            except Exception as error:
                self.server_problem = f"server failed to start: {type(error).__name__}"
                self.log(self.server_problem)
            try:
                yield
            finally:
                self.server = None

    def section(self, key: str, title: str, build: Callable[[], Table | list[Table]]) -> None:
        """Run one section; a failure becomes a one-row table instead of ending the report."""
        self.log(f"section {title}")
        try:
            result = build()
        except Exception as error:
            traceback.print_exc()
            failed = Table(title, ("what", "result"))
            failed.add("section", f"failed: {type(error).__name__}: {str(error)[:200]}")
            result = failed
        for number, table in enumerate(result if isinstance(result, list) else [result]):
            self.tables[f"{key}.{number}"] = table

    # ---- sections -------------------------------------------------------------------------------

    def cold_path(self) -> list[Table]:
        """Sections 1, 2 and 4, direct: every size's in-process decisions with peers, and CLI runs."""
        profile = self.profile
        situations = stalled_situations(profile.situations)
        for size in self.sizes:
            try:
                corpus = self.corpus(scale=decision_scale(size), rounds=DECISION_ROUNDS)
                count = profile.situations_at.get(size, profile.situations)
                self.runs.append(
                    cold_path.measure_size(
                        size_label(size),
                        corpus,
                        situations[:count],
                        spawns=profile.spawns.get(size, 0),
                        uncapped_samples=profile.uncapped_samples.get(size, 0),
                        log=self.log,
                    )
                )
            except Exception as error:
                traceback.print_exc()
                self.size_failures[size] = f"failed: {type(error).__name__}: {str(error)[:160]}"
        return []

    def prefect_rows(self) -> list[Table]:
        """Section 1's `run --prefect` rows, on the sizes the profile names, against the standing server."""
        profile = self.profile
        situations = stalled_situations(profile.situations)
        for run in self.runs:
            size = next(s for s in self.sizes if size_label(s) == run.label)
            if size in profile.prefect_sizes and self.server is not None:
                try:
                    cold_path.measure_prefect(
                        run,
                        situations,
                        self.server,
                        warm_runs=profile.prefect_warm,
                        cli_runs=profile.prefect_cli,
                        log=self.log,
                    )
                except Exception as error:
                    traceback.print_exc()
                    run.prefect_warm.skipped = run.prefect_cli.skipped = f"failed: {type(error).__name__}"
            else:
                reason = (
                    self.server_problem
                    or profile.why_less.get("prefect")
                    or f"Prefect rows run at {', '.join(size_label(s) for s in profile.prefect_sizes)} only"
                )
                run.prefect_warm.skipped = run.prefect_cli.skipped = reason
        return []

    def cold_path_report(self) -> list[Table]:
        """The tables of sections 1, 1b, 1c, 2 and 4, and their figures for the targets."""
        runs = self.runs
        if not runs and not self.size_failures:
            return []  # the measuring section failed and left its own table
        skipped = [
            (f"{size_label(size)} msgs", self.profile.why_less.get("sizes", "left out with --sizes"))
            for size in PROFILES["full"].sizes
            if size not in self.sizes
        ]
        skipped += [(f"{size_label(size)} msgs", reason) for size, reason in self.size_failures.items()]
        for run in runs:
            walls, cpus = [x.wall for x in run.lookups], [x.cpu for x in run.lookups]
            self.figures[f"decision_wall_p95_ms_{run.label}"] = percentile(walls, 95) * 1000
            self.figures[f"decision_cpu_p95_ms_{run.label}"] = percentile(cpus, 95) * 1000
            self.figures[f"decision_cpu_p50_ms_{run.label}"] = percentile(cpus, 50) * 1000
            self.figures[f"decisions_{run.label}"] = len(run.lookups)
            for admitted, ratios in cold_path_tables.cold_run_ratios(run).items():
                kind = "admitted" if admitted else "not_admitted"
                self.figures[f"cold_run_{kind}_ratio_{run.label}"] = percentile(ratios, 50)
                self.figures[f"cold_run_{kind}_pairs_{run.label}"] = len(ratios)
            if run.cli.floor_walls:
                self.figures[f"cold_run_stack_floor_ratio_{run.label}"] = percentile(run.cli.floor_ratios(), 50)
        smallest = next((run for run in runs if run.cli.walls), None)
        if smallest is not None:  # the targets are judged on the smallest index's cold runs
            for kind in ("admitted", "not_admitted", "stack_floor"):
                self.figures[f"cold_run_{kind}_ratio"] = self.figures[f"cold_run_{kind}_ratio_{smallest.label}"]
        admitted = [x for run in runs for x in run.lookups if x.admitted]
        if admitted:
            self.figures["context_item_tokens_max"] = max(x.capped_item_tokens for x in admitted)
            self.figures["context_private_tokens_max"] = max(x.private_tokens for x in admitted)
        return [
            cold_path_tables.decision_table(runs, skipped),
            cold_path_tables.stage_table(runs),
            cold_path_tables.peers_table(runs),
            cold_path_tables.context_table(runs, DEFAULT_LIMITS["max_tokens"]),
            cold_path_tables.cold_run_table(runs),
        ]

    def indexing(self) -> list[Table]:
        profile = self.profile
        scaled = [
            (size_label(s), self.corpus(scale=decision_scale(s), rounds=DECISION_ROUNDS)) for s in profile.scaled_builds
        ]
        builds, figures = indexing.build_table(profile.real_build_repeat, scaled)
        self.figures.update(figures)
        nochange = (
            self.corpus(scale=files_scale(profile.nochange_files), rounds=APPEND_BASE_ROUNDS)
            if profile.nochange_files
            else None
        )
        append = []
        for factor, rounds in zip(("1×", "10×", "100×"), profile.append_bytes_rounds, strict=False):
            append.append(
                (
                    "bytes",
                    factor,
                    self.corpus(
                        scale=files_scale(profile.append_files[0] if profile.append_files else 100), rounds=rounds
                    ),
                )
            )
        for factor, files in zip(("1×", "10×", "100×"), profile.append_files, strict=False):
            append.append(("files", factor, self.corpus(scale=files_scale(files), rounds=APPEND_BASE_ROUNDS)))
        refreshes, figures = indexing.refresh_table(nochange, append, repeat=profile.append_repeat)
        self.figures.update(figures)
        session = (
            single_session_file(self.cache, megabytes=profile.rss_megabytes, seed=self.seed)
            if profile.rss_megabytes
            else None
        )
        tables = [builds, refreshes, indexing.memory_table(session, profile.rss_megabytes)]
        if profile.session_lines:
            growing, figures = peak_table(profile.session_lines, log=self.log)
            self.figures.update(figures)
            tables.append(growing)
        return tables

    def batch(self) -> Table:
        profile = self.profile
        server = self.server if profile.batch_prefect else None
        reason = self.server_problem if profile.batch_prefect else profile.why_less.get("batch_prefect")
        return batch.batch_table(profile.batch_items, server, skip_prefect=reason)

    def tokenizer(self) -> Table:
        seconds = cold_path_tables.comparator_seconds_per_candidate(self.runs)
        return tokenizer.tokenizer_table(self.profile.tokenizer_loads, seconds, sample_chars=self.profile.sample_chars)

    def obelisk_adapter(self) -> Table:
        return obelisk_adapter.obelisk_adapter_table(self.profile.obelisk_calls)

    def replay(self) -> Table:
        from bench.sections.replay import replay_scale, replay_table
        from obelisk_session_evidence.qualify.real_cases import corpus_root

        calls = self.profile.replay_calls
        corpus = self.corpus(scale=replay_scale(calls), rounds=DECISION_ROUNDS)
        table, figures = replay_table(corpus, calls, real=self.profile.name != "smoke" and corpus_root().is_dir())
        self.figures.update(figures)
        return table

    def judged_figures(self) -> dict[str, Any]:
        """The figures, with the ones targets are judged on derived, and why any of those is missing."""
        figures = dict(self.figures)
        if figures.get("nochange_files", 0) >= NOCHANGE_FILES:
            figures["nochange_10k_s"] = figures["nochange_s"]
        appends = [value for key, value in figures.items() if key.startswith("append_bytes_") and key.endswith("x_s")]
        if len(appends) > 1:
            figures["append_bytes_growth_ratio"] = appends[-1] / appends[0]
        if figures.get("replay_calls", 0) >= REPLAY_CALLS:
            figures["replay_10k_calls_per_cpu_s"] = figures["replay_calls_per_cpu_s"]
        return figures

    def why_not(self) -> dict[str, str]:
        """Per target name: why this run has no figure for it."""
        profile, labels = self.profile, {run.label for run in self.runs}
        sizes = profile.why_less.get("sizes", "left out with --sizes")
        reasons = {
            "decision_p95_100k": self.size_failures.get(100_000, sizes) if "100k" not in labels else "no decisions",
            "decision_p95_1m": self.size_failures.get(1_000_000, sizes) if "1M" not in labels else "no decisions",
            "nochange_refresh_10k": f"this profile refreshes {profile.nochange_files:,} files, not 10,000",
            "append_flat": "fewer than two corpus sizes in this profile",
            "build_throughput": "no real corpus build in this profile, or the corpus is absent",
            "private_context": "no admitted decision",
            "replay_throughput": profile.why_less.get("replay", "no replay of 10,000 calls in this run"),
        }
        reasons["build_peak_memory"] = reasons["build_throughput"]
        if 1_000_000 not in profile.session_lines:
            reasons["session_peak_memory_1m"] = "this profile grows one session to 1M lines only in `make bench`"
        reasons["cold_run_admitted"] = reasons["cold_run_not_admitted"] = (
            "no successful cold run of that kind in this profile"
        )
        return reasons

    def targets(self) -> Table:
        """The issue's targets and the figure this run reached for each."""
        return targets_table(self.judged_figures(), self.why_not())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--full", action="store_const", dest="profile", const="full")
    mode.add_argument("--quick", action="store_const", dest="profile", const="quick")
    mode.add_argument("--smoke", action="store_const", dest="profile", const="smoke")
    parser.add_argument("--out", type=Path, help="where to write the report (default: bench/results/<profile>)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="generated corpora (default: .state/bench)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the generated histories")
    parser.add_argument("--sizes", help="decision index sizes in messages, comma-separated (default: the profile's)")
    arguments = parser.parse_args(argv)
    profile = PROFILES[arguments.profile]
    sizes = tuple(int(s) for s in arguments.sizes.split(",")) if arguments.sizes else profile.sizes
    cache = arguments.cache_dir or default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    os.environ.pop("KIMI_CODE_HOME", None)  # the generated homes use the agents' default layouts
    os.environ.pop("PI_CODING_AGENT_SESSION_DIR", None)
    header = machine_description()
    bench = Bench(profile, cache=cache, seed=arguments.seed, sizes=sizes)
    bench.section("3", "3. Indexing", bench.indexing)
    bench.section("1", "1. Cold-path decision, direct (with 2. peers and 4. context)", bench.cold_path)
    with bench.standing_server():  # started only now: an idle server still takes some CPU
        bench.section("1", "1. Cold-path decision under Prefect", bench.prefect_rows)
        bench.section("5", "5. Batch", bench.batch)
    bench.section("1", "1, 2, 4: tables", bench.cold_path_report)
    bench.section("6", "6. Tokenizer and comparator", bench.tokenizer)
    bench.section("7", "7. Obelisk adapter against the native provider", bench.obelisk_adapter)
    if profile.replay_calls:
        bench.section("8", "8. Replay", bench.replay)
    ordered = [bench.targets()] + [bench.tables[key] for key in sorted(bench.tables, key=_section_order)]
    command = {"full": "make bench", "quick": "make bench-quick", "smoke": "python -m bench.run --smoke"}[profile.name]
    report = render(
        f"obelisk-session-evidence benchmarks ({profile.name})",
        command,
        header,
        ordered,
        seconds=time.monotonic() - bench.started,
    )
    print(report)
    out = arguments.out or (RESULTS / profile.results_file if profile.results_file else None)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        temporary = out.with_name(out.name + ".tmp")
        temporary.write_text(report, encoding="utf-8")
        temporary.replace(out)
        document = results_document(
            profile=profile.name,
            command=command,
            seconds=time.monotonic() - bench.started,
            header=header,
            figures=bench.judged_figures(),
            why_not=bench.why_not(),
        )
        write_results(out.with_suffix(".json"), document)
        bench.log(f"wrote {out} and {out.with_suffix('.json').name}")
    return 0


def _section_order(key: str) -> tuple[int, int]:
    """Tables in the issue's order: 1, 1b, 2, 4 and 1c come from one measurement pass (keys 1.0-1.4)."""
    section, number = (int(part) for part in key.split("."))
    if section == 1 and number == 4:  # the cold runs against the bare interpreter follow 1b
        return (1, 2)
    if section == 1 and number == 3:  # the context table is section 4
        return (4, 0)
    if section == 1 and number == 2:  # peers are section 2
        return (2, 0)
    return (section, number)


if __name__ == "__main__":
    raise SystemExit(main())
