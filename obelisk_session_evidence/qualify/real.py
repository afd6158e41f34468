"""The real-transcript arm: hand-labelled Replans on real sessions, through the shipped pipeline.

Every case gets a home folder of its own, laid out as the agents lay out their sessions
(`~/.claude/projects/<project>/<session>.jsonl`, `~/.pi/agent/sessions/<project>/...`), holding
the case's repository group cut at the Replan point; another agent's files go under a second
home, and the agent's sessions in other repositories are written whole beside its own. One
native index per case reads both homes; the case's enablement binds only its own home, source
and repository roots. The pipeline then runs with the thresholds calibrated on the synthetic
training split: nothing here is ever calibrated on the real cases.
"""

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, EnablementConfig
from obelisk_session_evidence.contracts.sources import SOURCES
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.parsers.discovery import default_roots
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.qualify.arms import ArmRun, run_admitted_retrieval
from obelisk_session_evidence.qualify.metrics import Detection, detection
from obelisk_session_evidence.qualify.native import claim_workdir
from obelisk_session_evidence.qualify.real_cases import (
    AGENT_ID,
    CATEGORIES,
    PROJECT_ID,
    RealCase,
    RepositoryGroup,
    SessionFile,
    corpus_root,
    record_time,
    repository_groups,
)
from obelisk_session_evidence.qualify.synthetic import QualificationCase
from obelisk_session_evidence.stages.cap_by_tokens import TokenEncoder

REAL_TARGETS: Final = {"precision": 0.95, "recall": 0.85}
"""The issue's targets for the real set; every trap must also be right."""
NEVER_REFRESH_S: Final = 1e12
MARKER: Final = ".obelisk-qualify-real-workdir"
REJECTED: Final = "rejected_input"
"""The verdict recorded when today's situation contract rejects the case (no decision at all)."""


@dataclass(frozen=True, slots=True)
class RealRun:
    """One real case's decision (or its rejection at the input boundary)."""

    case: RealCase
    run: ArmRun | None
    """None when the situation was rejected before the pipeline ran."""

    @property
    def verdict(self) -> str:
        """The pipeline's verdict, or `rejected_input`."""
        return self.run.verdict if self.run else REJECTED

    @property
    def outcomes(self) -> tuple[str, ...]:
        """The semantic delta's outcomes; none when rejected."""
        return self.run.outcomes if self.run else ()

    @property
    def predicted_repeat(self) -> bool:
        """The pipeline called the route a repeat."""
        return bool(self.run and self.run.predicted_repeat)


@dataclass(frozen=True, slots=True)
class RealSetResult:
    """The real arm's runs and the figures the report prints."""

    runs: tuple[RealRun, ...]
    thresholds: RouteThresholds

    @property
    def detection(self) -> Detection:
        """Detection counts over every real case."""
        return detection([r.case for r in self.runs], self.runs)

    @property
    def traps(self) -> tuple[int, int]:
        """(traps not called a repeat, traps)."""
        traps = [r for r in self.runs if r.case.trap]
        return sum(not r.predicted_repeat for r in traps), len(traps)

    @property
    def rejected(self) -> int:
        """Cases today's input contract rejected."""
        return sum(r.run is None for r in self.runs)

    @property
    def targets_met(self) -> bool:
        """Precision, recall and every trap right."""
        found = self.detection
        right, traps = self.traps
        return (
            found.precision >= REAL_TARGETS["precision"] and found.recall >= REAL_TARGETS["recall"] and right == traps
        )


def run_real_arm(
    cases: Sequence[RealCase], *, encoder: TokenEncoder, thresholds: RouteThresholds, workdir: Path
) -> RealSetResult:
    """Lay out every case's history, index it, and decide each Replan with `thresholds`."""
    claim_workdir(workdir, marker_name=MARKER, holds="real-transcript qualification histories (copies)")
    runs = []
    for case in cases:
        qualification = as_qualification_case(case)
        if qualification is None:
            runs.append(RealRun(case, None))
            continue
        provider, policy = case_provider(case, workdir / case.case_id)
        run, _ = run_admitted_retrieval(
            qualification, provider=provider, encoder=encoder, thresholds=thresholds, policy=policy
        )
        runs.append(RealRun(case, run))
    return RealSetResult(tuple(runs), thresholds)


def _summed(result: RealSetResult, field_name: str) -> int:
    return sum(getattr(run.run, field_name) for run in result.runs if run.run is not None)


def as_qualification_case(case: RealCase) -> QualificationCase | None:
    """The case in the synthetic arms' shape (its history lives on disk); None when rejected."""
    situation = case.situation
    if situation is None:
        return None
    return QualificationCase(
        case_id=case.case_id,
        family="real:" + case.categories[0],
        split="test",
        hand_written=True,
        situation=situation,
        history=(),
        freshness="fresh",
        expected_verdict=case.expected_verdict,
        expected_outcomes=case.expected_outcomes,
        paraphrased=any(c.startswith("paraphrase_") for c in case.categories),
        notes=(case.why,),
    )


def case_provider(case: RealCase, base: Path) -> tuple[NativeIndexProvider, AdmissionPolicy]:
    """Write the case's homes, refresh one index over them, and bind the agent's own scope."""
    home, other_home, index = base / "home", base / "other-agent-home", base / "index"
    write_history(case, home, other_home)
    source = case.group.source
    roots = {source: [default_roots(home)[source], default_roots(other_home)[source]]}
    for name in case.other_repo_groups:
        other = repository_groups()[name]
        roots.setdefault(other.source, [default_roots(home)[other.source]])
    refresh_index(index_file(index), roots, wait_s=None)
    enablement = Enablement(
        surface="replan-history",
        agent_id=AGENT_ID,
        project_id=PROJECT_ID,
        repository_id=f"repo-real-{case.group.name}",
        repo_roots=list(case.group.repo_roots),
        sources=[source],
        enabled_at=datetime(2026, 11, 1, tzinfo=UTC),
    )
    provider = NativeIndexProvider(index, enablement, home=home, refresh_window_s=NEVER_REFRESH_S)
    policy = AdmissionPolicy(config=EnablementConfig(enablements=[enablement]), load_reason_code="config_loaded")
    return provider, policy


def write_history(case: RealCase, home: Path, other_home: Path) -> list[Path]:
    """The case's session files under the homes, each cut at the Replan; the paths written."""
    corpus, written = corpus_root(), []
    for entry in case.group.files:
        owner_home = other_home if entry.path in case.other_agent else home
        if entry.path == case.at_file:
            kept = cut_before_line(corpus / entry.path, case.at_line)
        else:
            kept = cut_at_time(corpus / entry.path, case.cutoff)
        if kept:
            written.append(_write(owner_home, case.group, entry, kept))
    for name in case.other_repo_groups:
        other = repository_groups()[name]
        for entry in other.files:
            written.append(_write(home, other, entry, (corpus / entry.path).read_bytes()))
    return written


def cut_before_line(path: Path, line: int) -> bytes:
    """The file's first `line - 1` lines, byte for byte."""
    with open(path, "rb") as handle:
        return b"".join(text for _, text in zip(range(line - 1), handle, strict=False))


def cut_at_time(path: Path, cutoff: str) -> bytes:
    """The file's lines before its first record stamped at or after `cutoff`."""
    kept = []
    with open(path, "rb") as handle:
        for text in handle:
            try:
                stamp = record_time(json.loads(text))
            except ValueError:
                stamp = None
            if stamp is not None and _instant(stamp) >= _instant(cutoff):
                break
            kept.append(text)
    return b"".join(kept)


def _instant(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _write(home: Path, group: RepositoryGroup, entry: SessionFile, content: bytes) -> Path:
    target = default_roots(home)[group.source] / entry.layout
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    return target


def render_real_section(result: RealSetResult) -> list[str]:
    """The report's real-set section: targets, per-category counts, misses (ids and verdicts only)."""
    found = result.detection
    right, traps = result.traps
    rows = [
        (
            "precision on repeated routes",
            f">= {REAL_TARGETS['precision']}",
            f"{found.precision:.3f}",
            found.precision >= REAL_TARGETS["precision"],
        ),
        (
            "recall on repeated routes",
            f">= {REAL_TARGETS['recall']}",
            f"{found.recall:.3f}",
            found.recall >= REAL_TARGETS["recall"],
        ),
        ("another repository/agent traps right", "all", f"{right}/{traps}", right == traps),
    ]
    lines = [
        "## Real-transcript set (hand-labelled; never used for calibration)",
        "",
        f"- {len(result.runs)} Replan cases on real {_agents(result)} sessions "
        f"({sum(r.case.variant for r in result.runs)} labelled variants of what the agent ran), "
        f"{sum(r.case.repeated_route for r in result.runs)} labelled repeats, {traps} traps; "
        "decided by arm 2 with the thresholds calibrated on the synthetic training split.",
        f"- Rejected at the input boundary (no decision): {result.rejected}. Shell commands (proposed and prior) the"
        f" shell grammar could not read (compared by tokens): {_summed(result, 'fallback_commands')};"
        f" compared within bounded work (cut): {_summed(result, 'truncated_commands')}.",
        "",
        "| measure | target | real set | met |",
        "|---|---|---:|---|",
        *[f"| {name} | {target} | {value} | {'yes' if met else 'NO'} |" for name, target, value, met in rows],
        "",
        f"Counts: TP {found.true_positive}, FP {found.false_positive}, FN {found.false_negative}, "
        f"TN {found.true_negative}; verdict right {found.verdict_correct}/{found.cases}, "
        f"outcomes right {found.outcomes_correct}/{found.cases}.",
        "",
        "| category | cases | repeats | repeats caught | false repeats | verdict right |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for category in CATEGORIES:
        runs = [r for r in result.runs if category in r.case.categories]
        repeats = [r for r in runs if r.case.repeated_route]
        lines.append(
            f"| {category} | {len(runs)} | {len(repeats)} | {sum(r.predicted_repeat for r in repeats)} "
            f"| {sum(r.predicted_repeat and not r.case.repeated_route for r in runs)} "
            f"| {sum(r.verdict == r.case.expected_verdict for r in runs)} |"
        )
    misses = [r for r in result.runs if r.verdict != r.case.expected_verdict]
    lines += ["", "Wrong verdicts:" if misses else "Wrong verdicts: none.", ""]
    if misses:
        lines += ["| case | categories | expected | arm 2 |", "|---|---|---|---|"]
        lines += [
            f"| `{r.case.case_id}` | {', '.join(r.case.categories)} | {r.case.expected_verdict} | {r.verdict} |"
            for r in misses
        ]
    return [*lines, ""]


def _agents(result: RealSetResult) -> str:
    used = {r.case.group.source for r in result.runs}
    return ", ".join(sorted(spec.title for kind, spec in SOURCES.items() if kind in used))


def real_results_json(result: RealSetResult) -> dict[str, Any]:
    """The real set's part of `results.json`: targets, figures and every case's decision."""
    found = result.detection
    right, traps = result.traps
    cases = []
    for real in result.runs:
        run = asdict(real.run) if real.run else {}
        for key in ("latency_ms", "case_id", "arm"):
            run.pop(key, None)
        cases.append(
            {
                "case_id": real.case.case_id,
                "categories": list(real.case.categories),
                "source_file": real.case.at_file,
                "line": real.case.at_line,
                "variant": real.case.variant,
                "expected_verdict": real.case.expected_verdict,
                "expected_outcomes": list(real.case.expected_outcomes),
                "verdict": real.verdict,
                "outcomes": list(real.outcomes),
                "admitted_retrieval": run,
            }
        )
    return {
        "targets": {**REAL_TARGETS, "traps": "all"},
        "precision": found.precision,
        "recall": found.recall,
        "traps_right": right,
        "traps": traps,
        "rejected_input": result.rejected,
        "targets_met": result.targets_met,
        "counts": {
            "tp": found.true_positive,
            "fp": found.false_positive,
            "fn": found.false_negative,
            "tn": found.true_negative,
        },
        "cases": cases,
    }
