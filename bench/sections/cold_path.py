"""Sections 1, 2 and 4: the cold-path decision, what a user would run instead, and the private context.

Per generated index, every situation is decided in this (warm) process exactly as `decide()` does
it (load the situation, build the dependencies, run `PIPELINE`), with each stage timed through
`run_pipeline`'s `call` hook. Once every situation is decided, the same query terms go to the peers,
situation by situation (interleaved, a peer's SQLite frees would be paid inside the next decision):

- `rg`: `rg -F -c` over the agents' raw session files (a new process each time, as a user runs it);
- the floor: one bare FTS5 `MATCH ... ORDER BY rank LIMIT 100` on the same index, on a warm
  connection, with no scope, no ranking by recency, no redaction and no cap.

Process start is measured by running the CLI (`obelisk-session-evidence run`) once per situation,
each run paired with the bare interpreter started just before it (`python -I -c 'import sqlite3,
json'`), so the ratio of the two is measured pair by pair under the same load, and by the stack's
floor (`bench._processes.STACK_FLOOR`) between them; `run --prefect` goes to a standing server,
from a warm process (`decide_with_prefect`, in a child process that has already run two flows) and
from a new process per situation.
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
from bench._processes import BARE_INTERPRETER, STACK_FLOOR
from bench._report import ROOT
from bench._scaled import Corpus
from obelisk_session_evidence.compose import decide
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.lifecycle.policy import load_config
from obelisk_session_evidence.providers.native.index.fts import fts_query, query_phrases
from obelisk_session_evidence.providers.native.index.query import ScopeFilter, plan_search, ranked_sql
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.repository import repository_binding
from obelisk_session_evidence.providers.native.index.scope import enablement_roots, scope_filter
from obelisk_session_evidence.providers.native.index.store import connect
from obelisk_session_evidence.stages.cap_by_tokens import item_token_count
from obelisk_session_evidence.stages.pipeline import PIPELINE, Stage, StageValues
from obelisk_session_evidence.tokenizer import load_encoder

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
    uncapped_rows: int | None = None
    uncapped_chars: int | None = None


@dataclass(slots=True)
class Series:
    """Wall and CPU seconds of repeated runs of one thing, and how many of them failed."""

    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    failures: int = 0
    failure_note: str | None = None
    """The first failure's exit code and last stderr line (the CLI prints one content-free line)."""
    skipped: str | None = None
    """Why the series was not run (then it is empty)."""
    bare_walls: list[float] = field(default_factory=list)
    """Per run of a CLI series: the bare interpreter's wall time, measured just before it."""
    floor_walls: list[float] = field(default_factory=list)
    """Per run of a direct CLI series: the stack floor's wall time, measured between the two."""
    admitted: list[bool | None] = field(default_factory=list)
    """Per run of a CLI series: whether its decision admitted retrieval (None when it failed)."""

    def bare_ratios(self, admitted: bool) -> list[float]:
        """Each successful run's wall time over its paired bare interpreter's, for one kind of decision."""
        return [
            wall / bare
            for wall, bare, kind in zip(self.walls, self.bare_walls, self.admitted, strict=False)
            if kind is admitted and bare > 0
        ]

    def floor_ratios(self) -> list[float]:
        """Each stack floor's wall time over the bare interpreter's started just before it."""
        return [floor / bare for floor, bare in zip(self.floor_walls, self.bare_walls, strict=False) if bare > 0]


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
    uncapped_samples: int,
    log: Callable[[str], None] = print,
) -> SizeRun:
    """Decide every situation in process (with its peers), then through the CLI `spawns` times."""
    log(f"[{label}] {len(situations)} decisions in process, with rg and the FTS5 floor")
    lookups = in_process_lookups(corpus, situations, uncapped_samples=uncapped_samples)
    log(f"[{label}] {spawns} decisions through the CLI (process start included), each paired with a bare interpreter")
    cli = cli_series(corpus, _admitted_and_not(situations, lookups, spawns), environ=_direct_environment(corpus))
    not_yet = Series(skipped="no standing server in this profile")
    return SizeRun(label, corpus, lookups, cli, not_yet, Series(skipped=not_yet.skipped))


def _admitted_and_not(situations: Sequence[bytes], lookups: Sequence[Lookup], count: int) -> list[bytes]:
    """`count` situations taking turns between admitted and not admitted (as decided in process), so
    both kinds of cold run are measured under the same load; the rest in order when one kind runs out."""
    kinds = [
        [raw for raw, x in zip(situations, lookups, strict=True) if x.admitted is wanted] for wanted in (True, False)
    ]
    chosen = [raw for pair in zip(*kinds, strict=False) for raw in pair][:count]
    return chosen + [raw for raw in situations if raw not in chosen][: count - len(chosen)]


def measure_prefect(
    run: SizeRun,
    situations: Sequence[bytes],
    server: Any,
    *,
    warm_runs: int,
    cli_runs: int,
    log: Callable[[str], None] = print,
) -> None:
    """`run --prefect` on the run's index against the standing server: warm process, then new processes."""
    environ = client_environment(server, run.corpus.state.root)
    log(f"[{run.label}] {warm_runs} `run --prefect` decisions in a warm process")
    run.prefect_warm = prefect_warm_series(situations[:warm_runs], environ=environ)
    log(f"[{run.label}] {cli_runs} `run --prefect` decisions, new process each")
    run.prefect_cli = cli_series(run.corpus, situations[:cli_runs], environ=environ, prefect=True)


def in_process_lookups(corpus: Corpus, situations: Sequence[bytes], *, uncapped_samples: int) -> list[Lookup]:
    """Each situation decided as `decide()` does, stage by stage, then rg and the floor on its terms."""
    refresh_index(corpus.index_path, corpus.roots)  # start inside the lookups' refresh window
    paths = corpus.state
    encoder = load_encoder(paths.cache_dir / "tiktoken")
    warm = load_contract(ReplanSituation, situations[0])
    decide(warm, paths=paths)  # imports, encoder load, first connection
    rg = shutil.which("rg")
    roots = [str(path) for paths_ in corpus.roots.values() for path in paths_ if path.exists()]
    floor = connect(corpus.index_path)
    scope = _scope_of(paths)
    # Every decision first, then the peers: a peer's FTS5 query frees many blocks, and the allocator
    # does that deferred work in the next large allocation, which would bill the next decision for it
    # (measured at 1M messages: CPU p50 20 ms decided back to back, 41 ms with the floor in between).
    decided = [_decide_timed(paths, raw) for raw in situations]
    lookups: list[Lookup] = []
    try:
        for lookup, values in decided:
            if lookup.admitted:
                _measure_context(lookup, values, encoder)
                terms = values.admission.request.query_terms
                lookup.floor_wall = _floor_seconds(floor, terms)
                if rg is not None:
                    lookup.rg_wall, lookup.rg_cpu, lookup.rg_lines = _rg_counts(rg, terms, roots)
                if sum(x.uncapped_rows is not None for x in lookups) < uncapped_samples:
                    request = values.admission.request
                    lookup.uncapped_rows, lookup.uncapped_chars = _uncapped_size(floor, request, scope)
                    if rg is not None:
                        lookup.rg_output_chars = _rg_output_chars(rg, terms, roots)
            lookups.append(lookup)
    finally:
        floor.close()
    return lookups


def _scope_of(paths) -> ScopeFilter:
    """The scope filter the native provider applies for the corpus's one enablement."""
    enablement = load_config(paths).enablements[0]
    return scope_filter(enablement_roots(enablement), repository_binding(enablement.repo_roots))


def _uncapped_size(connection, request, scope: ScopeFilter) -> tuple[int, int]:
    """Rows and characters of every in-scope row the provider's ranked pass matches, with no limit at all.

    The provider's own phrases and scope, with the bound lifted (its call lanes and common terms,
    bounded by construction, are left out), summed inside SQLite so no text crosses into Python.
    """
    match = fts_query(plan_search(connection, request.query_terms).ranked)
    if match is None:
        return 0, 0
    query = ranked_sql(
        match, scope, evidence_types=list(dict.fromkeys(request.evidence_types)), bound=-1, now=time.time()
    )
    rows, chars = connection.execute(
        f"SELECT count(*), coalesce(sum(length(t.command) + length(t.body)), 0) FROM ({query.sql}) AS r"
        ' JOIN "entry_text" AS t ON t.rowid = r.id',
        query.params,
    ).fetchone()
    return rows, chars


def _decide_timed(paths, raw: bytes) -> tuple[Lookup, StageValues]:
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
    run = decide(situation, paths=paths, call=timed)
    # What `decide` spends outside the stages: configuration, provider, salt, encoder.
    in_stages = [stages[stage.name] for stage in PIPELINE]
    stages["dependencies"] = (
        time.perf_counter() - mark_wall - sum(wall for wall, _ in in_stages),
        time.process_time() - mark_cpu - sum(cpu for _, cpu in in_stages),
    )
    decision, values = run.decision, run.values
    lookup = Lookup(
        admitted=decision.admission.admitted,
        wall=time.perf_counter() - wall,
        cpu=time.process_time() - cpu,
        stages=stages,
    )
    return lookup, values


def _measure_context(lookup: Lookup, values: StageValues, encoder) -> None:
    capped, answer = values.capped, values.retrieval.result
    if capped.result is not None:
        private = capped.result.model_dump_json()  # what `run --private-out` writes
        lookup.capped_items = len(capped.result.items)
        lookup.capped_item_tokens = sum(item_token_count(item, encoder) for item in capped.result.items)
        lookup.private_tokens = len(encoder.encode_ordinary(private))
        lookup.private_chars = len(private)
    if answer is not None:
        whole = answer.model_dump_json()
        lookup.answer_items = len(answer.items)
        lookup.answer_tokens = len(encoder.encode_ordinary(whole))
        lookup.answer_chars = len(whole)


def _floor_seconds(connection, terms: Sequence[str]) -> float | None:
    match = fts_query(query_phrases(terms)[0])
    if match is None:
        return None
    started = time.perf_counter()
    connection.execute(FLOOR_SQL, (match, FLOOR_LIMIT)).fetchall()
    return time.perf_counter() - started


def _rg_command(rg: str, terms: Sequence[str], roots: Sequence[str], *, counts: bool) -> list[str]:
    patterns = [argument for term in terms for argument in ("-e", term)]
    flags = ["--no-config", "--fixed-strings", "--hidden", "--no-ignore", "--no-messages"]
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
    with subprocess.Popen(
        _rg_command(rg, terms, roots, counts=False), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as process:
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


def cli_series(
    corpus: Corpus, situations: Sequence[bytes], *, environ: dict[str, str], prefect: bool = False
) -> Series:
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
            started = time.perf_counter()
            subprocess.run([sys.executable, *BARE_INTERPRETER], env=environ, check=True, timeout=SPAWN_TIMEOUT_S)
            series.bare_walls.append(time.perf_counter() - started)
            if not prefect:
                started = time.perf_counter()
                subprocess.run(
                    [sys.executable, *STACK_FLOOR],
                    env=environ,
                    check=True,
                    capture_output=True,
                    timeout=SPAWN_TIMEOUT_S,
                )
                series.floor_walls.append(time.perf_counter() - started)
            before = _children_cpu()
            started = time.perf_counter()
            answer = subprocess.run(
                command + (["--prefect"] if prefect else []),
                env=environ,
                cwd=corpus.folder,
                capture_output=True,
                timeout=SPAWN_TIMEOUT_S,
                check=False,
            )
            series.walls.append(time.perf_counter() - started)
            series.cpus.append(_children_cpu() - before)
            series.admitted.append(_admitted(answer.stdout) if answer.returncode == 0 else None)
            if answer.returncode != 0:
                series.failures += 1
                if series.failure_note is None:
                    last = answer.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
                    series.failure_note = f"exit {answer.returncode}: {last[0][:120]}"
    return series


def _admitted(stdout: bytes) -> bool | None:
    """Whether the decision `run --format json` printed admitted retrieval."""
    try:
        return bool(json.loads(stdout)["admission"]["admitted"])
    except (ValueError, KeyError, TypeError):
        return None


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
        answer = subprocess.run(
            command, env=environ, cwd=ROOT, capture_output=True, text=True, timeout=SPAWN_TIMEOUT_S * 10, check=False
        )
    finally:
        os.unlink(handle.name)
    if answer.returncode != 0:
        series.skipped = (
            f"child failed: {answer.stderr.strip().splitlines()[-1][:160] if answer.stderr else answer.returncode}"
        )
        return series
    result = json.loads(answer.stdout.strip().splitlines()[-1])
    series.walls, series.cpus, series.failures = result["walls"], result["cpus"], result["failures"]
    return series


def _prefect_child(situations_file: str) -> None:
    """In the child: two warm-up flows, then one timed `decide_with_prefect` per situation."""
    from obelisk_session_evidence.flows.replan_evidence import decide_with_prefect
    from obelisk_session_evidence.state.paths import state_paths

    raws = [line for line in Path(situations_file).read_bytes().splitlines() if line.strip()]
    paths = state_paths()
    for raw in raws[:2]:
        decide_with_prefect(raw, paths=paths)
    walls, cpus, failures = [], [], 0
    for raw in raws:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            decide_with_prefect(raw, paths=paths)
        except Exception:
            failures += 1
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    print(json.dumps({"walls": walls, "cpus": cpus, "failures": failures}))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--prefect-child":
        _prefect_child(sys.argv[2])
    else:
        raise SystemExit("usage: python -m bench.sections.cold_path --prefect-child SITUATIONS.jsonl")
