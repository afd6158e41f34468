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

`measure_decision` then times whole decisions (`run_pipeline` through the adapter) with the
stand-in waiting as long as the real CLI identifies its caller (the recordings' `--query` wall
minus their plain `--search` wall), paired with one `--query` process of the same script and one
`--search --compact` process; and one decision whose CLI hangs, against the provider's deadline.
"""

import argparse
import dataclasses
import json
import resource
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from fixtures.obelisk_stand_in import install_stand_in
from fixtures.obelisk_stand_in.corpus_home import lay_out_home
from fixtures.shared import OBELISK_RECORDINGS
from fixtures.situations import situation
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, EnablementConfig
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest, RequestLimits, RequestScope
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.providers.obelisk import ObeliskProvider
from obelisk_session_evidence.providers.obelisk.plan import query_plan
from obelisk_session_evidence.providers.obelisk.template import query_script
from obelisk_session_evidence.stages.admit import query_terms_for
from obelisk_session_evidence.stages.pipeline import PipelineDependencies, run_pipeline
from obelisk_session_evidence.tokenizer import load_encoder

RECORDINGS = OBELISK_RECORDINGS
ROOT = "/home/USER/projects/spotter-worktrees"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _recorded_search_walls() -> list[float]:
    """wall seconds of the recorded plain `--search` runs (no nonce: no identity wait)."""
    walls = []
    for path in sorted(RECORDINGS.glob("*.json")):
        recording = json.loads(path.read_text(encoding="utf-8"))
        argv = recording["argv"]
        if "--search" in argv and "--nonce" not in argv and recording["exit_code"] == 0:
            walls.append(recording["wall_seconds"])
    return walls


def recorded_identity_wait() -> float:
    """What the real CLI spends identifying its caller: median `--query` minus median `--search`."""
    return statistics.median(_recorded_query_costs()[0]) - statistics.median(_recorded_search_walls())


DEADLINE_S = 10.0
"""The provider's default deadline (`provider.DEFAULT_TIMEOUT_S`)."""
HUNG_DEADLINE_S = 2.0
COMMAND = "node assets/build.js 2>&1 | tail -20"


def measure_decision(calls: int, identity_wait_s: float | None = None) -> dict[str, float | int | str]:
    """Whole decisions through the adapter, each paired with one `--query` and one `--search
    --compact` process; and the overshoot of a decision whose CLI hangs past its deadline."""
    wait = recorded_identity_wait() if identity_wait_s is None else identity_wait_s
    directory = Path(tempfile.mkdtemp(prefix="obelisk-decision-"))
    home = lay_out_home(directory / "home")
    stand_in = install_stand_in(directory / "stand-in", home=home, identity_wait_s=wait)
    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    enablement = _enablement(home)
    document = situation(commands=[COMMAND], files=["assets/build.js"], scope=SCOPE)
    model = load_contract(ReplanSituation, json.dumps(document).encode())
    dependencies = PipelineDependencies(
        policy=AdmissionPolicy(config=EnablementConfig(enablements=[enablement]), load_reason_code="config_loaded"),
        provider=ObeliskProvider(
            enablement,
            binary=str(stand_in.executable),
            work_dir=directory / "work",
            probe_cache_dir=directory / "cache",
            obelisk_home=home / ".obelisk",
            timeout_s=DEADLINE_S,
        ),
        encoder=load_encoder(directory / "tiktoken"),
        thresholds=RouteThresholds(),
        digest_salt="bench",
    )
    run_pipeline(model, dependencies)  # the probe, once per binary
    script = directory / "direct.js"
    plan = query_plan(_request(query_terms_for(model)), enablement=enablement, options={}, home=home)
    script.write_text(query_script(plan.template_values), encoding="utf-8")
    search = [str(stand_in.executable), "--search", "node assets/build.js", "--limit", "3", "--compact"]
    decisions, queries, searches, verdict = [], [], [], ""
    for _ in range(calls):
        started = time.perf_counter()
        verdict = run_pipeline(model, dependencies).decision.comparison.verdict
        decisions.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run([str(stand_in.executable), "--query", str(script)], capture_output=True, check=True)
        queries.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run(search, capture_output=True, check=True)
        searches.append(time.perf_counter() - started)
    stand_in.control(mode="hang")
    hung = ObeliskProvider(
        enablement,
        binary=str(stand_in.executable),
        work_dir=directory / "work",
        probe_cache_dir=directory / "cache",
        obelisk_home=home / ".obelisk",
        timeout_s=HUNG_DEADLINE_S,
    )
    started = time.perf_counter()
    run_pipeline(model, dataclasses.replace(dependencies, provider=hung))
    hung_wall = time.perf_counter() - started
    decision, query = statistics.median(decisions), statistics.median(queries)
    return {
        "decision_calls": calls,
        "decision_verdict": verdict,
        "identity_wait": wait,
        "decision_wall": decision,
        "decision_wall_p95": _p95(decisions),
        "query_process_wall": query,
        "search_process_wall": statistics.median(searches),
        "decision_per_query": decision / query,
        "hung_deadline": HUNG_DEADLINE_S,
        "hung_decision_wall": hung_wall,
        "hung_overshoot": hung_wall - HUNG_DEADLINE_S,
    }


SCOPE = {"agent_id": "agent-1", "project_id": "proj-1", "repository_id": "repo-1"}


def _enablement(home: Path) -> Enablement:
    return Enablement(
        surface="replan-history",
        **SCOPE,
        repo_roots=[ROOT],
        sources=["claude"],
        source_roots={"claude": str(home / ".claude" / "projects")},
        provider="obelisk",
        enabled_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def _request(terms: list[str]) -> HistoricalEvidenceRequest:
    return HistoricalEvidenceRequest(
        request_id="req-bench",
        situation_id="sit-bench",
        trigger="replan_repetition",
        scope=RequestScope(**SCOPE),
        evidence_types=["prior_failure", "decision", "file_history", "tool_outcome", "summary"],
        query_terms=terms,
        limits=RequestLimits(max_sessions=20, max_items=12, max_snippet_chars=600, max_total_chars=6000),
    )


def _recorded_query_costs() -> tuple[list[float], list[float]]:
    """wall and cpu seconds of the recorded `--query` runs that returned (3.00-3.26, 4.04)."""
    walls, cpus = [], []
    for path in sorted(RECORDINGS.glob("*.json")):
        recording = json.loads(path.read_text(encoding="utf-8"))
        returned = "--query" in recording["argv"] and recording.get("query_script") is not None
        if returned and recording["wall_seconds"] < 30:  # 3.27 is the 30 s sandbox timeout
            walls.append(recording["wall_seconds"])
            cpus.append(recording["cpu_seconds"])
    return walls, cpus


def measure(calls: int) -> dict[str, float | int | str]:
    """Every figure of one run, in seconds (medians unless named p95); for `bench.run` too."""
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
        limits=RequestLimits(max_sessions=20, max_items=12, max_snippet_chars=600, max_total_chars=6000),
    )
    obelisk = ObeliskProvider(
        enablement,
        binary=str(stand_in.executable),
        work_dir=directory / "work",
        probe_cache_dir=directory / "cache",
        obelisk_home=home / ".obelisk",
    )
    native = NativeIndexProvider(directory / "native-index", enablement, home=home)
    script = directory / "direct.js"
    plan = query_plan(request, enablement=enablement, options={}, home=home)
    script.write_text(query_script(plan.template_values), encoding="utf-8")

    started = time.perf_counter()
    native.search(request)
    native_cold = time.perf_counter() - started
    started = time.perf_counter()
    first = obelisk.search(request)
    obelisk_first = time.perf_counter() - started

    direct, adapter, adapter_cpu, cli_cpu, native_wall, native_cpu = [], [], [], [], [], []
    for _ in range(calls):
        started = time.perf_counter()
        subprocess.run([str(stand_in.executable), "--query", str(script)], capture_output=True, check=True)
        direct.append(time.perf_counter() - started)
        started, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
        obelisk.search(request)
        adapter.append(time.perf_counter() - started)
        adapter_cpu.append(time.process_time() - cpu)
        cli_cpu.append(_children_cpu() - children)
        started, cpu = time.perf_counter(), time.process_time()
        native.search(request)
        native_wall.append(time.perf_counter() - started)
        native_cpu.append(time.process_time() - cpu)

    recorded_wall, recorded_cpu = _recorded_query_costs()
    own = statistics.median(a - d for a, d in zip(adapter, direct, strict=True))
    return {
        "calls": calls,
        "items": len(first.result.items),
        "prior_calls": len(first.prior_calls),
        "freshness": first.result.freshness,
        "recorded_query_runs": len(recorded_wall),
        "recorded_query_wall": statistics.median(recorded_wall),
        "recorded_query_wall_p95": _p95(recorded_wall),
        "recorded_query_cpu": statistics.median(recorded_cpu),
        "stand_in_query_wall": statistics.median(direct),
        "adapter_wall": statistics.median(adapter),
        "adapter_wall_p95": _p95(adapter),
        "adapter_cpu": statistics.median(adapter_cpu),
        "cli_cpu": statistics.median(cli_cpu),
        "adapter_own_wall": own,
        "projected_real_wall": statistics.median(recorded_wall) + own,
        "native_wall": statistics.median(native_wall),
        "native_wall_p95": _p95(native_wall),
        "native_cpu": statistics.median(native_cpu),
        "native_cold_wall": native_cold,
        "obelisk_first_wall": obelisk_first,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="5 calls")
    arguments = parser.parse_args()
    figures = measure(5 if arguments.quick else arguments.calls)
    print(
        f"calls: {figures['calls']}   items: {figures['items']}   prior calls: "
        f"{figures['prior_calls']}   freshness: {figures['freshness']}"
    )
    rows = [
        (f"real obelisk --query (recorded, n={figures['recorded_query_runs']})", "recorded_query_wall"),
        ("  its cpu (recorded)", "recorded_query_cpu"),
        ("stand-in --query (direct)", "stand_in_query_wall"),
        ("ObeliskProvider.search wall", "adapter_wall"),
        ("ObeliskProvider.search cpu (adapter)", "adapter_cpu"),
        ("  the CLI's cpu (stand-in child)", "cli_cpu"),
        ("adapter's own wall (median of pairs)", "adapter_own_wall"),
        ("projected real per-call wall", "projected_real_wall"),
        ("NativeIndexProvider.search wall", "native_wall"),
        ("NativeIndexProvider.search cpu", "native_cpu"),
        ("native cold first call (builds its index)", "native_cold_wall"),
        ("obelisk first call (with the probe)", "obelisk_first_wall"),
    ]
    for label, key in rows:
        print(f"{label:<44} {float(figures[key]) * 1000:9.2f} ms")
    decision = measure_decision(2 if arguments.quick else 5)
    print(f"identity wait (recorded): {decision['identity_wait']:.2f} s   verdict: {decision['decision_verdict']}")
    for label, key in (
        ("decision through Obelisk", "decision_wall"),
        ("one --query process", "query_process_wall"),
        ("one --search --compact process", "search_process_wall"),
        (f"decision whose CLI hangs ({HUNG_DEADLINE_S:.0f} s deadline)", "hung_decision_wall"),
    ):
        print(f"{label:<44} {float(decision[key]) * 1000:9.2f} ms")
    print(f"decision / one --query: {decision['decision_per_query']:.2f}x")


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


if __name__ == "__main__":
    main()
