"""Golden tests of the messages people read: each says what is wrong and where, and no content."""

import io
import json

from click.testing import CliRunner
from rich.console import Console

from fixtures.situations import situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.cli.render_qualify import render_qualification
from obelisk_session_evidence.contracts.qualification import QualificationSummary, TargetCheck
from obelisk_session_evidence.flows.server import free_port
from tests.providers.native.index.transcripts import ClaudeTranscript

CANARY = "SECRETRAWXYZ-messages"


def _invoke(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, list(args), input=stdin)


def test_an_unreadable_situation_names_the_path_and_the_os_reason(tmp_path):
    missing = tmp_path / "nope" / "situation.json"
    result = _invoke("run", "--situation", str(missing))
    assert (result.exit_code, result.stderr) == (
        2,
        f"error: invalid_input: cannot read {missing}: No such file or directory\n",
    )
    folder = _invoke("run", "--situation", str(tmp_path))
    assert folder.stderr == f"error: invalid_input: cannot read {tmp_path}: Is a directory\n"


def test_a_typo_names_the_unknown_field_first_and_every_other_problem():
    document = situation()
    del document["situation_id"]
    document[f"situtation_id{CANARY}"] = "x"
    result = _invoke("run", "--situation", "-", stdin=json.dumps(document))
    assert (result.exit_code, result.stderr) == (
        2,
        "error: invalid_input: <root>: unknown field (1); situation_id: Field required\n",
    )
    assert CANARY not in result.output


def test_validation_lists_at_most_five_problems_then_how_many_more():
    document = {**situation(), CANARY: 1, f"{CANARY}2": 2}
    document["scope"] = {**document["scope"], CANARY: 3}
    for field in ("situation_id", "trigger_hint", "schema_version"):
        document.pop(field, None)
    document["obligation"] = 7
    document["proposed"] = "x"
    document["operator_request"] = []
    result = _invoke("run", "--situation", "-", stdin=json.dumps(document))
    assert result.stderr == (
        "error: invalid_input: <root>: unknown field (2); scope: unknown field (1); "
        "schema_version: Field required; situation_id: Field required; "
        "obligation: Input should be an object (+2 more)\n"
    )
    assert CANARY not in result.output


def test_an_unreachable_dask_scheduler_is_dask_unreachable_before_any_work(tmp_path):
    items = tmp_path / "stalled.jsonl"
    items.write_text(json.dumps(situation()) + "\n")
    address = f"tcp://127.0.0.1:{free_port()}"
    result = _invoke(
        "batch", "--in", str(items), "--out", str(tmp_path / "out"), "--task-runner", "dask", "--dask-address", address
    )
    assert (result.exit_code, result.stderr) == (
        2,
        f"error: dask_unreachable: no Dask scheduler answers at {address} (Connection refused)\n",
    )
    assert not (tmp_path / "out" / "records").exists()


def test_text_off_a_terminal_uses_the_full_width(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    root = tmp_path / ("deeply-nested-session-folder-" * 4) / "claude"
    ClaudeTranscript(root, "s1", "/work/alpha").user("hello").write()
    assert _invoke("index", "refresh", "--root", f"claude={root}").exit_code == 0
    text = _invoke("index", "status").stdout
    assert str(root) in text
    assert max(len(line) for line in text.splitlines()) > 80


def test_qualify_names_each_missed_target_with_its_figure_against_the_target():
    summary = QualificationSummary(
        cases=350,
        held_back=185,
        thresholds={"command_repeat": 85},
        precision=0.978,
        recall=0.938,
        f1=0.958,
        false_repeat_rate=0.023,
        tokens_p95=2375.0,
        targets_met=False,
        report_path="/q/report.md",
        targets=[
            TargetCheck(
                name="precision",
                label="precision on repeated routes",
                comparison=">=",
                target=0.95,
                figure=0.978,
                met=True,
            ),
            TargetCheck(
                name="false_repeat_rate",
                label="false-repeat rate",
                comparison="<=",
                target=0.02,
                figure=0.023,
                met=False,
            ),
            TargetCheck(
                name="tokens_p95",
                label="p95 private context (tokens)",
                comparison="<=",
                target=2000,
                figure=2375.0,
                met=False,
            ),
        ],
    )
    console = Console(width=120, record=True, file=io.StringIO())
    render_qualification(summary, console)
    text = console.export_text()
    assert "│ targets                 │ 2 of 3 NOT met" in text
    assert "│ missed                  │ false-repeat rate: 0.023, target <= 0.02" in text
    assert "│ missed                  │ p95 private context (tokens): 2375, target <= 2000" in text
    assert "precision on repeated routes" not in text
