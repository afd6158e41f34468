"""Secrets in a failed call's command and output are masked whichever provider found the call.

One failed call holding every shape of `tests/providers/redaction/shapes.py` is appended to a real
session; the same situation then runs through the Obelisk adapter (over the stand-in) and the
native index. No piece of any secret may reach the retrieved items, the prior calls or the capped
private result, and the repeated command must still read as a repeat of the failure.
"""

import json
import subprocess
from pathlib import Path

import pytest

from fixtures.obelisk_stand_in import StandIn
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from tests.providers.obelisk.conftest import SPOTTER_ROOT, provider_for
from tests.providers.obelisk.test_end_to_end_verdicts import _decide, _enablement
from tests.providers.redaction.shapes import PG_PASSWORD, SHAPES

pytestmark = pytest.mark.reliability

COMMAND = f"PGPASSWORD={PG_PASSWORD} psql -h db.internal -U app -c 'select 1' deploy-canary-7f3e"


def _plant_failed_call(home: Path) -> None:
    session = next(home.rglob("8463c716-*.jsonl"))  # a spotter-fum session
    base = {
        "cwd": f"{SPOTTER_ROOT}/spotter-fum",
        "sessionId": "s",
        "timestamp": "2026-02-10T21:30:00.000Z",
        "isSidechain": False,
    }
    output = "Exit code 2\n" + "\n".join(text for _, text, _ in SHAPES)
    call = {"type": "tool_use", "id": "toolu_secret", "name": "Bash", "input": {"command": COMMAND}}
    result = {"type": "tool_result", "tool_use_id": "toolu_secret", "is_error": True, "content": output}
    lines = [
        dict(
            base,
            type="assistant",
            uuid="5ec7e700-0000-4000-8000-000000000001",
            message={"role": "assistant", "content": [call]},
        ),
        dict(
            base,
            type="user",
            uuid="5ec7e700-0000-4000-8000-000000000002",
            message={"role": "user", "content": [result]},
        ),
    ]
    with session.open("a") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)


def _leaks(text: str) -> list[str]:
    """Labels of the shapes an 8-character piece of whose secret is in `text`."""
    return [label for label, _, secret in SHAPES if any(secret[i : i + 8] in text for i in range(len(secret) - 7))]


@pytest.mark.parametrize("backend", ["obelisk", "native"])
def test_no_secret_reaches_items_or_prior_calls(stand_in: StandIn, tmp_path: Path, encoder, backend: str) -> None:
    _plant_failed_call(stand_in.home)
    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    enablement = _enablement(stand_in.home, SPOTTER_ROOT, "claude")
    if backend == "obelisk":
        provider = provider_for(stand_in, enablement, tmp_path / "work")
    else:
        provider = NativeIndexProvider(tmp_path / "native-index", enablement, home=stand_in.home)
    decision, values = _decide(provider, enablement, COMMAND, [], encoder)
    assert values.retrieval.reason_code == "retrieved"
    calls = values.retrieval.prior_calls
    assert any("deploy-canary-7f3e" in call.command for call in calls) or backend == "native"
    texts = [item.snippet for item in values.retrieval.result.items]
    texts += [call.command + "\n" + call.output_excerpt for call in calls]
    texts.append(values.capped.result.model_dump_json())
    assert any("deploy-canary-7f3e" in text for text in texts), "the planted call was not retrieved"
    assert _leaks("\n".join(texts)) == []
    # Matched through the redacted history either way: the session's later edits may have touched its cause.
    assert decision.comparison.verdict in ("repeats_prior_failure", "repeats_prior_failure_changed_since")
