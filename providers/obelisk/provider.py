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
    freshness       Obelisk's index_state rows against the session files on disk
    select_items    evidence items and the private structured prior tool calls

Cost (recordings, 2 shared cores): every `--query` spends about 4.2 s identifying the calling
session before it runs, so a lookup costs about 4.3 s wall for 0.1-0.2 s of CPU.

A first lookup on an empty Obelisk index: Obelisk's `--query` would first build the whole index
(a full read of every session file, tens of seconds on a large corpus), inside the decision's
budget. The adapter does not start it: when neither `<obelisk home>/.obelisk/obelisk.sqlite` nor
`$OBELISK_HOME/obelisk.sqlite` exists it answers at once with no items and freshness `incomplete`
(so nothing is read as "no history"), and `build_index()` runs `--build` with its own, longer budget
for an operator step.

Every failure is a `ProviderError` subclass whose message is a code or a count; `retrieve` turns
it into the typed empty result. Obelisk is AGPL-3.0: this module only runs its CLI.
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.base import Freshness
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.errors import ProviderFailed, UnsupportedOption
from obelisk_session_evidence.contracts.evidence import (
    EvidenceItem,
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
    ScopeApplied,
)
from obelisk_session_evidence.contracts.prior_calls import ProviderAnswer
from obelisk_session_evidence.providers.obelisk.answer import template_answer
from obelisk_session_evidence.providers.obelisk.discovery import find_binary, probe_cli
from obelisk_session_evidence.providers.obelisk.freshness import (
    UNKNOWN_REVISION,
    index_freshness,
    index_revision,
    session_files,
)
from obelisk_session_evidence.providers.obelisk.items import select_items
from obelisk_session_evidence.providers.obelisk.plan import query_plan
from obelisk_session_evidence.providers.obelisk.process import Deadline, private_script, run_cli
from obelisk_session_evidence.providers.obelisk.scope import verify_scope
from obelisk_session_evidence.providers.obelisk.template import TEMPLATE_VERSION, query_script
from obelisk_session_evidence.providers.version import PACKAGE_VERSION

DEFAULT_TIMEOUT_S: Final = 10.0
DEFAULT_BUILD_TIMEOUT_S: Final = 600.0
DEFAULT_MAX_OUTPUT_BYTES: Final = 4 * 1024 * 1024
MAX_TIMEOUT_S: Final = 300.0
INDEX_FILE: Final = Path(".obelisk") / "obelisk.sqlite"


def provider_version_for(cli_version: str) -> str:
    """`<package> obelisk-cli/<version> template/<n>`, e.g. `0.1.0 obelisk-cli/0.2.3 template/2`."""
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
        :param obelisk_home: the HOME Obelisk runs with (its index is `.obelisk/obelisk.sqlite`
            there, its sources `.claude`, `.codex`, ...); the user's home by default.
        """
        self.provider_version = provider_version_for("unprobed")
        self._enablement = enablement
        self._work_dir = work_dir
        self._binary = binary
        self._timeout_s = timeout_s
        self._max_output_bytes = max_output_bytes
        self._options = dict(options or {})
        self._probe_cache_dir = probe_cache_dir
        self._home = obelisk_home or Path.home()

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
        probe = probe_cli(binary, deadline=deadline, cache_dir=self._probe_cache_dir)
        self.provider_version = provider_version_for(probe.version)
        if not self._index_present():
            return ProviderAnswer(result=self._result(request, [], "incomplete", UNKNOWN_REVISION))
        values = plan.template_values
        with private_script(query_script(values), self._work_dir) as path:
            finished = run_cli(
                [binary.path, "--query", str(path)],
                deadline=deadline,
                max_output_bytes=self._max_output_bytes,
                cwd=str(path.parent),
            )
        answer = template_answer(finished, term_count=len(plan.search_terms), call_cap=values.limits.calls)
        verify_scope(answer.calls, answer.hits, plan)
        freshness = index_freshness(answer, session_files(plan.session_roots), state_cap=values.limits.state_rows)
        selection = select_items(answer.calls, answer.hits, plan, calls_capped=len(answer.calls) >= values.limits.calls)
        result = self._result(request, list(selection.items), freshness, index_revision(answer.state))
        result = result.model_copy(update={"truncated": selection.truncated, "omitted_count": selection.omitted_count})
        return ProviderAnswer(result=result, prior_calls=list(selection.prior_calls))

    def _index_present(self) -> bool:
        """Obelisk's index exists: `$OBELISK_HOME/obelisk.sqlite` (newer builds) or
        `<home>/.obelisk/obelisk.sqlite` (builds that ignore `OBELISK_HOME` follow HOME)."""
        candidates = [self._home / INDEX_FILE]
        if os.environ.get("OBELISK_HOME"):
            candidates.append(Path(os.environ["OBELISK_HOME"]) / INDEX_FILE.name)
        return any(path.is_file() for path in candidates)

    def build_index(self, *, timeout_s: float = DEFAULT_BUILD_TIMEOUT_S) -> None:
        """`obelisk --build` under its own budget (an operator step, never inside a decision)."""
        binary = find_binary(self._binary, self._enablement.obelisk_bin)
        finished = run_cli([binary.path, "--build"], deadline=Deadline(timeout_s), max_output_bytes=64 * 1024)
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
