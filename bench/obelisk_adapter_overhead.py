"""Per-call overhead of the Obelisk adapter over the stand-in CLI it drives. Prints numbers only.

    .venv/bin/python bench/obelisk_adapter_overhead.py [--calls N]

Measures, on the same data and request:
- `stand-in --query`: the stand-in run directly on a pre-written script (what any adapter pays);
- `provider.search`: the full adapter call with a remembered probe (plan, template, private file,
  process, capped read, parse, scope check, items);
- overhead: the difference of the two medians, and the median of per-call differences (each
  adapter call runs right after a direct one, so load drifts cancel);
- adapter CPU without a process: everything but the run, on the captured stdout;
- cold first call: the same, plus the probe (`--version` and the usage probe).
"""

import argparse
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from contracts.config import Enablement
from contracts.evidence import HistoricalEvidenceRequest, RequestLimits, RequestScope
from fixtures.obelisk_stand_in import install_stand_in, stand_in_data
from providers.obelisk import ObeliskProvider
from providers.obelisk.answer import template_answer
from providers.obelisk.discovery import clear_probe_cache
from providers.obelisk.items import select_items
from providers.obelisk.plan import query_plan
from providers.obelisk.process import CliAnswer
from providers.obelisk.scope import verify_scope
from providers.obelisk.template import query_script

REPO = "/work/bench-repo"


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered) * 1000:8.2f} ms   p95 {p95 * 1000:8.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    calls = parser.parse_args().calls
    directory = Path(tempfile.mkdtemp(prefix="obelisk-bench-"))
    stand_in = install_stand_in(directory, data=stand_in_data(REPO))
    enablement = Enablement(
        surface="replan-history",
        agent_id="agent-1",
        project_id="proj-1",
        repository_id="repo-1",
        repo_roots=[REPO],
        sources=["claude", "codex", "dsh"],
        provider="obelisk",
        enabled_at=datetime(2026, 8, 1, tzinfo=UTC),
    )
    request = HistoricalEvidenceRequest(
        request_id="req-bench",
        situation_id="sit-bench",
        trigger="replan_repetition",
        scope=RequestScope(agent_id="agent-1", project_id="proj-1", repository_id="repo-1"),
        evidence_types=["prior_failure", "decision", "file_history", "tool_outcome", "summary"],
        query_terms=["pytest -x tests/unit", "retry", "backoff"],
        limits=RequestLimits(
            max_sessions=20, max_items=12, max_snippet_chars=600, max_total_chars=6000
        ),
    )
    plan = query_plan(request, enablement=enablement, options={})
    script = query_script(
        terms=plan.terms,
        sources=plan.sources,
        roots=plan.roots,
        after=None,
        before=None,
        limits=plan.template_limits,
    )
    script_path = directory / "query.js"
    script_path.write_text(script, encoding="utf-8")

    clear_probe_cache()
    provider = ObeliskProvider(enablement, binary=str(stand_in.executable))
    started = time.perf_counter()
    provider.search(request)
    cold = time.perf_counter() - started

    direct, adapter = [], []
    stdout = b""
    for _ in range(calls):
        started = time.perf_counter()
        stdout = subprocess.run(
            [str(stand_in.executable), "--query", str(script_path)], capture_output=True, check=True
        ).stdout
        direct.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = provider.search(request).result
        adapter.append(time.perf_counter() - started)

    cpu = []
    finished = CliAnswer(exit_code=0, stdout=stdout, stderr_bytes=0)
    for _ in range(calls * 10):
        started = time.perf_counter()
        checked = query_plan(request, enablement=enablement, options={})
        query_script(
            terms=checked.terms,
            sources=checked.sources,
            roots=checked.roots,
            after=None,
            before=None,
            limits=checked.template_limits,
        )
        answer = template_answer(
            finished, term_count=len(checked.terms), row_cap=checked.template_limits.rows
        )
        verify_scope(answer.rows, checked)
        select_items(answer, checked)
        cpu.append(time.perf_counter() - started)

    overhead = statistics.median(adapter) - statistics.median(direct)
    paired = statistics.median(a - d for a, d in zip(adapter, direct, strict=True))
    print(f"calls: {calls}   items per answer: {len(result.items)}   stdout bytes: {len(stdout)}")
    print(f"stand-in --query (direct)   {_ms(direct)}")
    print(f"provider.search (warm)      {_ms(adapter)}")
    print(f"overhead (median diff)      {overhead * 1000:8.2f} ms")
    print(f"overhead (median of pairs)  {paired * 1000:8.2f} ms")
    print(f"adapter CPU, no process     {_ms(cpu)}")
    print(f"cold first call (probe)     {cold * 1000:8.2f} ms")


if __name__ == "__main__":
    main()
