"""Section 7: the Obelisk adapter against the native provider on the same real corpus and request."""

from bench._report import Table
from bench.obelisk_adapter_overhead import measure, measure_decision


def obelisk_adapter_table(calls: int) -> Table:
    """Wall and CPU per lookup: the native index, the adapter over the stand-in, and the real
    CLI's recorded `--query` cost (the stand-in has no identity wait, so the real cost is projected
    from the recordings plus the adapter's own overhead)."""
    figures = {**measure(calls), **measure_decision(calls)}
    table = Table("7. Obelisk adapter against the native provider", ("what", "wall p50", "wall p95", "CPU p50"))

    def seconds(key: str) -> str:
        return f"{figures[key] * 1000:.1f} ms"

    table.add(
        "native provider, same request (warm)",
        seconds("native_wall"),
        seconds("native_wall_p95"),
        seconds("native_cpu"),
    )
    table.add("native provider, first call (builds its index)", seconds("native_cold_wall"), "", "")
    table.add(
        "adapter over the stand-in: `ObeliskProvider.search`",
        seconds("adapter_wall"),
        seconds("adapter_wall_p95"),
        seconds("adapter_cpu"),
    )
    table.add("  of which the stand-in's `--query` itself", seconds("stand_in_query_wall"), "", seconds("cli_cpu"))
    table.add("  the adapter's own overhead (paired)", seconds("adapter_own_wall"), "", "")
    table.add(
        f"real Obelisk 0.2.3 `--query`, recorded ({figures['recorded_query_runs']} runs)",
        seconds("recorded_query_wall"),
        seconds("recorded_query_wall_p95"),
        seconds("recorded_query_cpu"),
    )
    table.add("projected real lookup (recorded `--query` + adapter overhead)", seconds("projected_real_wall"), "", "")
    table.add(
        f"decision through Obelisk (stand-in waiting {figures['identity_wait']:.2f} s, as recorded)",
        seconds("decision_wall"),
        seconds("decision_wall_p95"),
        "",
    )
    table.add("  paired: one `--query` process of the same script", seconds("query_process_wall"), "", "")
    table.add("  paired: one `--search --compact` process", seconds("search_process_wall"), "", "")
    table.add(
        f"  decision / one `--query`: {figures['decision_per_query']:.2f}x (target <= 1.5x)",
        "",
        "",
        "",
    )
    table.add(
        f"decision whose CLI hangs, deadline {figures['hung_deadline']:.0f} s",
        seconds("hung_decision_wall"),
        "",
        f"overshoot {figures['hung_overshoot'] * 1000:.0f} ms",
    )
    table.notes.append(
        f"{figures['calls']} lookups of each kind in one run; the answer held {figures['items']} items and"
        f" {figures['prior_calls']} structured prior calls, freshness {figures['freshness']}. Almost all of a real"
        " lookup is Obelisk's own wait to identify the calling session."
    )
    return table
