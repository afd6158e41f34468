"""The results JSON: one entry per target of issue 17, its figure, and a `met` flag (shape, not timings)."""

import json
import math

from bench._targets import TARGETS, results_document, targets_table

ISSUE_17_TARGETS = {
    "decision_p95_100k",
    "decision_p95_1m",
    "cold_run_admitted",
    "cold_run_not_admitted",
    "nochange_refresh_10k",
    "append_flat",
    "build_throughput",
    "build_peak_memory",
    "private_context",
}
ISSUE_24_TARGETS = {"replay_throughput"}
ISSUE_27_TARGETS = {"session_peak_memory_1m"}


def _document(figures: dict) -> dict:
    return results_document(
        profile="quick",
        command="make bench-quick",
        seconds=1.0,
        header=[("python", "x")],
        figures=figures,
        why_not={"decision_p95_1m": "--quick measures 10k and 100k only"},
    )


def test_every_target_of_issue_17_is_judged_once() -> None:
    assert [target.name for target in TARGETS] == list(dict.fromkeys(target.name for target in TARGETS))
    assert {target.name for target in TARGETS} == ISSUE_17_TARGETS | ISSUE_24_TARGETS | ISSUE_27_TARGETS


def test_met_follows_the_limit_and_its_direction() -> None:
    figures = {target.figure: target.limit for target in TARGETS}  # exactly at the limit: met either way
    document = _document(figures)
    assert all(entry["met"] is True for entry in document["targets"]) and document["all_met"] is True
    beyond = {t.figure: t.limit * (1.5 if t.at_most else 0.5) for t in TARGETS}
    assert all(entry["met"] is False for entry in _document(beyond)["targets"])
    within = {t.figure: t.limit * (0.5 if t.at_most else 1.5) for t in TARGETS}
    assert all(entry["met"] is True for entry in _document(within)["targets"])


def test_a_figure_not_measured_is_null_with_the_reason() -> None:
    figures = {"decision_cpu_p95_ms_100k": 12.5, "decision_cpu_p95_ms_1M": math.nan, "context_item_tokens_max": 2500}
    document = _document(figures)
    by_name = {entry["name"]: entry for entry in document["targets"]}
    assert by_name["decision_p95_100k"] | {"finished_at": None} == {
        "name": "decision_p95_100k",
        "target": by_name["decision_p95_100k"]["target"],
        "figure": "decision_cpu_p95_ms_100k",
        "value": 12.5,
        "limit": 50.0,
        "comparison": "<=",
        "unit": "ms CPU",
        "met": True,
        "not_measured": None,
        "floor": None,
        "finished_at": None,
    }
    assert by_name["decision_p95_1m"]["met"] is None and by_name["decision_p95_1m"]["value"] is None
    assert by_name["decision_p95_1m"]["not_measured"] == "--quick measures 10k and 100k only"
    assert by_name["private_context"]["met"] is False

    assert by_name["build_throughput"]["not_measured"] == "not in this profile"
    assert document["figures"]["decision_cpu_p95_ms_1M"] is None  # NaN (no samples) is null, valid JSON
    assert document["all_met"] is False
    json.loads(json.dumps(document, allow_nan=False))
    assert {
        "schema",
        "profile",
        "command",
        "finished_at",
        "seconds",
        "machine",
        "figures",
        "targets",
    } <= document.keys()


def test_a_cold_run_target_carries_the_stack_floor_when_measured() -> None:
    figures = {"cold_run_not_admitted_ratio": 6.2, "cold_run_stack_floor_ratio": 5.2}
    by_name = {entry["name"]: entry for entry in _document(figures)["targets"]}
    assert by_name["cold_run_not_admitted"]["floor"] == 5.2 and by_name["cold_run_not_admitted"]["met"] is False
    assert by_name["decision_p95_100k"]["floor"] is None
    table = targets_table(figures, {})
    row = next(row for row in table.rows if row[0].startswith("not-admitted cold"))
    assert row[1:] == ("6.2× (stack floor 5.2×)", "**no**")


def test_the_report_table_has_one_row_per_target() -> None:
    table = targets_table({"nochange_10k_s": 0.12, "real10_build_mb_cpu_s": 90.0}, {})
    rows = {row[0]: row for row in table.rows}
    assert len(table.rows) == len(TARGETS)
    assert rows[TARGETS[4].text][1:] == ("0.12 s wall", "yes")
    assert rows[TARGETS[6].text][1:] == ("90.0 MB per CPU-s", "**no**")
    assert rows[TARGETS[0].text][2] == "-"
