"""Canary: the words of a command that the route rules read (an unquoted pattern zsh matched to
nothing, a process the agent stopped with Ctrl-C, an older Codex's status lines, sandbox failures
and patches run through its shell tool, a Claude Code background task's reported output) reach the
private prior calls only, never the decision, its receipt or a log."""

import logging
from pathlib import Path

from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.stages.pipeline import PipelineDependencies, run_pipeline
from tests.providers.native import test_parsers_claude_background as background
from tests.providers.native import test_parsers_codex_older_statuses as older
from tests.providers.native.test_call_places import _rollout as _plain_rollout
from tests.providers.native.test_parsers_codex_interrupt import _exec, _output, _rollout, _stdin
from tests.stages.helpers import enabled_policy, situation_model

CANARY = "canary_shape_words_5d20b7"
WORKDIR = "/work/alpha"
SESSION = "019f0000-0000-7000-8000-0000000c4a11"


def _assert_kept_private(decision: ReplanEvidenceDecision, log: str) -> None:
    """The canary reaches no public output: not the decision, its receipt or a log."""
    assert decision.receipt is not None and CANARY not in decision.receipt.model_dump_json()
    assert CANARY not in decision.model_dump_json()
    assert CANARY not in log


def _dependencies(tmp_path: Path, root: Path, encoder, source: str = "codex") -> PipelineDependencies:
    policy = enabled_policy(repo_roots=[WORKDIR], sources=[source], source_roots={source: str(root)})
    provider = NativeIndexProvider(tmp_path / "index", policy.config.enablements[0])
    return PipelineDependencies(
        policy=policy, provider=provider, encoder=encoder, thresholds=RouteThresholds(), digest_salt="salt"
    )


def test_words_the_route_rules_read_stay_private(tmp_path: Path, encoder, caplog) -> None:
    root = tmp_path / "codex"
    unquoted = f"magick {CANARY}.gif[0] info:"
    refused = f"zsh:1: no matches found: {CANARY}.gif[0]"
    _plain_rollout(root, SESSION, WORKDIR, [("c1", unquoted, None, 1, refused)])
    server = f"npm run dev -- --host {CANARY}"
    stopped = [
        _exec("s1", server),
        _output("s1", "Process running with session ID 7", f"ready {CANARY}\n"),
        _stdin("s2", 7, "\u0003"),
        _output("s2", "Process exited with code 130", "^C\n"),
    ]
    _rollout(root / "2026" / "07" / "14", stopped)
    dependencies = _dependencies(tmp_path, root, encoder)
    quoted = f"magick '{CANARY}.gif[0]' info:"
    with caplog.at_level(logging.DEBUG):
        run = run_pipeline(situation_model(commands=[quoted, server]), dependencies)
    prior = {call.command: call for call in run.values.capped.prior_calls if CANARY in call.command}
    assert prior[unquoted].exit_code == 1 and prior[server].exit_code is None
    decision = run.decision
    assert decision.comparison.verdict != "repeats_prior_failure"  # quoted: another route; the server did not fail
    _assert_kept_private(decision, caplog.text)


def test_an_older_codex_s_failures_and_patches_stay_private(tmp_path: Path, encoder, caplog) -> None:
    root = tmp_path / "codex"
    tests = f"pytest -q -k {CANARY}"
    denied = f"touch /srv/{CANARY}"
    patch = f"*** Begin Patch\n*** Add File: src/{CANARY}.py\n+x = 1\n*** End Patch"
    wrapped = (
        "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 1,"
        f" stdout: , stderr: touch: cannot touch '/srv/{CANARY}': Permission denied"
    )
    older._rollout(
        root,
        [
            older._shell_command("c1", tests),
            older._output("c1", older._status(1, f"FAILED tests/test_{CANARY}.py::test_it\n1 failed")),
            older._shell("c2", denied),
            older._output("c2", wrapped),
            older._shell("c3", ["apply_patch", patch]),
            older._output("c3", '{"output":"Done","metadata":{"exit_code":0}}'),
        ],
    )
    with caplog.at_level(logging.DEBUG):
        run = run_pipeline(situation_model(commands=[tests]), _dependencies(tmp_path, root, encoder))
    prior = {call.command: call for call in run.values.capped.prior_calls if CANARY in call.command}
    assert prior[tests].exit_code == 1 and prior[tests].outcome == "failed"
    decision = run.decision
    # A failure read from its "Exit code: 1" line, and the patch after it an edit that changed the tree.
    assert decision.comparison.verdict == "repeats_prior_failure_changed_since"
    _assert_kept_private(decision, caplog.text)


def test_a_background_task_s_output_stays_private(tmp_path: Path, encoder, caplog) -> None:
    root = tmp_path / "claude"
    command = f"bun test {CANARY}"
    blocks = [
        background._use("u1", "Bash", {"command": command, "run_in_background": True}),
        background._result("u1", background.STARTED.format(task="b15a2a3")),
        background._use("u2", "TaskOutput", {"task_id": "b15a2a3", "block": True}),
        background._result("u2", background._read("b15a2a3", "completed", f"(fail) {CANARY}\n 1 fail", 1)),
    ]
    background._transcript(root / "-work-alpha", blocks)
    with caplog.at_level(logging.DEBUG):
        run = run_pipeline(situation_model(commands=[command]), _dependencies(tmp_path, root, encoder, "claude"))
    prior = {call.command: call for call in run.values.capped.prior_calls if CANARY in call.command}
    assert prior[command].exit_code == 1 and CANARY in prior[command].output_excerpt
    decision = run.decision
    assert decision.comparison.verdict == "repeats_prior_failure"  # the task's own failure, read from its report
    _assert_kept_private(decision, caplog.text)
