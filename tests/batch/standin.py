"""A stand-in index provider and batch inputs that carry a canary in every private place.

The provider answers with snippets and a structured prior call holding the canary, from an index
at a fixed revision, and crashes, with the canary in its message, for any situation whose id
starts with `crash-`. Tests pass `factory()` as their provider factory; a process the tests start
(the CLI harness, a Dask worker) names it with `install()`.
"""

import json
from datetime import UTC, datetime
from typing import Any

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY, situation
from obelisk_session_evidence.compose import use_provider_factory
from obelisk_session_evidence.contracts.config import Enablement, EnablementConfig
from obelisk_session_evidence.contracts.evidence import (
    EvidenceItem,
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
    ScopeApplied,
)
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall, ProviderAnswer
from obelisk_session_evidence.providers.factory import ProviderFactory
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private

CANARY = "SECRETRAWXYZ-batch"
REVISION = "rev-standin-1"


class StandinIndexProvider:
    """Answers every lookup with two canary snippets; crashes for `crash-` situations."""

    provider_version = "0.1.0 standin/1"

    def __init__(self, revision: str | None = REVISION) -> None:
        self.revision = revision

    def index_revision(self) -> str | None:
        """The fixed revision (None: an index whose revision cannot be read up front)."""
        return self.revision

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        if request.situation_id.startswith("crash-"):
            raise RuntimeError(f"provider crashed while reading {CANARY}")
        scope = request.scope
        kind = request.evidence_types[0]
        result = HistoricalEvidenceResult(
            request_id=request.request_id,
            provider_version=self.provider_version,
            index_revision=self.revision,
            scope_applied=ScopeApplied(
                agent_id=scope.agent_id, project_id=scope.project_id, repository_id=scope.repository_id
            ),
            freshness="fresh",
            items=[
                EvidenceItem(
                    session_ref=f"session:{n:016x}",
                    message_ref=f"message:{n:016x}",
                    evidence_type=kind,
                    snippet=f"{CANARY} pytest tests/test_auth.py -x failed with {CANARY}",
                )
                for n in (1, 2)
            ],
            truncated=False,
            omitted_count=0,
        )
        # The structured prior call carries the canary in every private field too.
        call = PriorToolCall(
            session_ref="session:0000000000000001",
            tool_name="Bash",
            command=f"pytest tests/test_auth.py -x  # {CANARY}",
            exit_code=1,
            is_error=True,
            cwd=f"/work/{CANARY}",
            repository_cwd="",
            files=[f"tests/{CANARY}.py"],
            output_excerpt=f"1 failed: {CANARY}",
        )
        return ProviderAnswer(result=result, prior_calls=[call])


def factory(revision: str | None = REVISION) -> ProviderFactory:
    """A provider factory whose every provider is the stand-in."""

    def build(enablement: Enablement, kind: str) -> StandinIndexProvider:
        return StandinIndexProvider(revision)

    return build


def install(revision: str = REVISION) -> None:
    """For a process this test suite starts (the CLI harness, a Dask worker): the stand-in is
    its backend."""
    use_provider_factory(factory(revision))


def enable_fixture_scope(paths: StatePaths, **settings: Any) -> None:
    """Enable the fixture agent, project and repository (native provider and all triggers unless
    `settings` say otherwise)."""
    enablement = Enablement(
        surface="replan-history",
        agent_id=FIXTURE_AGENT,
        project_id=FIXTURE_PROJECT,
        repository_id=FIXTURE_REPOSITORY,
        **{"provider": "native", "enabled_at": datetime(2026, 11, 29, tzinfo=UTC), **settings},
    )
    config = EnablementConfig(enablements=[enablement])
    write_private(paths.config_file, config.model_dump_json().encode())


def canary_situation(situation_id: str, **overrides: Any) -> dict[str, Any]:
    """A valid situation whose free-text fields all carry the canary."""
    return situation(
        situation_id=situation_id,
        commands=[f"pytest {CANARY} -x"],
        files=[f"src/{CANARY}.py"],
        hypothesis=f"the {CANARY} boundary",
        blocker=f"{CANARY} blocks",
        **overrides,
    )


def stalled_items(count: int = 4, *, crash: bool = True, invalid: bool = True) -> list[bytes]:
    """`count` admitted items, a crashing one, an invalid one (the canary as an unknown key) and
    one for an agent that is not enabled."""
    documents = [canary_situation(f"stalled-{n}") for n in range(count)]
    documents.append(
        canary_situation(
            "other-agent",
            scope={"agent_id": "agent-other", "project_id": FIXTURE_PROJECT, "repository_id": FIXTURE_REPOSITORY},
        )
    )
    if crash:
        documents.append(canary_situation("crash-1"))
    items = [json.dumps(document).encode() for document in documents]
    if invalid:
        items.append(json.dumps({**canary_situation("invalid-1"), CANARY: True}).encode())
    return items


def write_jsonl(path: Any, items: list[bytes]) -> None:
    """The items as a JSONL file (LoopX's export shape)."""
    path.write_bytes(b"\n".join(items) + b"\n")
