"""Tables of sections 1, 1b, 2 and 4, from the measurements `bench.sections.cold_path` makes."""

from collections.abc import Callable, Sequence
from typing import Final

from bench._report import Table, count, ms, percentile, ratio
from bench._scaled import Corpus
from bench.sections.cold_path import FLOOR_LIMIT, STAGE_ROWS, Lookup, Series, SizeRun


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
            table.add(
                label,
                path,
                start,
                f"{len(series.walls)}{failed}",
                ms(percentile(series.walls, 50)),
                ms(percentile(series.walls, 95)),
                ms(percentile(series.cpus, 50)),
                ms(percentile(series.cpus, 95)),
                ratio(percentile(series.walls, 50), base),
            )
    for label, reason in skipped:
        table.add(label, "all", "-", "-", f"not run ({reason})")
    failures = [
        f"{run.label} {path}: {series.failure_note}"
        for run in runs
        for path, series in (("CLI", run.cli), ("CLI --prefect", run.prefect_cli))
        if series.failure_note
    ]
    if failures:
        table.notes.append("First failure of each series that had one: " + "; ".join(failures) + ".")
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


COLD_RUN_LIMITS: Final = {True: 8.0, False: 5.0}
"""Issue 17: an admitted cold `run` <= 8x the bare interpreter, a not-admitted one <= 5x."""


def cold_run_ratios(run: SizeRun) -> dict[bool, list[float]]:
    """Per-pair ratios of `run` to the bare interpreter, for admitted and for not-admitted decisions."""
    return {kind: run.cli.bare_ratios(kind) for kind in (True, False)}


def cold_run_table(runs: Sequence[SizeRun]) -> Table:
    """Section 1c: each cold `run` process over the bare interpreter started just before it."""
    table = Table(
        "1c. Cold `run` process against the bare interpreter, pair by pair (wall)",
        ("index", "decision", "pairs", "run ms p50", "bare ms p50", "ratio p50", "ratio p95", "target"),
    )
    for run in runs:
        label = index_label(run.corpus)
        if run.cli.skipped:
            table.add(label, "all", "-", f"not run ({run.cli.skipped})")
            continue
        for kind, ratios in cold_run_ratios(run).items():
            walls = [w for w, k in zip(run.cli.walls, run.cli.admitted, strict=False) if k is kind]
            bares = [b for b, k in zip(run.cli.bare_walls, run.cli.admitted, strict=False) if k is kind]
            table.add(
                label,
                "admitted" if kind else "not admitted",
                len(ratios),
                ms(percentile(walls, 50)),
                ms(percentile(bares, 50)),
                _times(percentile(ratios, 50)),
                _times(percentile(ratios, 95)),
                f"<= {COLD_RUN_LIMITS[kind]:.0f}×",
            )
        floors = run.cli.floor_ratios()
        table.add(
            label,
            "stack floor",
            len(floors),
            ms(percentile(run.cli.floor_walls, 50)),
            ms(percentile(run.cli.bare_walls, 50)),
            _times(percentile(floors, 50)),
            _times(percentile(floors, 95)),
            "-",
        )
    table.notes.append(
        "Bare interpreter: `python -I -c 'import sqlite3, json'` (the bench's own interpreter), started just"
        " before each `run`; each ratio is one pair's, so load drifts hit both sides alike. The runs take"
        " turns between situations that were admitted and not admitted in process."
    )
    table.notes.append(
        "Stack floor: the same interpreter importing click and pydantic and validating one document against"
        " one closed model (`bench._processes.STACK_FLOOR`), started between the bare interpreter and the"
        " `run`: the least any `run` of this stack costs here, so no cold-run ratio can be below it."
    )
    return table


def _times(value: float) -> str:
    return "-" if value != value else f"{value:.1f}×"


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

        def retrieve(x: Lookup) -> float:
            return x.stages["retrieve"][0]

        table.add(
            label,
            "decision, in process (all stages)",
            len(admitted),
            ms(percentile([x.wall for x in admitted], 50)),
            ms(percentile([x.wall for x in admitted], 95)),
            ms(percentile([x.cpu for x in admitted], 50)),
            per_query(lambda x: x.wall, "rg_wall", with_rg),
            per_query(lambda x: x.wall, "floor_wall", with_floor),
        )
        table.add(
            label,
            "  retrieve stage alone",
            len(admitted),
            ms(percentile([retrieve(x) for x in admitted], 50)),
            ms(percentile([retrieve(x) for x in admitted], 95)),
            ms(percentile([x.stages["retrieve"][1] for x in admitted], 50)),
            per_query(retrieve, "rg_wall", with_rg),
            per_query(retrieve, "floor_wall", with_floor),
        )
        rg_p50 = percentile([x.rg_wall for x in with_rg], 50)
        if not run.cli.skipped:
            table.add(
                label,
                "decision via the CLI (process start included)",
                len(run.cli.walls),
                ms(percentile(run.cli.walls, 50)),
                ms(percentile(run.cli.walls, 95)),
                ms(percentile(run.cli.cpus, 50)),
                f"{ratio(percentile(run.cli.walls, 50), rg_p50)} (p50s)",
                "",
            )
        if with_rg:
            table.add(
                label,
                "`rg -F -c` over the raw session files (new process)",
                len(with_rg),
                ms(rg_p50),
                ms(percentile([x.rg_wall for x in with_rg], 95)),
                ms(percentile([x.rg_cpu for x in with_rg], 50)),
                "1×",
                per_query(lambda x: x.rg_wall, "floor_wall", [x for x in with_rg if x.floor_wall]),
            )
        else:
            table.add(label, "`rg`", "-", "not run (rg not installed: `make bench-setup`)")
        table.add(
            label,
            f"bare FTS5 `MATCH … ORDER BY rank LIMIT {FLOOR_LIMIT}` (warm connection)",
            len(with_floor),
            ms(percentile([x.floor_wall for x in with_floor], 50)),
            ms(percentile([x.floor_wall for x in with_floor], 95)),
            "",
            "",
            "1×",
        )
    table.notes += [
        "Ratios are medians of per-query ratios (each query's decision, rg and floor run back to back), so"
        " load drifts on this shared machine cancel; `(p50s)` compares two series' medians instead.",
        "rg: `rg --fixed-strings --count --hidden --no-ignore -e <term> ...` over the five agents' session"
        " folders (it cannot scope by repository, so bait sessions match too; DSH's zstd-compressed sessions"
        " are not searched, as `--search-zip` would start one `zstd` per file). The floor"
        " uses the whole-term phrases only, with no scope, recency, de-duplication, redaction or cap.",
    ]
    return table


def context_table(runs: Sequence[SizeRun], budget: int) -> Table:
    """Section 4: the private result's size per admitted query, capped and before the cap."""
    table = Table(
        f"4. Context: private result size per admitted query (default budget {budget:,} tokens)",
        (
            "index",
            "n",
            "what",
            "tokens p50",
            "tokens p95",
            "tokens max",
            "chars p50",
            "chars p95",
            "chars max",
            "items p50",
        ),
    )
    for run in runs:
        label = index_label(run.corpus)
        admitted = [x for x in run.lookups if x.admitted]

        def stats(values: list[float]) -> list[str]:
            return (
                [count(percentile(values, 50)), count(percentile(values, 95)), count(max(values))]
                if values
                else ["-"] * 3
            )

        table.add(
            label,
            len(admitted),
            "private result at the default budget (`--private-out` JSON)",
            *stats([x.private_tokens for x in admitted]),
            *stats([x.private_chars for x in admitted]),
            count(percentile([x.capped_items for x in admitted], 50)),
        )
        table.add(
            label,
            len(admitted),
            "  its items, as the budget counts them",
            *stats([x.capped_item_tokens for x in admitted]),
            "",
            "",
            "",
            "",
        )
        table.add(
            label,
            len(admitted),
            "provider answer before cap-by-tokens",
            *stats([x.answer_tokens for x in admitted]),
            *stats([x.answer_chars for x in admitted]),
            count(percentile([x.answer_items for x in admitted], 50)),
        )
        whole = [x for x in admitted if x.uncapped_rows is not None]
        if whole:
            table.add(
                label,
                len(whole),
                "uncapped: every in-scope item the query matches (no limits)",
                "-",
                "-",
                "-",
                *stats([x.uncapped_chars for x in whole]),
                count(percentile([x.uncapped_rows for x in whole], 50)),
            )
        sampled = [x for x in admitted if x.rg_output_chars is not None]
        if sampled:
            table.add(
                label,
                len(sampled),
                "`rg -F` output for the same terms (what a user would read)",
                "-",
                "-",
                "-",
                *stats([x.rg_output_chars for x in sampled]),
                f"{count(percentile([x.rg_lines for x in sampled], 50))} lines",
            )
    table.notes.append(
        "Tokens are o200k_base. The budget counts each item's compact JSON; the whole private JSON adds the"
        " envelope (request id, versions, scope, freshness). The provider already bounds its answer by the"
        " request's item, snippet and character limits; cap-by-tokens then applies the token budget. The"
        " uncapped and rg rows cover the first admitted queries only (their counts are in `n`); their"
        " characters are the matching rows' full text and rg's printed lines, whose tokens are not counted."
    )
    return table


def comparator_seconds_per_candidate(runs: Sequence[SizeRun]) -> list[float]:
    """compare-route wall time divided by the items it compared, per admitted query with items."""
    return [x.stages["compare-route"][0] / x.capped_items for run in runs for x in run.lookups if x.capped_items]
