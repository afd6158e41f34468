"""Held-out-style repeats from the real corpus: the stand-in path and the native index agree.

Each case proposes, in the same repository, a command that already ran there (a repeat of a
failure, or a route that never ran). The pipeline runs once with the native index and once with
the Obelisk adapter over the stand-in, on the same corpus laid out the same way.
"""

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fixtures.obelisk_stand_in import StandIn
from fixtures.situations import situation
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, EnablementConfig
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.stages.pipeline import PipelineDependencies, run_pipeline
from tests.providers.obelisk.conftest import SPOTTER_ROOT, provider_for

NAYA_ROOT = "/Users/Sample_User/naya"
SCOPE = {"agent_id": "agent-1", "project_id": "proj-1", "repository_id": "repo-1"}
CASES = [
    pytest.param(
        SPOTTER_ROOT,
        "claude",
        "node assets/build.js 2>&1",
        ["assets/build.js"],
        "repeats_prior_failure",
        id="claude-esbuild-failure",
    ),
    pytest.param(
        NAYA_ROOT,
        "codex",
        'ps -ef | rg -i "Google Chrome|chrome.*remote|codemie|codemie-ui"',
        [],
        None,
        id="codex-exit-1-with-is-error-0",
    ),
    pytest.param(
        SPOTTER_ROOT, "claude", "cargo build --release --locked", ["Cargo.toml"], "novel", id="claude-never-ran"
    ),
]


def _enablement(home: Path, root: str, source: str) -> Enablement:
    folder = {"claude": home / ".claude" / "projects", "codex": home / ".codex" / "sessions"}[source]
    return Enablement(
        surface="replan-history",
        **SCOPE,
        repo_roots=[root],
        sources=[source],
        source_roots={source: str(folder)},
        provider="obelisk",
        enabled_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def _decide(provider, enablement: Enablement, command: str, files: list[str], encoder):
    document = situation(commands=[command], files=files, scope=SCOPE)
    model = load_contract(ReplanSituation, json.dumps(document).encode())
    policy = AdmissionPolicy(config=EnablementConfig(enablements=[enablement]), load_reason_code="config_loaded")
    dependencies = PipelineDependencies(
        policy=policy,
        provider=provider,
        encoder=encoder,
        thresholds=RouteThresholds(),
        digest_salt="salt",
    )
    run = run_pipeline(model, dependencies)
    return run.decision, run.values


@pytest.mark.parametrize(("root", "source", "command", "files", "expected"), CASES)
def test_the_same_verdict_through_obelisk_and_the_native_index(
    stand_in: StandIn, tmp_path: Path, encoder, root, source, command, files, expected
) -> None:
    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    enablement = _enablement(stand_in.home, root, source)
    native = NativeIndexProvider(tmp_path / "native-index", enablement, home=stand_in.home)
    obelisk = provider_for(stand_in, enablement, tmp_path / "work")
    native_decision, native_values = _decide(native, enablement, command, files, encoder)
    obelisk_decision, obelisk_values = _decide(obelisk, enablement, command, files, encoder)
    assert obelisk_values.retrieval.reason_code == "retrieved"
    assert native_values.retrieval.reason_code == "retrieved"
    assert obelisk_decision.comparison.verdict == native_decision.comparison.verdict
    if expected is not None:
        assert obelisk_decision.comparison.verdict == expected
    assert obelisk_decision.receipt.freshness == "fresh"
    ran = [call for call in obelisk_values.retrieval.prior_calls if call.command == command]
    if source == "codex":  # is_error 0; the exit code comes from `Process exited with code 1`
        assert any(call.exit_code == 1 and call.is_error is False for call in ran)


def test_prior_calls_stay_private(stand_in: StandIn, tmp_path: Path, encoder) -> None:
    """A canary command and output reach the private prior calls, never the public decision; the
    verdict is the native index's (the session's later edits count as changes since the failure)."""
    canary = "CANARY-OBELISK-PRIOR-5d1e"
    session = next(stand_in.home.rglob("8463c716-*.jsonl"))  # a spotter-fum session
    base = {
        "type": "assistant",
        "cwd": f"{SPOTTER_ROOT}/spotter-fum",
        "sessionId": "s",
        "timestamp": "2026-02-10T21:30:00.000Z",
        "isSidechain": False,
    }
    lines = [
        dict(
            base,
            uuid="c0ffee00-0000-4000-8000-000000000001",
            message={
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_canary",
                        "name": "Bash",
                        "input": {"command": f"make deploy {canary}"},
                    }
                ],
            },
        ),
        dict(
            base,
            type="user",
            uuid="c0ffee00-0000-4000-8000-000000000002",
            message={
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_canary",
                        "is_error": True,
                        "content": f"Exit code 2\nmake: *** {canary} Error 2",
                    }
                ],
            },
        ),
    ]
    with session.open("a") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)
    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    enablement = _enablement(stand_in.home, SPOTTER_ROOT, "claude")
    obelisk = provider_for(stand_in, enablement, tmp_path / "work")
    decision, values = _decide(obelisk, enablement, f"make deploy {canary}", [], encoder)
    calls = values.retrieval.prior_calls
    assert any(canary in call.command and canary in call.output_excerpt for call in calls)
    assert calls[0].exit_code == 2 and calls[0].is_error is True
    assert canary not in decision.model_dump_json()
    native = NativeIndexProvider(tmp_path / "native-index", enablement, home=stand_in.home)
    native_decision, _ = _decide(native, enablement, f"make deploy {canary}", [], encoder)
    assert decision.comparison.verdict == native_decision.comparison.verdict
