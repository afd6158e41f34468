"""Stage 0 qualification (RFC §9–10): three arms on identical labelled cases, metrics and a report.

`qualify(out_dir, seed=..., backend=..., encoder=...)` runs every case through

1. the current context only (LoopX's exact ids, no retrieval),
2. admitted retrieval through this pipeline, and
3. the agent's full same-scope history with a very large budget (the cost ceiling),

calibrates `RouteThresholds` on the training split, re-decides both retrieval arms with the
chosen thresholds, and writes `report.md`, three PNG plots and `results.json` into `out_dir`.
`results.json` and the report's tables are the same for the same seed and backend; only the
latency figures change between runs.

Backends: `standin` serves each case's events from memory (no files); `native` writes the cases'
histories as real agent session files and answers through `NativeIndexProvider`.

`real_cases` (the hand-labelled set of `fixtures.real_cases`) adds the real-transcript arm: real
sessions cut at each Replan, indexed natively, decided with the thresholds calibrated on the
synthetic training split, and reported in a section of its own with the issue's targets.
"""

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal, TypedDict

from obelisk_session_evidence.contracts.config import AdmissionPolicy
from obelisk_session_evidence.contracts.qualification import QualificationSummary
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.qualify.arms import (
    ARMS,
    ArmName,
    ArmRun,
    Trace,
    qualification_policy,
    run_admitted_retrieval,
    run_current_context,
    run_full_history,
)
from obelisk_session_evidence.qualify.calibrate import calibrate, rescored, sweep
from obelisk_session_evidence.qualify.metrics import context_size, detection
from obelisk_session_evidence.qualify.real import (
    RealSetResult,
    real_results_json,
    render_real_section,
    run_real_arm,
)
from obelisk_session_evidence.qualify.real_cases import RealCase, RepositoryGroup
from obelisk_session_evidence.qualify.replay_arm import (
    ReplayArmResult,
    render_replay_section,
    replay_results_json,
    run_replay_arm,
)
from obelisk_session_evidence.qualify.report import ReportInputs, render_report, target_checks, write_plots
from obelisk_session_evidence.qualify.standin import full_history_provider, standin_provider
from obelisk_session_evidence.qualify.synthetic import QualificationCase, qualification_cases
from obelisk_session_evidence.stages.cap_by_tokens import TokenEncoder

__all__ = [
    "ArmResults",
    "Backend",
    "QualificationSummary",
    "calibrated_thresholds",
    "decided_with",
    "qualify",
    "run_arms",
    "write_report",
]

Backend = Literal["standin", "native"]


class _RealFields(TypedDict, total=False):
    """The summary's real-set and replay figures (absent: that part did not run)."""

    real_cases: int
    real_precision: float
    real_recall: float
    real_traps_right: int
    real_traps: int
    replay_calls: int
    replay_dead_end_rate: float | None
    replay_alarms_right: float | None
    replay_dead_ends_caught: float | None
    replay_naive_alarms_right: float | None
    replay_within_session_alarms_right: float | None
    replay_within_session_dead_ends_caught: float | None
    replay_private_tokens_p95: int | None
    replay_truncation_rate: float | None
    replay_full_history_tokens_p95: int | None
    replay_decide_ms_p95: float | None


class _WithHistory(TypedDict):
    """What arms 2 and 3 share for one case."""

    encoder: TokenEncoder
    thresholds: RouteThresholds
    policy: AdmissionPolicy


def qualify(
    out_dir: Path,
    *,
    seed: int = 0,
    backend: Backend = "native",
    encoder: TokenEncoder,
    workdir: Path | None = None,
    cases: tuple[QualificationCase, ...] | None = None,
    real_cases: tuple[RealCase, ...] = (),
    real_replay: bool = False,
    replay_groups: dict[str, RepositoryGroup] | None = None,
) -> QualificationSummary:
    """Run the three arms, calibrate on the training split, write the report; return the headline.

    `cases` defaults to every case for `seed`; tests pass a subset. `real_cases` run after
    calibration, with the chosen thresholds, as the real-transcript arm. `real_replay` replays the
    real corpus (the three arms judged by outcome), whose targets then judge the run;
    `replay_groups` defaults to every repository group, tests pass one.
    """
    # The histories' repository roots are enablement roots, which must be absolute.
    out_dir, workdir = out_dir.absolute(), workdir.absolute() if workdir is not None else None
    cases = cases if cases is not None else qualification_cases(seed=seed)
    arm_results = run_arms(cases, backend=backend, encoder=encoder, workdir=workdir or out_dir / "native-histories")
    chosen = calibrated_thresholds(arm_results)
    real = None
    if real_cases:
        real_workdir = (workdir or out_dir / "native-histories") / "real-cases"
        real = run_real_arm(real_cases, encoder=encoder, thresholds=chosen, workdir=real_workdir)
    replay = None
    if real_replay:
        replay_workdir = (workdir or out_dir / "native-histories") / "real-replay"
        replay = run_replay_arm(encoder=encoder, workdir=replay_workdir, groups=replay_groups)
    return write_report(
        out_dir, decided_with(arm_results, chosen), seed=seed, backend=backend, real=real, replay=replay
    )


@dataclass(frozen=True, slots=True)
class ArmResults:
    """Every arm's runs (one per case, in case order) and the retrieval arms' private traces."""

    cases: tuple[QualificationCase, ...]
    runs: dict[ArmName, tuple[ArmRun, ...]]
    traces: dict[ArmName, list[Trace]]
    thresholds: RouteThresholds
    """The thresholds the runs were decided with."""
    defaults: RouteThresholds


def run_arms(
    cases: tuple[QualificationCase, ...], *, backend: Backend, encoder: TokenEncoder, workdir: Path
) -> ArmResults:
    """Every case through the three arms, with the default thresholds."""
    defaults = RouteThresholds()
    runs, traces = _run_arms(cases, backend=backend, encoder=encoder, thresholds=defaults, workdir=workdir)
    return ArmResults(cases, runs, traces, defaults, defaults)


def calibrated_thresholds(results: ArmResults) -> RouteThresholds:
    """Thresholds calibrated on arm 2's training-split runs only."""
    train = [i for i, case in enumerate(results.cases) if case.split == "train"]
    return calibrate(
        [results.traces["admitted_retrieval"][i] for i in train],
        [results.runs["admitted_retrieval"][i] for i in train],
        start=results.thresholds,
    )


def decided_with(results: ArmResults, thresholds: RouteThresholds) -> ArmResults:
    """Both retrieval arms re-decided with `thresholds` (compare-route only runs again)."""
    runs = dict(results.runs)
    for arm in ("admitted_retrieval", "full_history"):
        runs[arm] = tuple(rescored(results.traces[arm], results.runs[arm], thresholds))
    return ArmResults(results.cases, runs, results.traces, thresholds, results.defaults)


def write_report(
    out_dir: Path,
    results: ArmResults,
    *,
    seed: int,
    backend: Backend,
    real: RealSetResult | None = None,
    replay: ReplayArmResult | None = None,
) -> QualificationSummary:
    """`report.md`, the plots and `results.json` for decided runs; the headline numbers."""
    out_dir.mkdir(parents=True, exist_ok=True)
    cases, runs, chosen = results.cases, results.runs, results.thresholds
    held = [i for i, case in enumerate(cases) if case.split == "test"]
    points = sweep(
        [results.traces["admitted_retrieval"][i] for i in held],
        [runs["admitted_retrieval"][i] for i in held],
        around=chosen,
    )
    inputs = ReportInputs(seed, backend, cases, runs, results.defaults, chosen, tuple(points), plots_written=False)
    inputs = replace(inputs, plots_written=write_plots(out_dir, inputs))
    report_path = out_dir / "report.md"
    report = render_report(inputs)
    sections = [*(render_replay_section(replay) if replay else []), *(render_real_section(real) if real else [])]
    if sections:
        head, latency = report.split("## Latency per stage", 1)
        report = head + "\n".join(sections) + "\n## Latency per stage" + latency
    report_path.write_text(report, encoding="utf-8")
    (out_dir / "results.json").write_text(_results_json(cases, runs, chosen, real, replay), encoding="utf-8")
    result = detection([cases[i] for i in held], [runs["admitted_retrieval"][i] for i in held])
    tokens_p95 = context_size(runs["admitted_retrieval"]).tokens_p95
    real_fields: _RealFields = {}
    if real is not None:
        right, traps = real.traps
        real_fields = _RealFields(
            real_cases=len(real.runs),
            real_precision=real.detection.precision,
            real_recall=real.detection.recall,
            real_traps_right=right,
            real_traps=traps,
        )
    if replay is not None:
        real_fields |= _replay_fields(replay)
    targets = target_checks(result, tokens_p95, real, replay)
    return QualificationSummary(
        cases=len(cases),
        held_back=len(held),
        thresholds=chosen.report(),
        precision=result.precision,
        recall=result.recall,
        f1=result.f1,
        false_repeat_rate=result.false_repeat_rate,
        tokens_p95=tokens_p95,
        targets=targets,
        targets_met=all(check.met for check in targets if check.judge),
        report_path=str(report_path),
        **real_fields,
    )


def _replay_fields(replay: ReplayArmResult) -> _RealFields:
    """The summary's replay figures (empty rates stay None)."""
    total = replay.report.total
    if total is None:
        return {}
    return _RealFields(
        replay_calls=total.calls,
        replay_dead_end_rate=total.repeated_dead_end_rate,
        replay_alarms_right=total.verdict.alarms_right,
        replay_dead_ends_caught=total.verdict.dead_ends_caught_rate,
        replay_naive_alarms_right=total.naive.alarms_right,
        replay_within_session_alarms_right=replay.within_session.alarms_right,
        replay_within_session_dead_ends_caught=replay.within_session.dead_ends_caught_rate,
        replay_private_tokens_p95=replay.private_tokens_p95,
        replay_truncation_rate=replay.truncation_rate,
        replay_full_history_tokens_p95=replay.full_history_tokens_p95,
        replay_decide_ms_p95=replay.decide_ms_p95,
    )


def _run_arms(
    cases: tuple[QualificationCase, ...],
    *,
    backend: Backend,
    encoder: TokenEncoder,
    thresholds: RouteThresholds,
    workdir: Path,
) -> tuple[dict[ArmName, tuple[ArmRun, ...]], dict[ArmName, list[Trace]]]:
    runs: dict[ArmName, list[ArmRun]] = {arm: [] for arm in ARMS}
    traces: dict[ArmName, list[Trace]] = {"admitted_retrieval": [], "full_history": []}
    if backend == "native":
        from obelisk_session_evidence.qualify.native import NativeHistories

        histories = NativeHistories.write(workdir, cases)
    for case in cases:
        runs["current_context"].append(run_current_context(case, encoder=encoder))
        if backend == "native":
            admitted, full, policy = histories.providers(case)
        else:
            admitted, full, policy = standin_provider(case), full_history_provider(case), qualification_policy()
        with_history = _WithHistory(encoder=encoder, thresholds=thresholds, policy=policy)
        run, trace = run_admitted_retrieval(case, provider=admitted, **with_history)
        runs["admitted_retrieval"].append(run)
        traces["admitted_retrieval"].append(trace)
        run, trace = run_full_history(case, provider=full, **with_history)
        runs["full_history"].append(run)
        traces["full_history"].append(trace)
    return {arm: tuple(values) for arm, values in runs.items()}, traces


def _results_json(
    cases: tuple[QualificationCase, ...],
    runs: dict[ArmName, tuple[ArmRun, ...]],
    chosen: RouteThresholds,
    real: RealSetResult | None = None,
    replay: ReplayArmResult | None = None,
) -> str:
    """Per case and arm: verdict, outcomes and context size (no latency, so it is reproducible)."""
    rows = []
    for index, case in enumerate(cases):
        row: dict[str, Any] = {
            "case_id": case.case_id,
            "family": case.family,
            "split": case.split,
            "expected_verdict": case.expected_verdict,
            "expected_outcomes": list(case.expected_outcomes),
        }
        for arm in ARMS:
            run = asdict(runs[arm][index])
            run.pop("latency_ms")
            run.pop("case_id")
            run.pop("arm")
            row[arm] = run
        rows.append(row)
    document: dict[str, Any] = {"thresholds": chosen.report(), "cases": rows}
    if real is not None:
        document["real_set"] = real_results_json(real)
    if replay is not None:
        document["real_replay"] = replay_results_json(replay)
    return json.dumps(document, indent=1, sort_keys=True) + "\n"
