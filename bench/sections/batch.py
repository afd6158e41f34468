"""Section 5: decisions per second for a batch of stalled items, direct and under Prefect's thread runner.

Reuses `bench.batch_throughput` (its items, its fixture index and its modes): the bare pipeline
over preloaded situations (the floor), the batch library in this process (`run_batch_directly`:
load, decide, write each record), and the `reprocess-stalled` flow with `ThreadPoolTaskRunner` on
the bench's standing server, in a new process after a 20-item warm-up flow.
"""

import argparse
import tempfile
from pathlib import Path
from typing import Any

from bench._report import Table, ratio
from bench.batch_throughput import prepare_state, run_direct, run_flow_mode, run_pipeline_only, stalled_situations

CONCURRENCY = 4


def batch_table(items: int, server: Any | None, *, skip_prefect: str | None = None) -> Table:
    """Run the modes on the same `items` stalled items and tabulate them."""
    table = Table(
        f"5. Batch: {items:,} stalled items (fixture index)",
        (
            "mode",
            "items",
            "wall s",
            "decisions/s",
            "ms/item",
            "÷ direct",
            "item p50 ms",
            "item p95 ms",
            "decided / failed",
        ),
    )
    with tempfile.TemporaryDirectory(prefix="ose-bench-batch-") as folder:
        work = Path(folder)
        paths = prepare_state(work)
        situations = stalled_situations(items)
        results: dict[str, dict[str, Any]] = {
            "pipeline only, preloaded situations (no file I/O; the floor)": run_pipeline_only(paths, situations),
            "direct: batch library in one process": run_direct(paths, situations, work / "out-direct"),
        }
        label = f"Prefect `reprocess-stalled`, ThreadPoolTaskRunner({CONCURRENCY}), standing server"
        if server is None:
            results[label] = {"skipped": skip_prefect or "no standing server"}
        else:
            arguments = argparse.Namespace(items=items, concurrency=CONCURRENCY, work=str(work))
            try:
                results[label] = run_flow_mode("sqlite", "thread", server.address.api_url, paths, arguments)
            except SystemExit as failure:  # the helper exits with the child's stderr tail
                results[label] = {"skipped": f"failed: {str(failure).strip().splitlines()[-1][:160]}"}
    base = results["direct: batch library in one process"]["wall_s"]
    for mode, result in results.items():
        if "skipped" in result:
            table.add(mode, items, f"not run ({result['skipped']})")
            continue
        wall, summary = result["wall_s"], result.get("summary")
        latency = (summary or {}).get("latency") or {}
        table.add(
            mode,
            items,
            f"{wall:.1f}",
            f"{items / wall:.1f}",
            f"{wall / items * 1000:.1f}",
            ratio(wall, base),
            latency.get("p50_ms", "-"),
            latency.get("p95_ms", "-"),
            f"{summary['decided']} / {summary['failed']}" if summary else "-",
        )
    table.notes.append(
        "The items are `bench.batch_throughput.stalled_situations` (seed 5) over the fixture histories it"
        " writes (2 rounds per session). The Prefect row excludes its process start and a 20-item warm-up"
        " flow; the server runs on SQLite unless BENCH_PG_URL names PostgreSQL."
    )
    return table
