"""The `native` backend: the cases' histories on disk, answered by `NativeIndexProvider`.

Fresh cases share one home and one index: every case's repository is its own folder, so the
index's repository scope is what keeps one case's history out of another's. The index also
holds another agent's sessions (Pi, refreshed under that agent's roots) that the qualification
agent's lookups must never return. Each non-fresh case has a home and index of its own:

- `stale`: the index was refreshed, then the missing sessions were written; the lookup runs
  while another writer holds the index lock, so it reads the index as it is and reports `stale`;
- `incomplete`: the missing sessions were never written, and one session unit under the root
  cannot be read, so the refresh records a failure and the index reports `incomplete`.

Arm 3 reads every record of the agent's own indexed sessions with the native parsers, with no
full-text query and no limit, and keeps the index's freshness: the cost ceiling.
"""

import shutil
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.base import EvidenceType
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, EnablementConfig
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.contracts.evidence import EvidenceItem, HistoricalEvidenceRequest, RequestLimits
from obelisk_session_evidence.contracts.prior_calls import ProviderAnswer
from obelisk_session_evidence.contracts.snippets import outcome_line, tool_snippet
from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.base import EvidenceProvider
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.results import message_ref, session_ref
from obelisk_session_evidence.providers.native.index.rows import display_command
from obelisk_session_evidence.providers.native.index.store import index_file, writer_lock
from obelisk_session_evidence.providers.native.parsers import parse_session_file
from obelisk_session_evidence.providers.native.parsers.discovery import default_roots
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.qualify.synthetic import AGENT_ID, PROJECT_ID, REPOSITORY_ID, QualificationCase
from obelisk_session_evidence.qualify.synthetic.native import (
    OTHER_AGENT_SOURCE,
    SELF_SOURCES,
    CaseLayout,
    WrittenSession,
    write_case_sessions,
)

FULL_HISTORY_LIMITS: Final = RequestLimits(
    max_sessions=100_000, max_items=100_000, max_snippet_chars=100_000, max_total_chars=100_000_000
)
"""Arm 3's "very large budget": no limit the histories could reach."""
NEVER_REFRESH_S: Final = 1e12
MARKER: Final = ".obelisk-qualify-workdir"


@dataclass
class NativeHistories:
    """Where every case's sessions and index live, and the providers that read them."""

    workdir: Path
    layouts: dict[str, CaseLayout]
    homes: dict[str, Path]
    indexes: dict[str, Path]

    @classmethod
    def write(cls, workdir: Path, cases: tuple[QualificationCase, ...]) -> "NativeHistories":
        """Write every case's sessions and build the indexes as each case's freshness needs."""
        claim_workdir(workdir)
        histories = cls(workdir, {}, {}, {})
        shared_home, shared_index = workdir / "fresh" / "home", workdir / "fresh" / "index"
        for case in cases:
            if case.freshness == "fresh":
                histories._add(
                    case, shared_home, shared_index, write_case_sessions(shared_home, workdir / "work", case)
                )
        refresh_index(index_file(shared_index), _all_roots(shared_home), wait_s=None)
        for case in cases:
            if case.freshness != "fresh":
                histories._write_unfresh(case)
        return histories

    def _add(self, case: QualificationCase, home: Path, index: Path, layout: CaseLayout) -> None:
        self.layouts[case.case_id], self.homes[case.case_id], self.indexes[case.case_id] = layout, home, index

    def _write_unfresh(self, case: QualificationCase) -> None:
        base = self.workdir / "unfresh" / case.case_id
        home, index = base / "home", base / "index"
        layout = write_case_sessions(home, base / "work", case, indexed=True)
        if case.freshness == "incomplete":
            broken = home / ".claude" / "projects" / "unreadable" / f"{case.case_id}.jsonl"
            broken.mkdir(parents=True, exist_ok=True)
        refresh_index(index_file(index), _all_roots(home), wait_s=None)
        if case.freshness == "stale":
            pending = write_case_sessions(home, base / "work", case, indexed=False)
            layout = replace(layout, sessions=layout.sessions + pending.sessions)
        self._add(case, home, index, layout)

    def providers(self, case: QualificationCase) -> tuple[EvidenceProvider, EvidenceProvider, AdmissionPolicy]:
        """Arm 2's provider, arm 3's provider and the admission policy for `case`."""
        layout, home, index = self.layouts[case.case_id], self.homes[case.case_id], self.indexes[case.case_id]
        enablement = Enablement(
            surface="replan-history",
            agent_id=AGENT_ID,
            project_id=PROJECT_ID,
            repository_id=REPOSITORY_ID,
            repo_roots=[str(layout.repo_root), str(layout.worktree_parent)],
            sources=list(SELF_SOURCES),
            enabled_at=datetime(2026, 11, 1, tzinfo=UTC),
        )
        stale = case.freshness == "stale"
        native = NativeIndexProvider(index, enablement, home=home, refresh_window_s=0.0 if stale else NEVER_REFRESH_S)
        admitted: EvidenceProvider = _BusyIndex(native, index) if stale else native
        if case.provider_fault == "scope_leak":
            admitted = _LeakingScope(admitted)
        policy = AdmissionPolicy(config=EnablementConfig(enablements=[enablement]), load_reason_code="config_loaded")
        own = tuple(s for s in layout.sessions if s.owner == "self" and s.source in SELF_SOURCES and s.indexed)
        return admitted, _FullHistory(admitted, own), policy


def claim_workdir(
    workdir: Path, *, marker_name: str = MARKER, holds: str = "synthetic qualification histories"
) -> None:
    """Start from an empty work folder: left-over sessions would make a stale case fresh.

    Only a folder qualify created (it holds the marker file) is ever emptied.
    """
    marker = workdir / marker_name
    if workdir.exists() and any(workdir.iterdir()):
        if not marker.is_file():
            raise InvalidInput(f"the workdir for {holds} is not empty and was not created by qualify")
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{holds}; safe to delete\n", encoding="utf-8")


def _all_roots(home: Path) -> dict[SourceKind, list[Path]]:
    """The agent's roots and the other agent's, so the index holds rows the scope must exclude."""
    roots = default_roots(home)
    return {source: [roots[source]] for source in (*SELF_SOURCES, OTHER_AGENT_SOURCE)}


class _BusyIndex:
    """Another process holds the index's writer lock while this provider answers."""

    def __init__(self, provider: EvidenceProvider, index_dir: Path) -> None:
        self.provider_version = provider.provider_version
        self._provider, self._index_path = provider, index_file(index_dir)

    def index_revision(self) -> str | None:
        """The wrapped provider's."""
        return self._provider.index_revision()

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """Answer with the lock taken by someone else."""
        with writer_lock(self._index_path, wait_s=None):
            return self._provider.search(request)


class _LeakingScope:
    """A broken backend that reports another repository's scope: `retrieve` must reject it whole."""

    def __init__(self, provider: EvidenceProvider) -> None:
        self.provider_version = provider.provider_version
        self._provider = provider

    def index_revision(self) -> str | None:
        """The wrapped provider's."""
        return self._provider.index_revision()

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """The real answer with a foreign `scope_applied`."""
        answer = self._provider.search(request)
        leaked = answer.result.scope_applied.model_copy(update={"repository_id": "repo-qualify-beta"})
        return answer.model_copy(update={"result": answer.result.model_copy(update={"scope_applied": leaked})})


class _FullHistory:
    """Arm 3, the cost ceiling: every record of the agent's own indexed sessions, uncapped.

    The sessions are parsed in full with the native parsers (no full-text query narrows them);
    the index lookup still runs, for its freshness and revision and so a scope fault shows.
    """

    def __init__(self, provider: EvidenceProvider, sessions: tuple[WrittenSession, ...]) -> None:
        self.provider_version = provider.provider_version
        self._provider, self._sessions = provider, sessions

    def index_revision(self) -> str | None:
        """The wrapped provider's."""
        return self._provider.index_revision()

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """The index's answer with its items replaced by the whole in-scope history, newest first."""
        answer = self._provider.search(request.model_copy(update={"limits": FULL_HISTORY_LIMITS})).result
        wanted = set(request.evidence_types)
        items = [item for session in self._sessions for item in _session_items(session) if item.evidence_type in wanted]
        items.sort(key=lambda item: (item.observed_at or _EPOCH_ZERO, item.message_ref or ""), reverse=True)
        return ProviderAnswer(result=answer.model_copy(update={"items": items, "truncated": False, "omitted_count": 0}))


_EPOCH_ZERO: Final = datetime(1970, 1, 1, tzinfo=UTC)


def _session_items(session: WrittenSession) -> list[EvidenceItem]:
    """Every evidence item of one session file, as the index would write it uncut."""
    outcome = parse_session_file(session.path, session.source)
    commit = next((s.git_commit for s in outcome.sessions if s.git_commit), None)
    items = []
    for call in outcome.tool_calls:
        line = outcome_line(exit_code=call.exit_code, is_error=call.is_error)
        items.append(
            _item(
                session,
                "call",
                call.call_id,
                call.evidence_type,
                call.timestamp,
                commit,
                tool_snippet(display_command(call), line, call.output_excerpt or ""),
            )
        )
    for message in outcome.messages:
        if message.evidence_type is not None:
            items.append(
                _item(
                    session,
                    "message",
                    message.record_uid,
                    message.evidence_type,
                    message.timestamp,
                    commit,
                    message.text,
                )
            )
    for summary in outcome.summaries:
        items.append(_item(session, "summary", summary.text[:64], "summary", summary.timestamp, commit, summary.text))
    return items


def _item(
    session: WrittenSession,
    kind: str,
    uid: str,
    evidence_type: EvidenceType,
    timestamp: str | None,
    commit: str | None,
    snippet: str,
) -> EvidenceItem:
    moment = datetime.fromisoformat(timestamp) if timestamp else None
    return EvidenceItem(
        session_ref=session_ref(session.source, str(session.path)),
        message_ref=message_ref(session.source, kind, uid),
        evidence_type=evidence_type,
        observed_at=moment if moment is None or moment.tzinfo else None,
        revision_ref=commit[:80] if commit else None,
        snippet=snippet,
    )
