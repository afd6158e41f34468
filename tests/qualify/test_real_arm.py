"""The real arm end to end on a few cases: layout, native index, pipeline, report and results."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.qualify import qualify
from obelisk_session_evidence.qualify.real import REJECTED, RealSetResult, run_real_arm
from obelisk_session_evidence.qualify.real_cases import corpus_root, load_real_cases, sample_real_cases
from obelisk_session_evidence.qualify.synthetic import qualification_cases

pytestmark = pytest.mark.skipif(not corpus_root().is_dir(), reason="the real corpus is not on this machine")
PICKED = (
    "sp-a0y-push-xwt",
    "sp-a0y-push-trap-agent",
    "cm-trap-repo-git-push",
    "sp-gqc-push-setupstream",
    "pi-check-exact",
)


@pytest.fixture(scope="module")
def few():
    by_id = {case.case_id: case for case in load_real_cases()}
    return tuple(by_id[case_id] for case_id in PICKED)


def test_real_arm_decides_each_case_through_the_native_index(few, encoder, tmp_path: Path) -> None:
    result = run_real_arm(few, encoder=encoder, thresholds=RouteThresholds(), workdir=tmp_path / "real")
    assert isinstance(result, RealSetResult) and len(result.runs) == len(few)
    for real in result.runs:
        assert real.run is not None and real.verdict != REJECTED
        assert real.run.admission == "admitted" and real.run.freshness == "fresh", real.case.case_id
    homes = {p.parent.name for p in (tmp_path / "real").glob("*/home")}
    assert homes == set(PICKED)
    # The trap's other agent has its own home; the other-repository case holds the spotter sessions whole.
    assert any((tmp_path / "real" / "sp-a0y-push-trap-agent" / "other-agent-home" / ".claude").rglob("*.jsonl"))
    assert any((tmp_path / "real" / "cm-trap-repo-git-push" / "home" / ".claude" / "projects").glob("*spotter*"))
    right, traps = result.traps
    assert traps == 2 and 0 <= right <= traps
    assert 0.0 <= result.detection.precision <= 1.0 and result.detection.cases == len(few)


def test_qualify_reports_the_real_set_beside_the_synthetic_families(few, encoder, tmp_path: Path) -> None:
    sample = qualification_cases(seed=0, per_family=1)
    summary = qualify(tmp_path / "q", backend="standin", encoder=encoder, cases=sample, real_cases=few)
    report = (tmp_path / "q" / "report.md").read_text()
    section = report.split("## Real-transcript set")[1].split("## Latency per stage")[0]
    for text in (">= 0.95", ">= 0.85", "another repository/agent traps right", "| trap_other_agent |"):
        assert text in section
    results = json.loads((tmp_path / "q" / "results.json").read_text())
    real = results["real_set"]
    assert [row["case_id"] for row in real["cases"]] == list(PICKED)
    assert real["targets"] == {"precision": 0.95, "recall": 0.85, "traps": "all"}
    assert summary.real_cases == len(few) and summary.real_precision == real["precision"]
    assert summary.real_recall == real["recall"] and summary.real_traps == real["traps"] == 2
    real_checks = [check for check in summary.targets if check.name.startswith("real_")]
    assert [check.name for check in real_checks] == ["real_precision", "real_recall", "real_traps"]
    assert summary.targets_met == all(check.met for check in summary.targets)
    # Nothing of the sessions or the proposals reaches the public outputs: ids, verdicts and counts only.
    public = report + (tmp_path / "q" / "results.json").read_text()
    for canary in ("has no upstream branch", "git push", "npm run check", "/home/USER/projects", "set-upstream"):
        assert canary not in public


def test_cli_smoke_samples_the_real_set(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "qualify",
            "--out",
            str(tmp_path / "q"),
            "--backend",
            "standin",
            "--per-family",
            "1",
            "--real",
            "--format",
            "json",
        ],
    )
    assert result.exit_code in (0, 2), result.output
    summary = json.loads(result.stdout)
    assert summary["real_cases"] == len(sample_real_cases(load_real_cases(), per_category=1))
    assert "## Real-transcript set" in (tmp_path / "q" / "report.md").read_text()
    assert "has no upstream branch" not in result.output and "git push" not in result.output
