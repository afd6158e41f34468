"""Issue 17's targets, judged on a run's figures, for the report's table and for the results JSON.

Each target names the one figure its `met` flag is decided on; `met` is null when this profile did
not measure that figure (the JSON says why), never a guess from a smaller size.
"""

import datetime
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bench._report import Table

SCHEMA: Final = "obelisk-session-evidence-bench-results/1"
NOCHANGE_FILES: Final = 10_000
REPLAY_CALLS: Final = 10_000
"""The replay throughput target is judged on a replay of this many shell calls (issue 24)."""
APPEND_FLAT_RATIO: Final = 2.0
"""The bench's rule for "flat": the 1× corpus's append time at most doubles at the largest size."""


@dataclass(frozen=True, slots=True)
class Target:
    """One target of issue 17 and the figure a run reached for it."""

    name: str
    """Stable key (the JSON's `targets[].name`)."""
    text: str
    figure: str
    """The key in `figures` the flag is decided on."""
    limit: float
    at_most: bool
    """True: met when the figure <= limit; False: when >= limit."""
    unit: str
    floor: str | None = None
    """The key in `figures` of the least this stack can reach for the target here, when measured."""


TARGETS: Final = (
    Target(
        "decision_p95_100k",
        "decision in process: p95 <= 50 ms CPU at 100k messages",
        "decision_cpu_p95_ms_100k",
        50.0,
        True,
        "ms CPU",
    ),
    Target(
        "decision_p95_1m",
        "decision in process: p95 <= 100 ms CPU at 1M messages",
        "decision_cpu_p95_ms_1M",
        100.0,
        True,
        "ms CPU",
    ),
    Target(
        "cold_run_admitted",
        "admitted cold `run` process <= 8× the bare interpreter (pair by pair, median)",
        "cold_run_admitted_ratio",
        8.0,
        True,
        "×",
        "cold_run_stack_floor_ratio",
    ),
    Target(
        "cold_run_not_admitted",
        "not-admitted cold `run` process <= 5× the bare interpreter (pair by pair, median)",
        "cold_run_not_admitted_ratio",
        5.0,
        True,
        "×",
        "cold_run_stack_floor_ratio",
    ),
    Target(
        "nochange_refresh_10k", "no-change refresh of 10,000 files <= 0.3 s wall", "nochange_10k_s", 0.3, True, "s wall"
    ),
    Target(
        "append_flat",
        f"append refresh flat in the appended bytes (largest ÷ 1× wall <= {APPEND_FLAT_RATIO:.0f})",
        "append_bytes_growth_ratio",
        APPEND_FLAT_RATIO,
        True,
        "×",
    ),
    Target(
        "build_throughput",
        "full build >= 105 MB per CPU-second on the real corpus ×10",
        "real10_build_mb_cpu_s",
        105.0,
        False,
        "MB per CPU-s",
    ),
    Target(
        "build_peak_memory",
        "full build of the real corpus ×10: peak memory <= 150 MB",
        "real10_build_peak_mib",
        150.0,
        True,
        "MiB",
    ),
    Target(
        "session_peak_memory_1m",
        "refresh of one 1M-line session (Claude, Codex): peak memory <= 150 MB (issue 27)",
        "session_1m_refresh_peak_mib",
        150.0,
        True,
        "MiB",
    ),
    Target(
        "private_context",
        "default private context <= 2,000 tokens (max over admitted queries)",
        "context_item_tokens_max",
        2000.0,
        True,
        "tokens",
    ),
    Target(
        "replay_throughput",
        "replay in process >= 50 calls per CPU-second (10,000-call generated history)",
        "replay_10k_calls_per_cpu_s",
        50.0,
        False,
        "calls per CPU-s",
    ),
)


def judged(target: Target, figures: Mapping[str, Any]) -> tuple[float | None, bool | None]:
    """The target's figure and whether it is met; (None, None) when not measured."""
    value = _measured(figures, target.figure)
    if value is None:
        return None, None
    return value, value <= target.limit if target.at_most else value >= target.limit


def targets_table(figures: Mapping[str, Any], why_not: Mapping[str, str]) -> Table:
    """The report's first table: each target, the figure reached, and whether it is met."""
    table = Table("Targets (issue 17) and the figures reached", ("target", "figure reached", "met"))
    for target in TARGETS:
        value, met = judged(target, figures)
        if value is None:
            table.add(target.text, f"not measured ({why_not.get(target.name, 'not in this profile')})", "-")
        else:
            floor = _floor(target, figures)
            reached = _figure_text(value, target.unit)
            if floor is not None:
                reached += f" (stack floor {_figure_text(floor, target.unit)})"
            table.add(target.text, reached, "yes" if met else "**no**")
    table.notes.append(
        "Wall times on this shared machine include waiting for a CPU (the load average is in the header);"
        " each target says which clock it is judged on. Every figure is in `figures` of the results JSON."
    )
    return table


def results_document(
    *,
    profile: str,
    command: str,
    seconds: float,
    header: Sequence[tuple[str, str]],
    figures: Mapping[str, Any],
    why_not: Mapping[str, str],
) -> dict[str, Any]:
    """The machine-readable results: the run, its named figures, and each target with its `met` flag."""
    targets = []
    for target in TARGETS:
        value, met = judged(target, figures)
        targets.append(
            {
                "name": target.name,
                "target": target.text,
                "figure": target.figure,
                "value": value,
                "limit": target.limit,
                "comparison": "<=" if target.at_most else ">=",
                "unit": target.unit,
                "met": met,
                "not_measured": None if value is not None else why_not.get(target.name, "not in this profile"),
                "floor": _floor(target, figures),
            }
        )
    return {
        "schema": SCHEMA,
        "profile": profile,
        "command": command,
        "finished_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "seconds": round(seconds, 1),
        "machine": dict(header),
        "load_average_at_end": list(os.getloadavg()),
        "figures": {name: _plain(value) for name, value in sorted(figures.items())},
        "targets": targets,
        "all_met": all(entry["met"] is True for entry in targets),
    }


def _floor(target: Target, figures: Mapping[str, Any]) -> float | None:
    return _measured(figures, target.floor) if target.floor else None


def _measured(figures: Mapping[str, Any], name: str) -> float | None:
    """The figure as a number; None when absent, not a number, or NaN (no samples)."""
    value = figures.get(name)
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return None
    return float(value)


def write_results(path: Path, document: Mapping[str, Any]) -> None:
    """Write the JSON next to the report, atomically."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(path)


def _figure_text(value: float, unit: str) -> str:
    number = f"{value:,.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.3g}"
    return f"{number}{unit}" if unit == "×" else f"{number} {unit}"


def _plain(value: Any) -> Any:
    """A figure as JSON holds it: NaN (no samples) becomes null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
