"""The qualification end to end on a sample: arms, calibration, report, determinism, CLI."""

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.qualify import qualify
from obelisk_session_evidence.qualify.arms import (
    qualification_policy,
    run_admitted_retrieval,
    run_current_context,
)
from obelisk_session_evidence.qualify.standin import in_scope_items, standin_provider
from obelisk_session_evidence.qualify.synthetic import qualification_cases

SAMPLE = qualification_cases(seed=0, per_family=2)
BY_ID = {case.case_id: case for case in qualification_cases(seed=0)}


def _tables(report: str) -> str:
    """The report without its latency section (the only part allowed to vary)."""
    return report.split("## Latency per stage")[0]


def test_qualify_standin_writes_report_plots_and_results(tmp_path: Path, encoder) -> None:
    summary = qualify(tmp_path / "a", backend="standin", encoder=encoder, cases=SAMPLE)
    out = tmp_path / "a"
    report = (out / "report.md").read_text()
    assert summary.cases == len(SAMPLE) and summary.report_path == str(out / "report.md")
    for heading in (
        "## Targets",
        "## Thresholds",
        "## Repeated-route detection per arm",
        "## Private context per admitted query",
        "## Latency per stage",
    ):
        assert heading in report
    results = json.loads((out / "results.json").read_text())
    assert len(results["cases"]) == len(SAMPLE) and results["thresholds"] == summary.thresholds
    if importlib.util.find_spec("matplotlib") is None:
        assert "Plots skipped: matplotlib is not installed" in report
        return
    for name in ("precision_recall_threshold.png", "context_size.png", "latency.png"):
        assert (out / name).read_bytes().startswith(b"\x89PNG")


def test_qualify_standin_deterministic_except_latency(tmp_path: Path, encoder) -> None:
    qualify(tmp_path / "a", backend="standin", encoder=encoder, cases=SAMPLE)
    qualify(tmp_path / "b", backend="standin", encoder=encoder, cases=SAMPLE)
    assert (tmp_path / "a" / "results.json").read_bytes() == (tmp_path / "b" / "results.json").read_bytes()
    first, second = ((tmp_path / d / "report.md").read_text() for d in "ab")
    assert _tables(first) == _tables(second)
    plot = "precision_recall_threshold.png"
    if (tmp_path / "a" / plot).exists():
        assert (tmp_path / "a" / plot).read_bytes() == (tmp_path / "b" / plot).read_bytes()


def test_qualify_arm1_misses_paraphrases_arm2_finds_them(encoder) -> None:
    case = BY_ID["q-paraphrase_wrapper-001"]
    arm1 = run_current_context(case, encoder=encoder)
    arm2, _ = run_admitted_retrieval(
        case,
        provider=standin_provider(case),
        encoder=encoder,
        thresholds=RouteThresholds(),
        policy=qualification_policy(),
    )
    assert not arm1.predicted_repeat and arm2.verdict == "repeats_prior_failure"


@pytest.mark.parametrize("case_id", ["q-foreign_agent_failure-001", "q-foreign_repository_failure-001"])
def test_standin_provider_never_serves_foreign_history(case_id: str) -> None:
    case = BY_ID[case_id]
    served = {item.snippet for item in in_scope_items(case)}
    foreign = [e for e in case.history if e.owner != "self"]
    assert foreign and all(not any(e.text in s for s in served) or e.owner == "self" for e in foreign)


def test_qualify_native_backend_sample(tmp_path: Path, encoder) -> None:
    wanted = (
        "q-exact_repeat-001",
        "q-stale_index-001",
        "q-incomplete_index-001",
        "q-foreign_agent_failure-001",
        "q-foreign_repository_failure-001",
        "q-provider_scope_leak-001",
        "q-scope_denied-001",
        "q-paraphrase_wrapper-001",
    )
    cases = tuple(BY_ID[case_id] for case_id in wanted)
    qualify(tmp_path / "out", backend="native", encoder=encoder, cases=cases)
    results = {row["case_id"]: row for row in json.loads((tmp_path / "out" / "results.json").read_text())["cases"]}
    arm2 = {case_id: row["admitted_retrieval"] for case_id, row in results.items()}
    assert arm2["q-stale_index-001"]["freshness"] == "stale"
    assert arm2["q-incomplete_index-001"]["freshness"] == "incomplete"
    for case_id in ("q-stale_index-001", "q-incomplete_index-001"):
        assert arm2[case_id]["verdict"] == "novelty_unverified"
    assert arm2["q-exact_repeat-001"]["verdict"] == "repeats_prior_failure"
    assert arm2["q-paraphrase_wrapper-001"]["verdict"] == "repeats_prior_failure"
    assert arm2["q-foreign_agent_failure-001"]["verdict"] == "novel"
    assert arm2["q-foreign_repository_failure-001"]["verdict"] == "novel"
    assert arm2["q-provider_scope_leak-001"]["retrieval"] == "scope_violation"
    assert arm2["q-scope_denied-001"]["admission"] == BY_ID["q-scope_denied-001"].expected_admission


def test_qualify_native_refuses_a_foreign_workdir(tmp_path: Path, encoder) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "keep.txt").write_text("not ours")
    from obelisk_session_evidence.contracts.errors import InvalidInput

    with pytest.raises(InvalidInput):
        qualify(tmp_path / "out", backend="native", encoder=encoder, cases=SAMPLE[:2], workdir=tmp_path / "work")
    assert (tmp_path / "work" / "keep.txt").exists()


def test_qualify_native_takes_a_relative_out_folder(tmp_path: Path, encoder, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    summary = qualify(Path("relative-out"), backend="native", encoder=encoder, cases=SAMPLE[:2])
    assert summary.report_path == str(tmp_path / "relative-out" / "report.md")
    assert (tmp_path / "relative-out" / "report.md").is_file()


def test_cli_qualify_standin_smoke(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["qualify", "--out", str(tmp_path / "q"), "--backend", "standin", "--per-family", "1", "--format", "json"]
    )
    assert result.exit_code in (0, 2), result.output
    summary = json.loads(result.stdout)
    assert summary["report_path"].endswith("report.md") and (tmp_path / "q" / "report.md").exists()
    assert result.exit_code == (0 if summary["targets_met"] else 2)


def test_cli_qualify_help_has_an_example() -> None:
    result = CliRunner().invoke(main, ["qualify", "--help"])
    assert result.exit_code == 0 and "Example: obelisk-session-evidence qualify --out" in result.output
