"""Decisions per second for a batch of stalled items over the fixture index, direct and under Prefect.

Modes (each on the same items, each into its own output folder, so nothing is skipped):
  direct      the batch library in this process (`run_batch_directly`): load, decide, write
  pipeline    the bare pipeline over preloaded situations (no file I/O): the floor
  sqlite      the flow `reprocess-stalled` with the thread runner on a standing SQLite server
  postgresql  the same on a standing PostgreSQL server (needs --pg-url)
  dask        the flow with a local Dask cluster (2 workers) on the PostgreSQL server if given,
              else on the SQLite one

Servers are started through `flows.server` (what `ui` runs) and each flow mode
runs in a fresh process after a 20-item warm-up, so a mode's number excludes `import prefect`,
the encoder load and Dask's cluster start only where stated. Run:

    .venv/bin/python -m bench.batch_throughput [--items 1000] [--concurrency 4]
        [--pg-url postgresql+asyncpg://prefect@127.0.0.1:55432/prefect] [--modes ...]
"""

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fixtures.situations import situation
from obelisk_session_evidence.contracts.config import SOURCE_KINDS, Enablement, EnablementConfig
from obelisk_session_evidence.qualify.session_writers import FAILING_COMMAND, write_native_histories
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private

ROOT = Path(__file__).resolve().parents[1]
AGENT, PROJECT, REPOSITORY = "agent-fixture", "project-fixture", "repo-fixture"
COMMANDS = [
    FAILING_COMMAND,
    "pytest tests/test_session.py -k expiry",
    "ruff check src/",
    "make test",
    "pytest tests/test_auth_expiry.py",
    "python -m mypy src/auth.py",
]
FILES = ["src/auth.py", "tests/test_auth.py", "tests/test_auth_expiry.py", "src/session.py", "README.md"]
HYPOTHESES = ["expired tokens are accepted", "the clock skew window is too wide", None, None]
PROBES = ["probe-test-rerun", "probe-route-map", "probe-bisect", "probe-log-scan"]


def stalled_situations(count: int, seed: int = 5) -> list[bytes]:
    """`count` varied stalled items for the fixture scope (about 1 in 10 asks history explicitly)."""
    rng = random.Random(seed)
    items = []
    for n in range(count):
        hypothesis = rng.choice(HYPOTHESES)
        document = situation(
            situation_id=f"stalled-{n:05d}",
            commands=rng.sample(COMMANDS, rng.randint(1, 2)),
            files=rng.sample(FILES, rng.randint(1, 2)),
            hypothesis=hypothesis,
            repeated=rng.random() < 0.85,
            operator_requested=rng.random() < 0.1,
            proposed_ids={"probe_kind": rng.choice(PROBES), "evidence_ids": [f"evidence-{n}"]},
        )
        items.append(json.dumps(document).encode())
    return items


def prepare_state(work: Path) -> StatePaths:
    """Fixture histories, an enablement reading them with the native provider, a warm index."""
    from obelisk_session_evidence.batch.manifest import spool_batch
    from obelisk_session_evidence.batch.run import run_batch_directly
    from obelisk_session_evidence.providers.native.parsers.discovery import default_roots

    manifest = write_native_histories(work / "histories", rounds_per_session=2)
    roots = default_roots(manifest.home)
    paths = StatePaths(work / "state")
    config = EnablementConfig(
        enablements=[
            Enablement(
                surface="replan-history",
                agent_id=AGENT,
                project_id=PROJECT,
                repository_id=REPOSITORY,
                repo_roots=[str(manifest.repo_root), str(manifest.worktree_root)],
                source_roots={source: str(roots[source]) for source in SOURCE_KINDS},
                enabled_at=datetime.now(UTC),
            )
        ]
    )
    write_private(paths.config_file, config.model_dump_json().encode())
    warm = spool_batch(paths, stalled_situations(5, seed=99), out_dir=work / "out-warm")
    run_batch_directly(paths, warm)  # builds the index (first lookup refreshes it)
    return paths


def run_direct(paths: StatePaths, items: list[bytes], out: Path) -> dict[str, Any]:
    from obelisk_session_evidence.batch.manifest import spool_batch
    from obelisk_session_evidence.batch.run import run_batch_directly

    manifest_ref = spool_batch(paths, items, out_dir=out)
    cpu = own_cpu_seconds()
    started = time.perf_counter()
    summary = run_batch_directly(paths, manifest_ref)
    wall = time.perf_counter() - started
    return {"wall_s": wall, "cpu_s": own_cpu_seconds() - cpu, "summary": json.loads(summary.model_dump_json())}


def run_pipeline_only(paths: StatePaths, items: list[bytes]) -> dict[str, Any]:
    from obelisk_session_evidence.compose import backend_folders, decide
    from obelisk_session_evidence.contracts.json_input import load_contract
    from obelisk_session_evidence.contracts.situation import ReplanSituation
    from obelisk_session_evidence.providers.factory import default_provider_factory

    situations = [load_contract(ReplanSituation, raw) for raw in items]
    build, built = default_provider_factory(backend_folders(paths)), {}

    def once_per_scope(enablement, kind):
        key = (enablement.scope_key, kind)
        if key not in built:
            built[key] = build(enablement, kind)
        return built[key]

    cpu = own_cpu_seconds()
    started = time.perf_counter()
    for situation_model in situations:
        decide(situation_model, paths=paths, provider_factory=once_per_scope)
    return {"wall_s": time.perf_counter() - started, "cpu_s": own_cpu_seconds() - cpu}


def own_cpu_seconds() -> float:
    """CPU time of this process and its finished children (Dask workers, once the cluster closes)."""
    mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def server_cpu_seconds(server_pid: int) -> float:
    """CPU time of the Prefect server process and of every PostgreSQL process (its backends)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)
            name = fields[0].split("(", 1)[1]
            values = fields[1].split()
        except (OSError, IndexError):
            continue
        if int(stat.parent.name) == server_pid or name.startswith("postgres"):
            total += (int(values[11]) + int(values[12])) / os.sysconf("SC_CLK_TCK")
    return total


def child(arguments: argparse.Namespace) -> None:
    """One flow mode in a fresh process: warm up, then time the batch flow."""
    from obelisk_session_evidence.batch.manifest import spool_batch
    from obelisk_session_evidence.flows.hardening import apply_prefect_environment
    from obelisk_session_evidence.state.paths import state_paths

    paths = state_paths()
    apply_prefect_environment(paths)
    os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "CRITICAL")
    from obelisk_session_evidence.flows.reprocess_stalled import run_reprocess_stalled_flow

    options = {"paths": paths, "task_runner": arguments.runner, "concurrency": arguments.concurrency}
    work = Path(arguments.work)
    warm = spool_batch(paths, stalled_situations(20, seed=98), out_dir=work / f"out-warm-{arguments.label}")
    started = time.perf_counter()
    run_reprocess_stalled_flow(warm, **options)
    warm_wall = time.perf_counter() - started
    items = stalled_situations(arguments.items)
    manifest_ref = spool_batch(paths, items, out_dir=work / f"out-{arguments.label}")
    cpu = own_cpu_seconds()
    started = time.perf_counter()
    summary = run_reprocess_stalled_flow(manifest_ref, **options)
    wall = time.perf_counter() - started
    result = {"wall_s": wall, "cpu_s": own_cpu_seconds() - cpu, "warm_wall_s": warm_wall}
    print(json.dumps({**result, "summary": json.loads(summary.model_dump_json())}))


def run_flow_mode(label: str, runner: str, api_url: str, paths: StatePaths, arguments) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_API_URL=api_url, OBELISK_SESSION_EVIDENCE_HOME=str(paths.root), PYTHONPATH=str(ROOT))
    command = [
        sys.executable,
        "-m",
        "bench.batch_throughput",
        "--child",
        "--runner",
        runner,
        "--label",
        label,
        "--items",
        str(arguments.items),
        "--concurrency",
        str(arguments.concurrency),
        "--work",
        str(arguments.work),
    ]
    answer = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=7200)
    if answer.returncode != 0:
        raise SystemExit(f"{label} failed:\n{answer.stderr[-3000:]}")
    return json.loads(answer.stdout.strip().splitlines()[-1])


def measured_flow_mode(label: str, runner: str, server, paths: StatePaths, arguments) -> dict[str, Any]:
    """`run_flow_mode`, plus the server's CPU over the child's whole run (warm-up included)."""
    before = server_cpu_seconds(server.process.pid)
    result = run_flow_mode(label, runner, server.address.api_url, paths, arguments)
    return {**result, "server_cpu_s": server_cpu_seconds(server.process.pid) - before}


def start_server(work: Path, label: str, database_url: str | None):
    from obelisk_session_evidence.flows.server import free_port, start_prefect_server

    environ = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    if database_url:
        environ["PREFECT_API_DATABASE_CONNECTION_URL"] = database_url
    return start_prefect_server(StatePaths(work / f"server-{label}"), port=free_port(), environ=environ)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--modes", default="pipeline,direct,sqlite,postgresql,dask")
    parser.add_argument("--pg-url", default=os.environ.get("BENCH_PG_URL"))
    parser.add_argument("--work", default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--runner", default="thread", help=argparse.SUPPRESS)
    parser.add_argument("--label", default="", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        child(arguments)
        return
    work = Path(arguments.work or tempfile.mkdtemp(prefix="ose-bench-batch-"))
    arguments.work = str(work)
    modes = arguments.modes.split(",")
    paths = prepare_state(work)
    items = stalled_situations(arguments.items)
    results: dict[str, dict[str, Any]] = {}
    if "pipeline" in modes:
        results["pipeline"] = run_pipeline_only(paths, items)
    if "direct" in modes:
        results["direct"] = run_direct(paths, items, work / "out-direct")
    servers = {}
    try:
        if {"sqlite", "dask"} & set(modes):
            servers["sqlite"] = start_server(work, "sqlite", None)
            print(f"sqlite server ready in {servers['sqlite'].ready_seconds} s", flush=True)
        if arguments.pg_url and {"postgresql", "dask"} & set(modes):
            servers["postgresql"] = start_server(work, "postgresql", arguments.pg_url)
            print(f"postgresql server ready in {servers['postgresql'].ready_seconds} s", flush=True)
        for mode in ("sqlite", "postgresql"):
            if mode in modes and mode in servers:
                results[mode] = measured_flow_mode(mode, "thread", servers[mode], paths, arguments)
        if "dask" in modes:
            backend = "postgresql" if "postgresql" in servers else "sqlite"
            results[f"dask ({backend})"] = measured_flow_mode("dask", "dask", servers[backend], paths, arguments)
    finally:
        from obelisk_session_evidence.flows.server import stop_prefect_server

        for server in servers.values():
            stop_prefect_server(server.process)
    report(results, arguments.items)


def report(results: dict[str, dict[str, Any]], items: int) -> None:
    base = results.get("direct", {}).get("wall_s")
    print(f"\n{items} stalled items, fixture index\n")
    cpu_base = results.get("direct", {}).get("cpu_s")
    print(
        f"{'mode':<22}{'wall s':>9}{'items/s':>10}{'ms/item':>9}{'overhead ms/item':>18}{'x direct':>10}"
        f"{'client cpu ms/item':>20}{'server cpu ms/item':>20}{'cpu x direct':>14}"
    )
    for mode, result in results.items():
        wall = result["wall_s"]
        overhead = f"{(wall - base) / items * 1000:.1f}" if base and mode not in ("direct", "pipeline") else "-"
        ratio = f"{wall / base:.2f}" if base else "-"
        client_cpu = result.get("cpu_s", 0.0)
        server_cpu = result.get("server_cpu_s", 0.0)
        cpu_ratio = f"{(client_cpu + server_cpu) / cpu_base:.2f}" if cpu_base else "-"
        print(
            f"{mode:<22}{wall:>9.2f}{items / wall:>10.1f}{wall / items * 1000:>9.2f}{overhead:>18}{ratio:>10}"
            f"{client_cpu / items * 1000:>20.1f}{server_cpu / items * 1000:>20.1f}{cpu_ratio:>14}"
        )
    for mode, result in results.items():
        summary = result.get("summary")
        if summary:
            print(
                f"{mode}: decided {summary['decided']} failed {summary['failed']} verdicts {summary['by_verdict']}"
                f" p50 {summary['latency']['p50_ms']} ms p95 {summary['latency']['p95_ms']} ms"
                + (f" warm-up {result['warm_wall_s']:.1f} s" if "warm_wall_s" in result else "")
            )


if __name__ == "__main__":
    main()
