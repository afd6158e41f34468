"""Canary: the words of a command that the route rules read (an unquoted pattern zsh matched to
nothing, a process the agent stopped with Ctrl-C) reach the private prior calls only, never the
decision, its receipt or a log."""

import logging
from pathlib import Path

from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.stages.pipeline import PipelineDependencies, run_pipeline
from tests.providers.native.test_call_places import _rollout as _plain_rollout
from tests.providers.native.test_parsers_codex_interrupt import _exec, _output, _rollout, _stdin
from tests.stages.helpers import enabled_policy, situation_model

CANARY = "canary_shape_words_5d20b7"
WORKDIR = "/work/alpha"
SESSION = "019f0000-0000-7000-8000-0000000c4a11"


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
    policy = enabled_policy(repo_roots=[WORKDIR], sources=["codex"], source_roots={"codex": str(root)})
    provider = NativeIndexProvider(tmp_path / "index", policy.config.enablements[0])
    dependencies = PipelineDependencies(
        policy=policy, provider=provider, encoder=encoder, thresholds=RouteThresholds(), digest_salt="salt"
    )
    quoted = f"magick '{CANARY}.gif[0]' info:"
    with caplog.at_level(logging.DEBUG):
        run = run_pipeline(situation_model(commands=[quoted, server]), dependencies)
    prior = {call.command: call for call in run.values.capped.prior_calls if CANARY in call.command}
    assert prior[unquoted].exit_code == 1 and prior[server].exit_code is None
    decision = run.decision
    assert decision.comparison.verdict != "repeats_prior_failure"  # quoted: another route; the server did not fail
    assert decision.receipt is not None and CANARY not in decision.receipt.model_dump_json()
    assert CANARY not in decision.model_dump_json()
    assert CANARY not in caplog.text
