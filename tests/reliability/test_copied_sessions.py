"""The attack: a session file copied from agent B's folder into agent A's counts as A's history.

Two agents' Claude folders under `tmp_path`, both indexed (as two enablements on one machine
refresh them). B's session holds a failed `pytest` run whose output carries a canary; a plain copy
of that file (same name, or renamed) lands in A's folder. A's lookup, through the provider and
through the whole pipeline, must neither return B's rows nor call A's route a repeat of B's
failure. The control, the same session only in A's folder, must still be found and repeat.
"""

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY
from obelisk_session_evidence.compose import decide
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.results import session_ref
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.state.paths import state_paths
from tests.providers.native.index.transcripts import ClaudeTranscript
from tests.reliability.attack_stands import CANARY
from tests.reliability.worlds import write_config
from tests.stages.helpers import situation_model

COMMAND = "pytest tests/test_ledger.py -x"
B_SESSION = "7c1e2b0a-5d4f-4e6a-9b8c-0d1e2f3a4b5c"
A_SESSION = "2f9d8c7b-6a5e-4d3c-8b2a-1f0e9d8c7b6a"


def _world(tmp_path: Path, placement: str) -> tuple[Path, Enablement, str]:
    """Index A's and B's folders after placing B's failed run (`copied`, `copied-renamed`, or
    `only-in-a`: the control, where the session is in A's folder alone)."""
    repo = tmp_path / "work" / "ledger"
    (repo / "src").mkdir(parents=True)
    root_a, root_b = tmp_path / "agent-a" / "claude", tmp_path / "agent-b" / "claude"
    ClaudeTranscript(root_a, A_SESSION, str(repo / "src")).bash("make lint", "All checks passed").write()
    theirs = ClaudeTranscript(root_b, B_SESSION, str(repo / "src"))
    theirs.user(f"run the ledger tests {CANARY}").bash(
        COMMAND, f"FAILED test_ledger.py::test_total {CANARY}", exit_code=1
    )
    original = theirs.write()
    target = (
        root_a / original.parent.name / (f"renamed-{original.name}" if placement == "copied-renamed" else original.name)
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    (shutil.move if placement == "only-in-a" else shutil.copy2)(original, target)
    index_dir = tmp_path / "state-index"
    refresh_index(index_file(index_dir), {"claude": [root_a, root_b]})
    enablement = Enablement(
        surface="replan-history",
        agent_id=FIXTURE_AGENT,
        project_id=FIXTURE_PROJECT,
        repository_id=FIXTURE_REPOSITORY,
        repo_roots=[str(repo)],
        sources=["claude"],
        source_roots={"claude": str(root_a)},
        enabled_at=datetime(2026, 11, 1, tzinfo=UTC),
    )
    return index_dir, enablement, session_ref("claude", B_SESSION)


def _request() -> HistoricalEvidenceRequest:
    return HistoricalEvidenceRequest(
        request_id="req-copied",
        situation_id="situation-copied",
        trigger="replan_repetition",
        scope={"agent_id": FIXTURE_AGENT, "project_id": FIXTURE_PROJECT, "repository_id": FIXTURE_REPOSITORY},
        evidence_types=["prior_failure", "tool_outcome", "decision"],
        query_terms=[COMMAND, "ledger", CANARY],
        limits={"max_sessions": 20, "max_items": 20, "max_snippet_chars": 600, "max_total_chars": 20000},
    )


def _decide(index_dir: Path, enablement: Enablement):
    write_config(state_paths().root, enablement)
    return decide(
        situation_model(commands=[COMMAND], files=["tests/test_ledger.py"]),
        paths=state_paths(),
        provider_factory=lambda chosen, kind: NativeIndexProvider(index_dir, chosen),
    )


@pytest.mark.parametrize("placement", ["copied", "copied-renamed"])
def test_a_session_copied_from_another_agents_folder_is_not_this_agents_history(tmp_path, placement):
    index_dir, enablement, theirs = _world(tmp_path, placement)
    answer = NativeIndexProvider(index_dir, enablement).search(_request())
    assert theirs not in {item.session_ref for item in answer.result.items}
    assert theirs not in {call.session_ref for call in answer.prior_calls}
    assert CANARY not in answer.model_dump_json()
    assert answer.result.freshness == "fresh"  # nothing of A's own folder is missing

    run = _decide(index_dir, enablement)
    assert run.decision.retrieval.reason_code == "retrieved"
    assert run.decision.comparison.verdict not in ("repeats_prior_failure", "repeats_prior_attempt")
    assert CANARY not in run.private_result.model_dump_json()
    assert CANARY not in run.decision.model_dump_json()


def test_the_agent_whose_folder_was_copied_from_cannot_tell_either(tmp_path):
    """Fail closed both ways: nothing says which copy is the original, so B loses it too."""
    index_dir, enablement, theirs = _world(tmp_path, "copied")
    b = enablement.model_copy(
        update={"agent_id": "agent-b", "source_roots": {"claude": str(tmp_path / "agent-b" / "claude")}}
    )
    request = _request().model_copy(update={"scope": _request().scope.model_copy(update={"agent_id": "agent-b"})})
    answer = NativeIndexProvider(index_dir, b).search(request)
    assert theirs not in {item.session_ref for item in answer.result.items}


def test_control_the_same_session_in_this_agents_folder_alone_counts(tmp_path):
    index_dir, enablement, theirs = _world(tmp_path, "only-in-a")
    answer = NativeIndexProvider(index_dir, enablement).search(_request())
    assert theirs in {item.session_ref for item in answer.result.items}
    assert theirs in {call.session_ref for call in answer.prior_calls}

    run = _decide(index_dir, enablement)
    assert run.decision.comparison.verdict == "repeats_prior_failure"
