"""What one Obelisk lookup costs, against the native provider, on the real corpus. Numbers only.

    .venv/bin/python bench/obelisk_adapter_overhead.py [--quick] [--calls N]

Both providers answer the same request over the same HOME (shared/corpus/real laid out as the
Obelisk recordings were made). Printed, per lookup:
- the real Obelisk 0.2.3 `--query` (from the recordings' wall/cpu seconds: the identity wait);
- the stand-in `--query` run directly on the adapter's script (no identity wait);
- `ObeliskProvider.search` over the stand-in: wall, the adapter's own CPU, and the CLI's CPU;
- the adapter's own cost (adapter wall minus the direct run, median of pairs);
- the projected real cost: the recorded `--query` wall plus the adapter's own cost;
- `NativeIndexProvider.search` (warm index): wall and CPU, and its cold first call.
"""

import argparse
import json
import resource
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from contracts.config import Enablement
from contracts.evidence import HistoricalEvidenceRequest, RequestLimits, RequestScope
from fixtures.obelisk_stand_in import install_stand_in
from fixtures.obelisk_stand_in.corpus_home import lay_out_home
from providers.native.provider import NativeIndexProvider
from providers.obelisk import ObeliskProvider
from providers.obelisk.plan import query_plan
from providers.obelisk.template import query_script

RECORDINGS = Path("/work/shared/reference/obelisk-recordings")
ROOT = "/home/USER/projects/spotter-worktrees"


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered) * 1000:9.2f} ms   p95 {p95 * 1000:9.2f} ms"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _recorded_query_costs() -> tuple[list[float], list[float]]:
    """wall and cpu seconds of the recorded `--query` runs that returned (3.00-3.26, 4.04)."""
    walls, cpus = [], []
    for path in sorted(RECORDINGS.glob("*.json")):
        recording = json.loads(path.read_text(encoding="utf-8"))
        if "--query" in recording["argv"] and recording.get("query_script") is not None:
            if recording["wall_seconds"] < 30:  # 3.27 is the 30 s sandbox timeout
                walls.append(recording["wall_seconds"])
                cpus.append(recording["cpu_seconds"])
    return walls, cpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="5 calls")
    arguments = parser.parse_args()
    calls = 5 if arguments.quick else arguments.calls
    directory = Path(tempfile.mkdtemp(prefix="obelisk-bench-"))
    home = lay_out_home(directory / "home")
    stand_in = install_stand_in(directory / "stand-in", home=home)
    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    enablement = Enablement(
        surface="replan-history",
        agent_id="agent-1",
        project_id="proj-1",
        repository_id="repo-1",
        repo_roots=[ROOT],
        sources=["claude"],
        source_roots={"claude": str(home / ".claude" / "projects")},
        provider="obelisk",
        enabled_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    request = HistoricalEvidenceRequest(
        request_id="req-bench",
        situation_id="sit-bench",
        trigger="replan_repetition",
        scope=RequestScope(agent_id="agent-1", project_id="proj-1", repository_id="repo-1"),
        evidence_types=["prior_failure", "decision", "file_history", "tool_outcome", "summary"],
        query_terms=["node assets/build.js 2>&1", "assets/build.js", "build"],
        limits=RequestLimits(
            max_sessions=20, max_items=12, max_snippet_chars=600, max_total_chars=6000
        ),
    )
    obelisk = ObeliskProvider(
        enablement,
        binary=str(stand_in.executable),
        work_dir=directory / "work",
        probe_cache_dir=directory / "cache",
        obelisk_home=home,
    )
    native = NativeIndexProvider(directory / "native-index", enablement, home=home)
    script = directory / "direct.js"
    plan = query_plan(request, enablement=enablement, options={}, home=home)
    script.write_text(query_script(plan.template_values), encoding="utf-8")

    started = time.perf_counter()
    native.search(request)
    native_cold = time.perf_counter() - started
    started = time.perf_counter()
    obelisk.search(request)
    obelisk_first = time.perf_counter() - started

    direct, adapter, adapter_cpu, cli_cpu, native_wall, native_cpu = [], [], [], [], [], []
    answer = None
    for _ in range(calls):
        started = time.perf_counter()
        subprocess.run([str(stand_in.executable), "--query", str(script)], capture_output=True, check=True)
        direct.append(time.perf_counter() - started)
        started, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
        answer = obelisk.search(request)
        adapter.append(time.perf_counter() - started)
        adapter_cpu.append(time.process_time() - cpu)
        cli_cpu.append(_children_cpu() - children)
        started, cpu = time.perf_counter(), time.process_time()
        native.search(request)
        native_wall.append(time.perf_counter() - started)
        native_cpu.append(time.process_time() - cpu)

    recorded_wall, recorded_cpu = _recorded_query_costs()
    own = statistics.median(a - d for a, d in zip(adapter, direct, strict=True))
    assert answer is not None
    print(f"calls: {calls}   items: {len(answer.result.items)}   prior calls: {len(answer.prior_calls)}"
          f"   freshness: {answer.result.freshness}")  # fmt: skip
    print(f"real obelisk --query (recorded, n={len(recorded_wall)})  "
          f"wall {_ms(recorded_wall)}   cpu median {statistics.median(recorded_cpu) * 1000:7.1f} ms")
    print(f"stand-in --query (direct)       {_ms(direct)}")
    print(f"ObeliskProvider.search wall     {_ms(adapter)}")
    print(f"ObeliskProvider.search cpu      {_ms(adapter_cpu)}   (adapter process)")
    print(f"  the CLI's cpu                 {_ms(cli_cpu)}   (stand-in child)")
    print(f"adapter's own cost (pairs)      {own * 1000:9.2f} ms")
    print(f"projected real per-call wall    {(statistics.median(recorded_wall) + own) * 1000:9.2f} ms")
    print(f"NativeIndexProvider.search wall {_ms(native_wall)}")
    print(f"NativeIndexProvider.search cpu  {_ms(native_cpu)}")
    print(f"native cold first call          {native_cold * 1000:9.2f} ms (builds its index)")
    print(f"obelisk first call (probe)      {obelisk_first * 1000:9.2f} ms")


if __name__ == "__main__":
    main()
