"""qualify's real arm judged by outcome: the real corpus replayed, RFC §10's three arms on identical
calls, in report.md, results.json and the summary, whose replay targets then judge the run."""

import json
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.qualify import qualify
from obelisk_session_evidence.qualify.real_cases import corpus_root, repository_groups
from obelisk_session_evidence.qualify.replay_corpus import lay_out_corpus
from obelisk_session_evidence.qualify.synthetic import qualification_cases

pytestmark = pytest.mark.skipif(not corpus_root().is_dir(), reason="the real corpus is not on this machine")
GROUP = "codex-naya"
"""The smallest repository group (35 shell calls): the arm's whole path in seconds."""


def _commands(tmp_path: Path) -> set[str]:
    """The group's shell commands, read through the native index (what must stay private)."""
    config = lay_out_corpus({GROUP: repository_groups()[GROUP]}, tmp_path / "read-home")
    provider = NativeIndexProvider(tmp_path / "read-index", config.enablements[0])
    provider.refresh()
    return {timed.call.command for timed in provider.timed_calls(provider.timeline()) if len(timed.call.command) > 12}


def test_qualify_judges_by_the_replayed_real_corpus(encoder, tmp_path):
    sample = qualification_cases(seed=0, per_family=1)
    group = {GROUP: repository_groups()[GROUP]}
    summary = qualify(
        tmp_path / "q", backend="standin", encoder=encoder, cases=sample, real_replay=True, replay_groups=group
    )
    report = (tmp_path / "q" / "report.md").read_text()
    section = report.split("## Real outcomes")[1].split("## Latency per stage")[0]
    for row in ("| 1 within-session evidence only |", "| 2 retrieval admitted", "| 3 full history (cost ceiling) |"):
        assert row in section
    assert "| naive rule" in section and f"| project-real-{GROUP} |" in section
    results = json.loads((tmp_path / "q" / "results.json").read_text())["real_replay"]
    total = results["total"]
    assert summary.replay_calls == total["calls"] > 0
    assert summary.replay_alarms_right == total["verdict"]["alarms_right"]
    assert summary.replay_dead_end_rate == total["repeated_dead_end_rate"]
    assert summary.replay_within_session_alarms_right == results["within_session"]["alarms_right"]
    assert summary.replay_full_history_tokens_p95 == results["full_history_tokens"]["p95"] > 0
    assert summary.replay_private_tokens_p95 == results["private_tokens_p95"]
    # The replay judges; the synthetic arms' targets are coverage.
    judging = {check.name for check in summary.targets if check.judge}
    assert judging == {"replay_alarms_right", "replay_dead_ends_caught", "replay_alarms_right_over_naive"}
    assert summary.targets_met == all(check.met for check in summary.targets if check.judge)
    public = report + (tmp_path / "q" / "results.json").read_text() + summary.model_dump_json()
    commands = _commands(tmp_path)
    assert commands and not any(command in public for command in commands)
