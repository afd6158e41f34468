"""`ObeliskProvider`: the optional adapter over an independently installed Obelisk CLI.

One lookup, in order (all under one deadline of `timeout_s`):

    find_binary     the executable, or ProviderUnavailable           (no process yet)
    query_plan      check the request and options against the allowlist and the enablement
    probe_cli       Node, --version, variant; remembered per installed version
    query_script    the fixed template with every value as a JSON literal
    run_cli         --query in its own process group, stdout capped, stderr counted
    template_answer exit status and framing, then the strict answer model
    verify_scope    every row; one outside the scope rejects the answer
    select_items    evidence types, opaque refs, limits, truncation

Every failure is a `ProviderError` subclass whose message is a code or a count; `retrieve` turns
it into the typed empty result. Obelisk is AGPL-3.0: this module only runs its CLI.
"""

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from contracts.config import Enablement
from contracts.errors import UnsupportedOption
from contracts.evidence import HistoricalEvidenceRequest, HistoricalEvidenceResult, ScopeApplied
from contracts.prior_calls import ProviderAnswer
from providers.version import PACKAGE_VERSION
from providers.obelisk.answer import template_answer
from providers.obelisk.discovery import find_binary, probe_cli, remember_sandbox
from providers.obelisk.freshness import index_freshness, index_revision
from providers.obelisk.items import select_items
from providers.obelisk.plan import query_plan
from providers.obelisk.process import Deadline, private_script, run_cli
from providers.obelisk.scope import verify_scope
from providers.obelisk.template import TEMPLATE_VERSION, query_script

DEFAULT_TIMEOUT_S: Final = 10.0
DEFAULT_MAX_OUTPUT_BYTES: Final = 4 * 1024 * 1024
MAX_TIMEOUT_S: Final = 300.0


def provider_version_for(cli_version: str) -> str:
    """`<package> obelisk-cli/<version> template/<n>`, e.g. `0.1.0 obelisk-cli/0.2.3 template/1`."""
    return f"{PACKAGE_VERSION} obelisk-cli/{cli_version} template/{TEMPLATE_VERSION}"


class ObeliskProvider:
    """Answers one scoped, bounded lookup through `obelisk --query` with the fixed template."""

    def __init__(
        self,
        enablement: Enablement,
        *,
        binary: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        options: Mapping[str, object] | None = None,
        probe_cache_dir: Path | None = None,
    ) -> None:
        """Configure the adapter; nothing is run or probed until `search`.

        :param binary: the Obelisk executable; else `enablement.obelisk_bin`, else PATH.
        :param options: provider options (`after`, `before`, `max_index_age_s`); anything else
            is refused with `UnsupportedOption` at lookup time, before any process starts.
        :param probe_cache_dir: a private directory for the per-version probe record.
        """
        self.provider_version = provider_version_for("unprobed")
        self._enablement = enablement
        self._binary = binary
        self._timeout_s = timeout_s
        self._max_output_bytes = max_output_bytes
        self._options = dict(options or {})
        self._probe_cache_dir = probe_cache_dir

    def index_revision(self) -> str | None:
        """Unknown before a lookup: Obelisk reports its markers only with a query, and every
        query may refresh its index first."""
        return None

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """Return in-scope items for `request`; raise a `ProviderError` subclass when it cannot."""
        if not 0 < self._timeout_s <= MAX_TIMEOUT_S or self._max_output_bytes < 1024:
            raise UnsupportedOption("timeout_s or max_output_bytes outside the supported range")
        binary = find_binary(self._binary, self._enablement.obelisk_bin)
        plan = query_plan(request, enablement=self._enablement, options=self._options)
        deadline = Deadline(self._timeout_s)
        probe = probe_cli(binary, deadline=deadline, cache_dir=self._probe_cache_dir)
        self.provider_version = provider_version_for(probe.version)
        script = query_script(
            terms=plan.terms,
            sources=plan.sources,
            roots=plan.roots,
            after=plan.after_iso,
            before=plan.before_iso,
            limits=plan.template_limits,
        )
        with private_script(script) as path:
            finished = run_cli(
                [binary.path, "--query", str(path)],
                deadline=deadline,
                max_output_bytes=self._max_output_bytes,
                cwd=str(path.parent),
            )
        answer = template_answer(
            finished, term_count=len(plan.terms), row_cap=plan.template_limits.rows
        )
        remember_sandbox(
            binary,
            probe,
            helpers=answer.helpers.model_dump(),
            sandbox_node=answer.node,
            cache_dir=self._probe_cache_dir,
        )
        verify_scope(answer.rows, plan)
        selection = select_items(answer, plan)
        scope = request.scope
        result = HistoricalEvidenceResult(
            request_id=request.request_id,
            provider_version=self.provider_version,
            index_revision=index_revision(answer.markers),
            scope_applied=ScopeApplied(
                agent_id=scope.agent_id,
                project_id=scope.project_id,
                repository_id=scope.repository_id,
            ),
            freshness=index_freshness(
                answer.markers,
                answer.counts,
                now_ms=time.time() * 1000,
                max_age_s=plan.max_index_age_s,
            ),
            items=list(selection.items),
            truncated=selection.truncated,
            omitted_count=selection.omitted_count,
        )
        return ProviderAnswer(result=result)
