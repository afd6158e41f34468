"""The embedded default provider: the native SQLite index, bound to one enablement.

A lookup
1. checks that the request asks for exactly the enablement's scope (else `ScopeViolation`);
2. checks the enablement's session roots with one `stat` pass (`index/changes.py`) when they
   were refreshed within the refresh window, and refreshes them when that pass finds a change or
   the window has passed: an answer is `fresh` only when this lookup saw its scope's files as the
   index holds them. A first build or a large change stops after the refresh budget, says
   `stale`, and is continued by the next lookup or `index refresh`. When another process is
   refreshing, the lookup does not wait: it reads the index as it is and says `stale` if files
   changed since;
3. runs the scoped, bounded query (agent roots and repository binding are SQL predicates; see
   `index/query.py` for what bounds its work);
4. re-checks every returned row and prior call against the scope: one stray row rejects the
   whole result;
5. returns ranked, redacted, bounded items with this scope's freshness and the index revision,
   and beside them the private prior calls of the proposed commands (`index/calls.py`).

Freshness is per scope (`status.scope_freshness`): a failed or damaged file that only holds
sessions of other repositories does not make this enablement's answers `incomplete`.
"""

import contextlib
import copy
import dataclasses
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from obelisk_session_evidence.contracts.base import Freshness
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.errors import ProviderError, ScopeViolation, UnsupportedOption
from obelisk_session_evidence.contracts.evidence import (
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
    ScopeApplied,
)
from obelisk_session_evidence.contracts.json_input import describe_validation_error
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall, ProviderAnswer
from obelisk_session_evidence.providers.base import AsOf
from obelisk_session_evidence.providers.native.index.binding_cache import stored_binding
from obelisk_session_evidence.providers.native.index.calls import PriorCallBuilder
from obelisk_session_evidence.providers.native.index.changes import pending_changes
from obelisk_session_evidence.providers.native.index.excerpts import needles_for
from obelisk_session_evidence.providers.native.index.history_size import Count, HistorySizes
from obelisk_session_evidence.providers.native.index.query import SearchResult, SearchRow, plan_search, search
from obelisk_session_evidence.providers.native.index.recent_failures import recent_failure_commands
from obelisk_session_evidence.providers.native.index.repository import RepositoryBinding
from obelisk_session_evidence.providers.native.index.results import select_items
from obelisk_session_evidence.providers.native.index.revision import UNKNOWN_REVISION, current_revision
from obelisk_session_evidence.providers.native.index.scope import enablement_roots, row_in_scope, scope_filter
from obelisk_session_evidence.providers.native.index.scoped_sql import ScopeFilter
from obelisk_session_evidence.providers.native.index.status import last_refreshed_at, scope_freshness
from obelisk_session_evidence.providers.native.index.store import connect, index_errors, index_file, writer_lock
from obelisk_session_evidence.providers.native.index.timeline import TimedCall, Timeline, timed_calls, timeline
from obelisk_session_evidence.providers.recent_failures import RecentFailures
from obelisk_session_evidence.providers.version import PACKAGE_VERSION

PROVIDER_VERSION: Final = f"{PACKAGE_VERSION} native-index/1"
CANDIDATES_PER_ITEM: Final = 4
MIN_CANDIDATES: Final = 100
"""Rows fetched per lookup: room for duplicates and per-session caps to drop some."""
SECONDS_PER_DAY: Final = 86_400
CALL_FRONT_SHARE: Final = 2
"""The proposed commands' prior calls take at most 1/2 of `max_items` at the front of the result."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Reader:
    """The connection and freshness a replay's as-of views share (`NativeIndexProvider.reading`)."""

    connection: sqlite3.Connection
    freshness: Freshness


class NativeIndexProvider:
    """Answers lookups from the native index for one enablement's agent, project and repository."""

    def __init__(
        self,
        index_dir: Path,
        enablement: Enablement,
        *,
        refresh_window_s: float = 60.0,
        refresh_budget_s: float = 5.0,
        home: Path | None = None,
    ) -> None:
        self.provider_version = PROVIDER_VERSION
        self._index_path = index_file(index_dir)
        self._enablement = enablement
        self._refresh_window_s = refresh_window_s
        self._refresh_budget_s = refresh_budget_s
        self._roots = enablement_roots(enablement, home=home)
        self._binding: RepositoryBinding | None = None
        self._calls: PriorCallBuilder | None = None
        self._as_of: AsOf | None = None
        self._reader: _Reader | None = None

    def as_of(self, cut: AsOf) -> "NativeIndexProvider":
        """This provider answering from history strictly before `cut` (replay): it never refreshes,
        reads freshness as stored, ranks recency from the cut's time, and rejects a row after it."""
        view = copy.copy(self)
        view._as_of = cut
        return view

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """One connection, one freshness reading and one remembering prior-call builder for the
        as-of views made inside: a replay's thousands of lookups then neither reopen the index (and
        its page cache) nor re-read its freshness, nor rebuild the same prior calls, per lookup."""
        with index_errors():
            connection = connect(self._index_path)
        try:
            with index_errors():
                binding = self._repository_binding(connection)
                freshness = scope_freshness(connection, self._roots, binding)
            self._reader = _Reader(connection, freshness)
            self._calls = PriorCallBuilder(binding, remember=True)
            yield
        finally:
            self._reader = self._calls = None
            connection.close()

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """In-scope items for `request`, or a `ProviderError` (never a foreign exception)."""
        _check_bounds(request)
        self._check_scope(request)
        if self._as_of is not None and self._reader is not None:
            with index_errors():
                reader = self._reader
                binding = self._repository_binding(reader.connection)
                return self._answer(reader.connection, request, self._scope(binding), binding, reader.freshness)
        with index_errors():
            connection = connect(self._index_path)
            try:
                binding = self._repository_binding(connection)
                scope = self._scope(binding)
                if self._as_of is None:
                    freshness = self._refresh_if_due(connection, binding)
                else:  # a replay reads the index as its one refresh left it
                    freshness = scope_freshness(connection, self._roots, binding)
                return self._answer(connection, request, scope, binding, freshness)
            finally:
                connection.close()

    def refresh(self) -> Freshness:
        """Refresh the enablement's roots now, whole (waiting for another writer), and return
        this scope's freshness: `replay`'s one refresh before it reads the index as of each call."""
        from obelisk_session_evidence.providers.native.index.refresh import refresh_index

        with index_errors():
            report = refresh_index(self._index_path, self._roots, wait_s=None)
            if report.freshness == "stale":
                return "stale"
            connection = connect(self._index_path)
            try:
                return scope_freshness(connection, self._roots, self._repository_binding(connection))
            finally:
                connection.close()

    def timeline(self) -> Timeline:
        """The scope's dated tool calls, oldest first (keys only; `timed_calls` reads them)."""
        with index_errors():
            connection = connect(self._index_path)
            try:
                return timeline(connection, scope_filter(self._roots, self._repository_binding(connection)))
            finally:
                connection.close()

    def timed_calls(self, keys: Timeline) -> Iterator[TimedCall]:
        """Each call of `keys` as a prior call with the cut just before it, in order."""
        with index_errors():
            connection = connect(self._index_path)
            try:
                binding = self._repository_binding(connection)
                if self._calls is None:
                    self._calls = PriorCallBuilder(binding)
                yield from timed_calls(connection, keys.call_keys, self._calls)
            finally:
                connection.close()

    def recent_failures(self) -> RecentFailures:
        """The scope's newest unresolved failed commands (`index/recent_failures.py`), after the
        same refresh a lookup does; a `ProviderError` when the index cannot be read."""
        with index_errors():
            connection = connect(self._index_path)
            try:
                binding = self._repository_binding(connection)
                freshness = self._refresh_if_due(connection, binding)
                commands = recent_failure_commands(connection, scope_filter(self._roots, binding))
                return RecentFailures(tuple(commands), freshness)
            finally:
                connection.close()

    def history_sizes(self, count: Count) -> HistorySizes:
        """The size (by `count`) of the scope's history before any as-of cut (RFC §10's cost ceiling)."""
        with index_errors():
            connection = connect(self._index_path)
            try:
                return HistorySizes(connection, scope_filter(self._roots, self._repository_binding(connection)), count)
            finally:
                connection.close()

    def index_revision(self) -> str | None:
        """The stored revision, read without refreshing; None without an index or on a fault."""
        if not self._index_path.exists():
            return None
        try:
            with index_errors():
                connection = connect(self._index_path)
                try:
                    revision = current_revision(connection).text
                finally:
                    connection.close()
        except ProviderError:
            return None
        return None if revision == UNKNOWN_REVISION else revision

    def _scope(self, binding: RepositoryBinding) -> ScopeFilter:
        """The enablement's scope in SQL, with the replay's cut and the history window, if any: the
        window ends at the cut's time in a replay, else now."""
        days = self._enablement.history_window_days
        end = self._as_of.epoch if self._as_of is not None else time.time()
        window_start = end - days * SECONDS_PER_DAY if days is not None else None
        return dataclasses.replace(scope_filter(self._roots, binding), as_of=self._as_of, window_start=window_start)

    def _check_scope(self, request: HistoricalEvidenceRequest) -> None:
        scope = request.scope
        asked = (scope.agent_id, scope.project_id, scope.repository_id)
        if asked != self._enablement.scope_key:
            raise ScopeViolation("request scope differs from the enablement")

    def _repository_binding(self, connection: sqlite3.Connection) -> RepositoryBinding:
        """Once per provider, from the index while the roots' git files are unchanged (no `git` run)."""
        if self._binding is None:
            self._binding = stored_binding(connection, self._enablement.repo_roots)
        return self._binding

    def _refresh_if_due(self, connection: sqlite3.Connection, binding: RepositoryBinding) -> Freshness:
        """This scope's freshness, from evidence: inside the refresh window one `stat` pass over the
        scope's roots must find them as the last refresh left them, else they are refreshed now."""
        last = last_refreshed_at(connection, self._roots)
        recent = last is not None and time.time() - last <= self._refresh_window_s
        if recent and not pending_changes(connection, self._roots):
            return scope_freshness(connection, self._roots, binding)
        # Loaded only when files changed or the window passed: an unchanged scope never pays for
        # the parsers and workers.
        from obelisk_session_evidence.providers.native.index.refresh import refresh_locked

        with writer_lock(self._index_path, wait_s=0) as acquired:
            if acquired:
                report = refresh_locked(connection, self._roots, budget_s=self._refresh_budget_s)
                # The report's freshness covers every file it read; this scope's leaves out the
                # problems of files that hold other repositories' sessions only.
                return (
                    report.freshness
                    if report.freshness == "stale"
                    else scope_freshness(connection, self._roots, binding)
                )
        # Another process is refreshing: read what is there, and say whether it is behind.
        if last is None:
            return "unknown"
        stored = scope_freshness(connection, self._roots, binding)
        return "stale" if stored == "fresh" and (recent or pending_changes(connection, self._roots)) else stored

    def _answer(
        self,
        connection: sqlite3.Connection,
        request: HistoricalEvidenceRequest,
        scope: ScopeFilter,
        binding: RepositoryBinding,
        freshness: Freshness,
    ) -> ProviderAnswer:
        limits = request.limits
        found = search(
            connection,
            plan_search(connection, request.query_terms),
            scope,
            evidence_types=list(dict.fromkeys(request.evidence_types)),
            limit=max(MIN_CANDIDATES, CANDIDATES_PER_ITEM * limits.max_items),
            front=max(1, limits.max_items // CALL_FRONT_SHARE),
            now=time.time() if self._as_of is None else self._as_of.epoch,
        )
        returned = (*found.rows, *found.calls, *found.changes)
        if any(not row_in_scope(row, scope, binding) for row in returned):
            raise ScopeViolation("a returned row lies outside the enablement's scope")
        if self._as_of is not None and not all(_before(row, self._as_of) for row in returned):
            raise ScopeViolation("a returned row lies after the as-of cut")
        start = scope.window_start
        if start is not None and not all(row.observed_epoch is None or row.observed_epoch >= start for row in returned):
            raise ScopeViolation("a returned row lies before the history window")
        selection = select_items(
            found.rows,
            limits,
            needles_for(request.query_terms),
            unfetched=max(0, found.matched - len(found.rows)),
            bounded=found.bounded,
        )
        result = HistoricalEvidenceResult(
            request_id=request.request_id,
            provider_version=self.provider_version,
            index_revision=current_revision(connection).text,
            scope_applied=ScopeApplied(
                agent_id=request.scope.agent_id,
                project_id=request.scope.project_id,
                repository_id=request.scope.repository_id,
            ),
            freshness=freshness,
            items=list(selection.items),
            truncated=selection.truncated,
            omitted_count=selection.omitted_count,
        )
        return ProviderAnswer(result=result, prior_calls=self._prior_calls(connection, binding, found))

    def _prior_calls(
        self, connection: sqlite3.Connection, binding: RepositoryBinding, found: SearchResult
    ) -> list[PriorToolCall]:
        """The call lanes' calls first, then the changes after them, then the tool calls among the ranked rows."""
        if self._calls is None:
            self._calls = PriorCallBuilder(binding)
        return self._calls.build(connection, [*found.calls, *found.changes, *found.rows])


def _check_bounds(request: HistoricalEvidenceRequest) -> None:
    """Refuse a request past the contract's bounds (one built with `model_construct` skips them):
    a 1 MB term of distinct words would otherwise cost one probe query per word."""
    problem = None
    try:
        HistoricalEvidenceRequest.model_validate(request.model_dump())
    except ValidationError as error:
        problem = describe_validation_error(error)
    if problem is not None:  # raised outside the handler: no foreign exception is chained
        raise UnsupportedOption(f"request fails validation at {problem}")


def _before(row: SearchRow, cut: AsOf) -> bool:
    """The Python twin of `scoped_sql.as_of_sql`."""
    if row.session_row == cut.session_key:
        return row.entry_id < cut.call_key
    return not cut.own_session_only and row.observed_epoch is not None and row.observed_epoch < cut.epoch
