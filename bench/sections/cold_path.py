"""Sections 1, 2 and 4: the cold-path decision, what a user would run instead, and the private context.

Per generated index, every situation is decided in this (warm) process exactly as `decide()` does
it (load the situation, build the dependencies, run `PIPELINE`), with each stage timed through
`run_pipeline`'s `call` hook. Right after each decision, in the same loop so load drifts hit all
three alike, the same query terms go to the peers:

- `rg`: `rg -F -c` over the agents' raw session files (a new process each time, as a user runs it);
- the floor: one bare FTS5 `MATCH ... ORDER BY rank LIMIT 100` on the same index, on a warm
  connection, with no scope, no ranking by recency, no redaction and no cap.

Process start is measured by running the CLI (`obelisk-session-evidence run`) once per situation;
`run --prefect` goes to a standing server, from a warm process (`decide_with_prefect`, in a child
process that has already run two flows) and from a new process per situation.
"""

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bench._prefect import client_environment, without_prefect
from bench._report import ROOT, Table, count, ms, percentile, ratio
from bench._scaled import Corpus
from contracts.json_input import load_contract
from contracts.situation import ReplanSituation
from obelisk_session_evidence.tokenizer import load_encoder
from obelisk_session_evidence.wiring import pipeline_dependencies
from providers.native.index.fts import fts_query, query_phrases
from providers.native.index.refresh import refresh_index
from providers.native.index.store import connect
from stages.pipeline import PIPELINE, Stage, run_pipeline

FLOOR_LIMIT: Final = 100
"""Rows the floor fetches: what the provider fetches per lookup at the default limits."""
FLOOR_SQL: Final = "SELECT rowid, command, body FROM entry_text WHERE entry_text MATCH ? ORDER BY rank LIMIT ?"
SPAWN_TIMEOUT_S: Final = 600
STAGE_ROWS: Final = ("load-situation", "dependencies", *(stage.name for stage in PIPELINE))


@dataclass(slots=True)
class Lookup:
    """One situation decided in process, and the peers' answers to its query terms."""

    admitted: bool
    wall: float
    cpu: float
    stages: dict[str, tuple[float, float]]
    """Stage name -> (wall s, CPU s); `load-situation` and `dependencies` come before the pipeline."""
    capped_items: int = 0
    capped_item_tokens: int = 0
    private_tokens: int = 0
    private_chars: int = 0
    answer_items: int = 0
    answer_tokens: int = 0
    answer_chars: int = 0
    floor_wall: float | None = None
    rg_wall: float | None = None
    rg_cpu: float | None = None
    rg_lines: int | None = None
    rg_output_chars: int | None = None


@dataclass(slots=True)
class Series:
    """Wall and CPU seconds of repeated runs of one thing, and how many of them failed."""

    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    failures: int = 0
    skipped: str | None = None
    """Why the series was not run (then it is empty)."""


@dataclass(slots=True)
class SizeRun:
    """Everything measured on one generated index."""

    label: str
    corpus: Corpus
    lookups: list[Lookup]
    cli: Series
    prefect_warm: Series
    prefect_cli: Series


def measure_size(
    label: str,
    corpus: Corpus,
    situations: Sequence[bytes],
    *,
    spawns: int,
    rg_output_samples: int,
    prefect: tuple[Any, int, int] | None,
    log: Callable[[str], None] = print,
) -> SizeRun:
    """Decide every situation in process (with peers), then the process-start and Prefect series.

    `prefect` is `(server, warm runs, new-process runs)`, or None to leave those series out.
    """
    log(f"[{label}] {len(situations)} decisions in process, with rg and the FTS5 floor")
    lookups = in_process_lookups(corpus, situations, rg_output_samples=rg_output_samples)
    log(f"[{label}] {spawns} decisions through the CLI (process start included)")
    cli = cli_series(corpus, situations[:spawns], environ=_direct_environment(corpus))
    prefect_warm = prefect_cli = Series(skipped="no standing server in this profile")
    if prefect is not None:
        server, warm_runs, cli_runs = prefect
        environ = client_environment(server, corpus.state.root)
        log(f"[{label}] {warm_runs} `run --prefect` decisions in a warm process")
        prefect_warm = prefect_warm_series(situations[:warm_runs], environ=environ)
        log(f"[{label}] {cli_runs} `run --prefect` decisions, new process each")
        prefect_cli = cli_series(corpus, situations[:cli_runs], environ=environ, prefect=True)
    return SizeRun(label, corpus, lookups, cli, prefect_warm, prefect_cli)


def in_process_lookups(corpus: Corpus, situations: Sequence[bytes], *, rg_output_samples: int) -> list[Lookup]:
    """Each situation decided as `decide()` does, stage by stage, then rg and the floor on its terms."""
    refresh_index(corpus.index_path, corpus.roots)  # start inside the lookups' refresh window
    paths = corpus.state
    encoder = load_encoder(paths.cache_dir / "tiktoken")
    warm = load_contract(ReplanSituation, situations[0])
    run_pipeline(warm, pipeline_dependencies(paths, warm))  # imports, encoder load, first connection
    rg = shutil.which("rg")
    roots = [str(path) for paths_ in corpus.roots.values() for path in paths_ if path.exists()]
    floor = connect(corpus.index_path)
    lookups = []
    try:
        for raw in situations:
            lookup, values = _decide_timed(paths, raw)
            if lookup.admitted:
                _measure_context(lookup, values, encoder)
                terms = values["admission"].request.query_terms
                lookup.floor_wall = _floor_seconds(floor, terms)
                if rg is not None:
                    lookup.rg_wall, lookup.rg_cpu, lookup.rg_lines = _rg_counts(rg, terms, roots)
                    if sum(x.rg_output_chars is not None for x in lookups) < rg_output_samples:
                        lookup.rg_output_chars = _rg_output_chars(rg, terms, roots)
            lookups.append(lookup)
    finally:
        floor.close()
    return lookups


def _decide_timed(paths, raw: bytes) -> tuple[Lookup, dict[str, Any]]:  # noqa: ANN001
    stages: dict[str, tuple[float, float]] = {}

    def timed(stage: Stage, args: list[Any], options: dict[str, Any]) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        value = stage.function(*args, **options)
        stages[stage.name] = (time.perf_counter() - wall, time.process_time() - cpu)
        return value

    wall, cpu = time.perf_counter(), time.process_time()
    situation = load_contract(ReplanSituation, raw)
    stages["load-situation"] = (time.perf_counter() - wall, time.process_time() - cpu)
    mark_wall, mark_cpu = time.perf_counter(), time.process_time()
    dependencies = pipeline_dependencies(paths, situation)
    stages["dependencies"] = (time.perf_counter() - mark_wall, time.process_time() - mark_cpu)
    decision, values = run_pipeline(situation, dependencies, call=timed)
    lookup = Lookup(
        admitted=decision.admission.admitted,
        wall=time.perf_counter() - wall,
        cpu=time.process_time() - cpu,
        stages=stages,
    )
    return lookup, values


def _measure_context(lookup: Lookup, values: dict[str, Any], encoder) -> None:  # noqa: ANN001
    capped, answer = values["capped"], values["retrieval"].result
    if capped.result is not None:
        private = capped.result.model_dump_json()  # what `run --private-out` writes
        lookup.capped_items = len(capped.result.items)
        lookup.capped_item_tokens = capped.token_count
        lookup.private_tokens = len(encoder.encode_ordinary(private))
        lookup.private_chars = len(private)
    if answer is not None:
        whole = answer.model_dump_json()
        lookup.answer_items = len(answer.items)
        lookup.answer_tokens = len(encoder.encode_ordinary(whole))
        lookup.answer_chars = len(whole)


def _floor_seconds(connection, terms: Sequence[str]) -> float | None:  # noqa: ANN001
    match = fts_query(query_phrases(terms)[0])
    if match is None:
        return None
    started = time.perf_counter()
    connection.execute(FLOOR_SQL, (match, FLOOR_LIMIT)).fetchall()
    return time.perf_counter() - started


def _rg_command(rg: str, terms: Sequence[str], roots: Sequence[str], *, counts: bool) -> list[str]:
    patterns = [argument for term in terms for argument in ("-e", term)]
    flags = ["--no-config", "--fixed-strings", "--hidden", "--no-ignore", "--search-zip", "--no-messages"]
    return [rg, *flags, *(["--count"] if counts else []), *patterns, "--", *roots]


def _rg_counts(rg: str, terms: Sequence[str], roots: Sequence[str]) -> tuple[float, float, int]:
    """Wall and CPU seconds of `rg -F -c` (a new process), and the matching lines it counted."""
    before = _children_cpu()
    started = time.perf_counter()
    answer = subprocess.run(_rg_command(rg, terms, roots, counts=True), capture_output=True, check=False)
    wall = time.perf_counter() - started
    lines = sum(int(line.rsplit(b":", 1)[1]) for line in answer.stdout.splitlines() if b":" in line)
    return wall, _children_cpu() - before, lines


def _rg_output_chars(rg: str, terms: Sequence[str], roots: Sequence[str]) -> int:
    """Characters `rg -F` prints for the terms: what a user would read (streamed, never held)."""
    total = 0
    with subprocess.Popen(_rg_command(rg, terms, roots, counts=False), stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as process:  # fmt: skip
        assert process.stdout is not None
        while chunk := process.stdout.read(1 << 20):
            total += len(chunk)
    return total


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _direct_environment(corpus: Corpus) -> dict[str, str]:
    environ = without_prefect()
    environ["OBELISK_SESSION_EVIDENCE_HOME"] = str(corpus.state.root)
    return environ


def cli_series(corpus: Corpus, situations: Sequence[bytes], *, environ: dict[str, str], prefect: bool = False) -> Series:
    """`obelisk-session-evidence run [--prefect]` once per situation: a new process each time."""
    series = Series()
    if not situations:
        series.skipped = "0 runs in this profile"
        return series
    cli = Path(sys.executable).parent / "obelisk-session-evidence"
    with tempfile.TemporaryDirectory(prefix="ose-bench-situations-") as folder:
        for number, raw in enumerate(situations):
            document = Path(folder) / f"situation-{number}.json"
            document.write_bytes(raw)
            command = [str(cli), "run", "--situation", str(document), "--format", "json"]
            before = _children_cpu()
            started = time.perf_counter()
            answer = subprocess.run(command + (["--prefect"] if prefect else []), env=environ, cwd=corpus.folder,
                                    capture_output=True, timeout=SPAWN_TIMEOUT_S, check=False)  # fmt: skip
            series.walls.append(time.perf_counter() - started)
            series.cpus.append(_children_cpu() - before)
            series.failures += answer.returncode != 0
    return series


def prefect_warm_series(situations: Sequence[bytes], *, environ: dict[str, str]) -> Series:
    """`decide_with_prefect` per situation in one child process, after two warm-up flows."""
    series = Series()
    if not situations:
        series.skipped = "0 runs in this profile"
        return series
    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as handle:
        handle.writelines(raw + b"\n" for raw in situations)
    try:
        environ = {**environ, "PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-m", "bench.sections.cold_path", "--prefect-child", handle.name]
        answer = subprocess.run(command, env=environ, cwd=ROOT, capture_output=True, text=True,
                                timeout=SPAWN_TIMEOUT_S * 10, check=False)  # fmt: skip
    finally:
        os.unlink(handle.name)
    if answer.returncode != 0:
        series.skipped = f"child failed: {answer.stderr.strip().splitlines()[-1][:160] if answer.stderr else answer.returncode}"
        return series
    result = json.loads(answer.stdout.strip().splitlines()[-1])
    series.walls, series.cpus, series.failures = result["walls"], result["cpus"], result["failures"]
    return series


def _prefect_child(situations_file: str) -> None:
    """In the child: two warm-up flows, then one timed `decide_with_prefect` per situation."""
    from obelisk_session_evidence.decide import decide_with_prefect
    from obelisk_session_evidence.state import state_paths

    raws = [line for line in Path(situations_file).read_bytes().splitlines() if line.strip()]
    paths = state_paths()
    for raw in raws[:2]:
        decide_with_prefect(raw, paths=paths)
    walls, cpus, failures = [], [], 0
    for raw in raws:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            decide_with_prefect(raw, paths=paths)
        except Exception:  # noqa: BLE001 - counted, the series goes on
            failures += 1
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    print(json.dumps({"walls": walls, "cpus": cpus, "failures": failures}))


# ---- tables -------------------------------------------------------------------------------------


def index_label(corpus: Corpus) -> str:
    """`100,009 msgs (70 MB, 980 files)`: the generated index's size."""
    stats = corpus.stats
    return f"{count(stats['messages'])} msgs ({stats['bytes'] / 1e6:.0f} MB JSONL, {count(stats['files'])} files)"


def decision_table(runs: Sequence[SizeRun], skipped: Sequence[tuple[str, str]]) -> Table:
    """Section 1: end to end, direct vs Prefect, process start included and excluded."""
    table = Table(
        "1. Cold-path decision, end to end (generated indexes; wall ms unless noted)",
        ("index", "path", "process start", "n", "p50", "p95", "CPU p50", "CPU p95", "p50 ÷ direct warm"),
    )
    for run in runs:
        base = percentile([x.wall for x in run.lookups], 50)
        label = index_label(run.corpus)
        warm = Series([x.wall for x in run.lookups], [x.cpu for x in run.lookups])
        rows = [
            ("direct pipeline, warm process (`decide`)", "excluded", warm),
            ("direct: `obelisk-session-evidence run`", "included", run.cli),
            ("`run --prefect`, warm process, standing server", "excluded", run.prefect_warm),
            ("`run --prefect`, new process, standing server", "included", run.prefect_cli),
        ]
        for path, start, series in rows:
            if series.skipped:
                table.add(label, path, start, "-", f"not run ({series.skipped})")
                continue
            failed = f" ({series.failures} failed)" if series.failures else ""
            table.add(label, path, start, f"{len(series.walls)}{failed}", ms(percentile(series.walls, 50)),
                      ms(percentile(series.walls, 95)), ms(percentile(series.cpus, 50)), ms(percentile(series.cpus, 95)),
                      ratio(percentile(series.walls, 50), base))  # fmt: skip
    for label, reason in skipped:
        table.add(label, "all", "-", "-", f"not run ({reason})")
    table.notes += [
        "Direct, warm: load the situation, build the dependencies (configuration, provider), run the seven"
        " stages; after one warm-up decision (imports, tokenizer load). CPU is this process's CPU time"
        " (SQLite runs in process); for new processes it is the child's user+system time (the Prefect"
        " server's CPU is not counted).",
        "A lookup refreshes the enablement's folders when they were last refreshed over 60 s ago (a"
        " no-change refresh: one stat per file); series that run longer than that include such refreshes.",
        "The generated histories repeat the same scenario in every session (50 test rounds each), so a"
        " proposed command such as `pytest tests/test_auth.py -x` matches a large share of all rows: a"
        " worst case for ranking, not a typical history.",
    ]
    return table


def stage_table(runs: Sequence[SizeRun]) -> Table:
    """Section 1, per stage: wall p50/p95 per index size over all situations."""
    columns = ["stage"]
    for run in runs:
        columns += [f"{run.label} p50", f"{run.label} p95"]
    table = Table("1b. Cold-path decision per stage (direct, warm process; wall ms, all situations)", tuple(columns))
    for name in (*STAGE_ROWS, "end to end"):
        cells = [name]
        for run in runs:
            values = [x.wall if name == "end to end" else x.stages.get(name, (0.0, 0.0))[0] for x in run.lookups]
            cells += [ms(percentile(values, 50)), ms(percentile(values, 95))]
        table.add(*cells)
    table.notes.append(
        "`load-situation` (JSON validation) and `dependencies` (configuration, provider, salt) are what"
        " `decide()` does before the pipeline; `retrieve` includes the provider's connection, repository"
        " binding, scoped FTS5 query, scope re-check and redaction."
    )
    return table


def peers_table(runs: Sequence[SizeRun]) -> Table:
    """Section 2: the decision against rg and the bare FTS5 floor, per query, in the same run."""
    table = Table(
        "2. Against what a user would use instead (same query terms, same corpus, same run; admitted queries)",
        ("index", "tool", "n", "p50 ms", "p95 ms", "CPU p50 ms", "÷ rg", "÷ FTS5 floor"),
    )
    for run in runs:
        label = index_label(run.corpus)
        admitted = [x for x in run.lookups if x.admitted]
        with_rg = [x for x in admitted if x.rg_wall is not None]
        with_floor = [x for x in admitted if x.floor_wall]

        def per_query(value: Callable[[Lookup], float], peer: str, pool: list[Lookup]) -> str:
            ratios = [value(x) / getattr(x, peer) for x in pool if getattr(x, peer)]
            return f"{percentile(ratios, 50):.1f}× (median)" if ratios else "-"

        retrieve = lambda x: x.stages["retrieve"][0]  # noqa: E731
        table.add(label, "decision, in process (all stages)", len(admitted), ms(percentile([x.wall for x in admitted], 50)),
                  ms(percentile([x.wall for x in admitted], 95)), ms(percentile([x.cpu for x in admitted], 50)),
                  per_query(lambda x: x.wall, "rg_wall", with_rg), per_query(lambda x: x.wall, "floor_wall", with_floor))  # fmt: skip
        table.add(label, "  retrieve stage alone", len(admitted), ms(percentile([retrieve(x) for x in admitted], 50)),
                  ms(percentile([retrieve(x) for x in admitted], 95)),
                  ms(percentile([x.stages["retrieve"][1] for x in admitted], 50)),
                  per_query(retrieve, "rg_wall", with_rg), per_query(retrieve, "floor_wall", with_floor))  # fmt: skip
        rg_p50 = percentile([x.rg_wall for x in with_rg], 50)
        if not run.cli.skipped:
            table.add(label, "decision via the CLI (process start included)", len(run.cli.walls),
                      ms(percentile(run.cli.walls, 50)), ms(percentile(run.cli.walls, 95)),
                      ms(percentile(run.cli.cpus, 50)), f"{ratio(percentile(run.cli.walls, 50), rg_p50)} (p50s)", "")  # fmt: skip
        if with_rg:
            table.add(label, "`rg -F -c` over the raw session files (new process)", len(with_rg), ms(rg_p50),
                      ms(percentile([x.rg_wall for x in with_rg], 95)), ms(percentile([x.rg_cpu for x in with_rg], 50)),
                      "1×", per_query(lambda x: x.rg_wall, "floor_wall", [x for x in with_rg if x.floor_wall]))  # fmt: skip
        else:
            table.add(label, "`rg`", "-", "not run (rg not installed: `make bench-setup`)")
        table.add(label, f"bare FTS5 `MATCH … ORDER BY rank LIMIT {FLOOR_LIMIT}` (warm connection)", len(with_floor),
                  ms(percentile([x.floor_wall for x in with_floor], 50)),
                  ms(percentile([x.floor_wall for x in with_floor], 95)), "", "", "1×")  # fmt: skip
    table.notes += [
        "Ratios are medians of per-query ratios (each query's decision, rg and floor run back to back), so"
        " load drifts on this shared machine cancel; `(p50s)` compares two series' medians instead.",
        "rg: `rg --fixed-strings --count --hidden --no-ignore --search-zip -e <term> ...` over the five"
        " agents' session folders (it cannot scope by repository, so bait sessions match too). The floor"
        " uses the whole-term phrases only, with no scope, recency, de-duplication, redaction or cap.",
    ]
    return table


def context_table(runs: Sequence[SizeRun], budget: int) -> Table:
    """Section 4: the private result's size per admitted query, capped and before the cap."""
    table = Table(
        f"4. Context: private result size per admitted query (default budget {budget:,} tokens)",
        ("index", "n", "what", "tokens p50", "tokens p95", "tokens max", "chars p50", "chars p95", "chars max",
         "items p50"),
    )  # fmt: skip
    for run in runs:
        label = index_label(run.corpus)
        admitted = [x for x in run.lookups if x.admitted]

        def stats(values: list[float]) -> list[str]:
            return [count(percentile(values, 50)), count(percentile(values, 95)), count(max(values))] if values else ["-"] * 3

        table.add(label, len(admitted), "private result at the default budget (`--private-out` JSON)",
                  *stats([x.private_tokens for x in admitted]), *stats([x.private_chars for x in admitted]),
                  count(percentile([x.capped_items for x in admitted], 50)))  # fmt: skip
        table.add(label, len(admitted), "  its items, as the budget counts them",
                  *stats([x.capped_item_tokens for x in admitted]), "", "", "", "")  # fmt: skip
        table.add(label, len(admitted), "provider answer before cap-by-tokens (uncapped)",
                  *stats([x.answer_tokens for x in admitted]), *stats([x.answer_chars for x in admitted]),
                  count(percentile([x.answer_items for x in admitted], 50)))  # fmt: skip
        sampled = [x for x in admitted if x.rg_output_chars is not None]
        if sampled:
            table.add(label, len(sampled), "`rg -F` output for the same terms (what a user would read)", "-", "-",
                      "-", *stats([x.rg_output_chars for x in sampled]),
                      f"{count(percentile([x.rg_lines for x in sampled], 50))} lines")  # fmt: skip
    table.notes.append(
        "Tokens are o200k_base. The budget counts each item's compact JSON; the whole private JSON adds the"
        " envelope (request id, versions, scope, freshness). The provider already bounds its answer by the"
        " request's item, snippet and character limits; cap-by-tokens then applies the token budget."
    )
    return table


def comparator_seconds_per_candidate(runs: Sequence[SizeRun]) -> list[float]:
    """compare-route wall time divided by the items it compared, per admitted query with items."""
    return [x.stages["compare-route"][0] / x.capped_items for run in runs for x in run.lookups if x.capped_items]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--prefect-child":
        _prefect_child(sys.argv[2])
    else:
        raise SystemExit("usage: python -m bench.sections.cold_path --prefect-child SITUATIONS.jsonl")
