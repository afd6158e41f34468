"""The adapters as LoopX itself calls them (loopx 2.1.1; no Node needed)."""

import hashlib
import json
import sys
from pathlib import Path

import pytest

import obelisk_session_evidence.loopx as adapters
from obelisk_session_evidence.loopx.context_provider import SessionEvidenceContextProvider
from obelisk_session_evidence.loopx.decision_context_extension import render_response
from obelisk_session_evidence.loopx.recall import recall
from obelisk_session_evidence.state.paths import StatePaths
from tests.conformance.conftest import LOOPX_VERSION, installed_loopx_version, require
from tests.loopx.helpers import (
    CURRENT_SESSION,
    EARLIER_SESSION_FAILURE,
    FAILED_RUN,
    backend,
    current_turn_failure,
)
from tests.stages.helpers import situation_model

pytestmark = pytest.mark.conformance

OBSERVED_AT = "2026-11-29T10:00:00Z"


@pytest.fixture(scope="module", autouse=True)
def loopx_installed() -> None:
    require(
        installed_loopx_version() == LOOPX_VERSION,
        f"loopx=={LOOPX_VERSION} is not installed (pip install -e '.[conformance]')",
    )


def _provider(encoder) -> SessionEvidenceContextProvider:
    return SessionEvidenceContextProvider(
        situation=situation_model(),
        **backend(lambda request: [current_turn_failure(), EARLIER_SESSION_FAILURE]),
    )


def test_context_provider_retrieve_is_a_loopx_retrieval_with_content_free_public_packet(encoder):
    from loopx.capabilities.context_providers.base import ContextProvider, ContextProviderRetrieval

    provider: ContextProvider = _provider(encoder)
    retrieval = provider.retrieve(
        namespace="replan",
        scope_ref=CURRENT_SESSION,
        query="free text is never searched",
        query_summary="prior failures for this replan",
        max_results=8,
        timeout_seconds=5,
        observed_at=OBSERVED_AT,
    )
    assert isinstance(retrieval, ContextProviderRetrieval)
    assert (retrieval.status, retrieval.search_performed, retrieval.read_performed) == (
        "completed",
        True,
        True,
    )
    # The invoking turn's failure is not history; the earlier session's is. The verdict leads.
    verdict, evidence = retrieval.items
    assert evidence.resource_ref == EARLIER_SESSION_FAILURE.message_ref
    assert verdict.summary.startswith("verdict repeats_prior_failure;")
    assert "invoking turn excluded 1" in verdict.summary
    public = json.dumps(retrieval.public_packet())
    assert "pytest" not in public and "FAILED" not in public and "secret" not in public
    assert retrieval.public_packet()["raw_content_captured"] is False
    transient = retrieval.transient_results(content_trust="untrusted", content_may_instruct=False)
    assert transient[1]["content"] == FAILED_RUN


def test_context_provider_sync_writes_nothing(encoder):
    sync = _provider(encoder).sync(
        namespace="replan", resources=[("a", "b")], timeout_seconds=5, observed_at=OBSERVED_AT, execute=True
    )
    packet = sync.public_packet()
    assert (packet["status"], packet["write_count"], packet["external_writes_performed"]) == (
        "unavailable",
        0,
        False,
    )


def test_loopx_reward_memory_recall_filters_session_evidence_items(encoder):
    """Surprise: agent-turn-recall (through reward memory) keeps only reviewed
    `reward_memory_active_record_v0` items, so session evidence handed in as a provider
    is read back and then filtered, never injected as memory (RFC §3.1 wants exactly that)."""
    from loopx.capabilities.reward_memory import evaluation_fixtures as loopx_fixtures
    from loopx.capabilities.reward_memory.application import execute_reward_memory_recall

    # LoopX's own evaluation corpus and request, re-bound to this provider's scope.
    request = loopx_fixtures._request()
    request["corpus"] = {
        **request["corpus"],
        "provider_scope_ref_digest": hashlib.sha256(b"replan-history").hexdigest()[:16],
    }
    binding = {**loopx_fixtures._binding(), "scope_ref": "replan-history"}
    session = execute_reward_memory_recall(request, provider_binding=binding, provider=_provider(encoder))
    packet = session.public_packet
    assert packet["provider_call_count"] == 1
    assert (packet["status"], packet["empty_cause"]) == ("empty", "all_provider_items_filtered")
    # The verdict item and both historical items: none is a Reward Memory record.
    assert packet["filtered_reason_counts"] == {"record_contract_filtered": 3}
    assert "pytest" not in json.dumps(packet)


def test_extension_doctor_is_not_ready_through_loopx_without_an_enablement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Issue 15 §5: LoopX used to report "ready" with no enablement; its own doctor now fails."""
    from loopx.extensions.manifest import load_extension_manifest
    from loopx.extensions.readiness import extension_doctor

    # LoopX resolves the entrypoint on PATH, as an installed console script.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{Path(sys.executable).parent}")
    monkeypatch.setenv("OBELISK_SESSION_EVIDENCE_HOME", str(tmp_path / "ose-state"))
    manifest = load_extension_manifest(Path(adapters.__file__).with_name("extension.toml"))
    doctor = extension_doctor(manifest, execute=True)
    assert (doctor["status"], doctor["failure_kind"]) == ("provider_unavailable", "probe_nonzero_exit")
    backend(lambda request: [], paths=StatePaths(tmp_path / "ose-state"))  # enabled, but no index yet
    assert extension_doctor(manifest, execute=True)["status"] == "provider_unavailable"


def test_loopx_accepts_a_completed_extension_response(encoder):
    # LoopX's own response validator (module-private in 2.1.1; the function the executable's
    # answer goes through in `DecisionContextExtensionProvider.retrieve`).
    from loopx.capabilities.decision_context.extension_provider import _response_items

    outcome = recall(
        situation_model(),
        invoking_session=CURRENT_SESSION,
        max_results=4,
        **backend(lambda request: [current_turn_failure(), EARLIER_SESSION_FAILURE]),
    )
    items = _response_items(render_response(outcome), requested_limit=4)
    assert [item.resource_ref for item in items[1:]] == [EARLIER_SESSION_FAILURE.message_ref]
    assert [item.summary for item in items] == [item.summary for item in outcome.items]
    assert items[0].resource_ref.startswith("replan-decision:sha256:")
