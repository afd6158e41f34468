"""`ObeliskProvider`: the optional adapter over an independently installed Obelisk CLI.

One lookup, in order (all under one deadline of `timeout_s`), and exactly one `--query`:

    find_binary     the executable, or ProviderUnavailable           (no process yet)
    query_plan      check the request and options against the allowlist and the enablement
    probe_cli       --version and variant, remembered per binary (path, inode, size, mtime)
    no index yet    an immediate empty `incomplete` answer (see below), no process
    query_script    the fixed template with every value as a JSON literal
    run_cli         --query in its own session, stdout capped, everything it started killed
    template_answer exit status and framing, then the strict answer model
    verify_scope    every row; one outside the scope (an orphan included) rejects the answer
    freshness       Obelisk's index_state rows against the session files on disk, and whether a
                    file shrank since the last full build (`freshness.ShrinkMemory`)
    select_items    evidence items and the private structured prior tool calls

Where: the operator's Obelisk index is `<obelisk home>/obelisk.sqlite`, the home recorded by
`enable --provider obelisk --obelisk-home` (else Obelisk's own default, `environment.py`). The
child process gets only the documented minimal environment (`environment.child_environment`).

Cost (recordings, 2 shared cores): every `--query` spends about 4.2 s identifying the calling
session before it runs, so a lookup costs about 4.3 s wall for 0.1-0.2 s of CPU.

A first lookup on an empty Obelisk index: Obelisk's `--query` would first build the whole index
(a full read of every session file, tens of seconds on a large corpus), inside the decision's
budget. The adapter never starts it: without `<obelisk home>/obelisk.sqlite` it answers at once
with no items and freshness `incomplete` (so nothing is read as "no history"), and `status` names
the command that builds it (`obelisk --build`). Only an operator builds or deletes that index.

Every failure is a `ProviderError` subclass whose message is a code or a count; `retrieve` turns
it into the typed empty result. Obelisk is AGPL-3.0: this module only runs its CLI.
"""

import os
import threading
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.base import Freshness
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.digests import canonical_digest
from obelisk_session_evidence.contracts.errors import ProviderFailed, UnsupportedOption
from obelisk_session_evidence.contracts.evidence import (
    EvidenceItem,
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
    ScopeApplied,
)
from obelisk_session_evidence.contracts.prior_calls import ProviderAnswer
from obelisk_session_evidence.providers.obelisk.answer import TemplateAnswer, template_answer
from obelisk_session_evidence.providers.obelisk.discovery import find_binary, probe_cli
from obelisk_session_evidence.providers.obelisk.environment import (
    child_environment,
    default_obelisk_home,
    index_path,
    sources_home,
)
from obelisk_session_evidence.providers.obelisk.freshness import (
    UNKNOWN_REVISION,
    FileState,
    SessionRoot,
    ShrinkMemory,
    index_freshness,
    index_revision,
    load_memory,
    save_memory,
    session_files,
)
from obelisk_session_evidence.providers.obelisk.items import select_items
from obelisk_session_evidence.providers.obelisk.plan import QueryPlan, query_plan
from obelisk_session_evidence.providers.obelisk.process import Deadline, private_script, run_cli
from obelisk_session_evidence.providers.obelisk.scope import verify_scope
from obelisk_session_evidence.providers.obelisk.template import (
    CHANGE_LANE,
    FOLLOW_LANE,
    TEMPLATE_VERSION,
    query_script,
)
from obelisk_session_evidence.providers.version import PACKAGE_VERSION

DEFAULT_TIMEOUT_S: Final = 10.0
DEFAULT_BUILD_TIMEOUT_S: Final = 600.0
DEFAULT_MAX_OUTPUT_BYTES: Final = 4 * 1024 * 1024
MAX_TIMEOUT_S: Final = 300.0
MEMORY_FILE: Final = "obelisk-shrinks-{key}.json"
_MEMORY_LOCK: Final = threading.Lock()


def provider_version_for(cli_version: str) -> str:
    """`<package> obelisk-cli/<version> template/<n>`, e.g. `0.1.0 obelisk-cli/0.2.3 template/3`."""
    return f"{PACKAGE_VERSION} obelisk-cli/{cli_version} template/{TEMPLATE_VERSION}"


class ObeliskProvider:
    """Answers one scoped, bounded lookup through one `obelisk --query` with the fixed template."""

    def __init__(
        self,
        enablement: Enablement,
        *,
        work_dir: Path,
        binary: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        options: Mapping[str, object] | None = None,
        probe_cache_dir: Path | None = None,
        obelisk_home: Path | None = None,
    ) -> None:
        """Configure the adapter; nothing is run or probed until `search`.

        :param work_dir: the caller's private folder (the state dir's); query files live in a
            fresh 0700 folder under it for the length of one run.
        :param binary: the Obelisk executable; else `enablement.obelisk_bin`, else PATH.
        :param options: provider options; any is refused with `UnsupportedOption` at lookup time.
        :param probe_cache_dir: a private folder for the per-binary probe record.
        :param obelisk_home: the folder of Obelisk's index (`obelisk.sqlite`); else the
            enablement's `obelisk_home`, else Obelisk's own default (`$OBELISK_HOME`, `~/.obelisk`).
            Obelisk runs with HOME = its parent when it is a `.obelisk` folder (`environment.py`).
        """
        self.provider_version = provider_version_for("unprobed")
        self._enablement = enablement
        # Absolute now: a relative state folder would be resolved against the CLI's own cwd.
        self._work_dir = Path(os.path.abspath(work_dir))
        self._binary = binary
        self._timeout_s = timeout_s
        self._max_output_bytes = max_output_bytes
        self._options = dict(options or {})
        self._probe_cache_dir = Path(os.path.abspath(probe_cache_dir)) if probe_cache_dir is not None else None
        configured = obelisk_home or (Path(enablement.obelisk_home) if enablement.obelisk_home else None)
        self._obelisk_home = Path(os.path.abspath(configured or default_obelisk_home()))
        self._home = sources_home(self._obelisk_home)
        self._env = child_environment(self._obelisk_home)
        self._memories: dict[str, ShrinkMemory] = {}

    @property
    def obelisk_home(self) -> Path:
        """The folder of the Obelisk index this adapter reads."""
        return self._obelisk_home

    def index_revision(self) -> str | None:
        """Unknown before a lookup: Obelisk reports its markers only with a query, and every
        query may refresh its index first."""
        return None

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """Return in-scope items for `request`; raise a `ProviderError` subclass when it cannot."""
        if not 0 < self._timeout_s <= MAX_TIMEOUT_S or self._max_output_bytes < 1024:
            raise UnsupportedOption("timeout_s or max_output_bytes outside the supported range")
        binary = find_binary(self._binary, self._enablement.obelisk_bin)
        plan = query_plan(request, enablement=self._enablement, options=self._options, home=self._home)
        deadline = Deadline(self._timeout_s)
        probe = probe_cli(binary, deadline=deadline, cache_dir=self._probe_cache_dir, env=self._env)
        self.provider_version = provider_version_for(probe.version)
        if not self.index_present():
            return ProviderAnswer(result=self._result(request, [], "incomplete", UNKNOWN_REVISION))
        limits = plan.template_values.limits
        # The session files are listed while Obelisk spends its ~4 s identifying the caller, so
        # the listing adds nothing to the lookup; one not done by the deadline is `unknown`.
        listing = SessionListing(plan.session_roots)
        with private_script(query_script(plan.template_values), self._work_dir) as path:
            finished = run_cli(
                [binary.path, "--query", str(path)],
                deadline=deadline,
                max_output_bytes=self._max_output_bytes,
                cwd=str(path.parent),
                env=self._env,
            )
        answer = template_answer(
            finished,
            term_count=len(plan.search_terms),
            lane_count=len(plan.lanes),
            call_cap=limits.call_cap(len(plan.lanes)),
        )
        verify_scope(answer.calls, answer.hits, plan)
        freshness = index_freshness(
            answer,
            listing.files(timeout_s=deadline.remaining()),
            state_cap=limits.state_rows,
            aliases=plan.state_roots,
            shrunk=self._shrunk_since_full_build(answer, plan),
        )
        selection = select_items(answer.calls, answer.hits, plan, calls_capped=_lanes_full(answer, plan))
        result = self._result(request, list(selection.items), freshness, index_revision(answer.state))
        result = result.model_copy(update={"truncated": selection.truncated, "omitted_count": selection.omitted_count})
        return ProviderAnswer(result=result, prior_calls=list(selection.prior_calls))

    def index_present(self) -> bool:
        """Obelisk's index file exists in its home folder (checked, never created)."""
        return index_path(self._obelisk_home).is_file()

    def _shrunk_since_full_build(self, answer: TemplateAnswer, plan: QueryPlan) -> bool:
        """Whether a file of these roots shrank or was replaced since Obelisk's last full build,
        remembered per index and roots (in the private cache folder when there is one)."""
        key = canonical_digest([str(index_path(self._obelisk_home)), list(plan.state_roots)])[-24:]
        path = self._probe_cache_dir / MEMORY_FILE.format(key=key) if self._probe_cache_dir else None
        with _MEMORY_LOCK:
            memory = load_memory(path, self._memories, key)
            shrunk = memory.observe(answer.state)
            save_memory(path, memory)
        return shrunk

    def build_index(self, *, timeout_s: float = DEFAULT_BUILD_TIMEOUT_S) -> None:
        """`obelisk --build` under its own budget (an operator step, never inside a decision)."""
        binary = find_binary(self._binary, self._enablement.obelisk_bin)
        finished = run_cli(
            [binary.path, "--build"], deadline=Deadline(timeout_s), max_output_bytes=64 * 1024, env=self._env
        )
        if finished.exit_code != 0:
            raise ProviderFailed(f"build exit_status_{min(max(finished.exit_code, 0), 255)}")

    def _result(
        self,
        request: HistoricalEvidenceRequest,
        items: list[EvidenceItem],
        freshness: Freshness,
        revision: str,
    ) -> HistoricalEvidenceResult:
        scope = request.scope
        return HistoricalEvidenceResult(
            request_id=request.request_id,
            provider_version=self.provider_version,
            index_revision=revision,
            scope_applied=ScopeApplied(
                agent_id=scope.agent_id,
                project_id=scope.project_id,
                repository_id=scope.repository_id,
            ),
            freshness=freshness,
            items=items,
            truncated=False,
            omitted_count=0,
        )


class SessionListing:
    """`freshness.session_files` in a daemon thread, started at once."""

    def __init__(self, roots: tuple[SessionRoot, ...]) -> None:
        self._files: list[FileState] | None = None
        self._thread = threading.Thread(target=self._list, args=(roots,), name="obelisk-session-listing", daemon=True)
        self._thread.start()

    def _list(self, roots: tuple[SessionRoot, ...]) -> None:
        self._files = session_files(roots)

    def files(self, *, timeout_s: float) -> list[FileState] | None:
        """The listing, or None when it did not finish within `timeout_s` (or hit the file cap)."""
        self._thread.join(timeout=timeout_s)
        return None if self._thread.is_alive() else self._files


def _lanes_full(answer: TemplateAnswer, plan: QueryPlan) -> bool:
    """True when a lane or the change scan came back full: a bound may have cut it."""
    limits = plan.template_values.limits
    per_lane = Counter(call.lane for call in answer.calls)
    changes = max(per_lane.pop(CHANGE_LANE, 0), per_lane.pop(FOLLOW_LANE, 0))
    return changes >= limits.changes or any(count >= limits.per_lane for count in per_lane.values())
