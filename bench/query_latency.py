"""Lookup latency (p50/p95) of `NativeIndexProvider.search` on indexes of growing size.

Indexes are grown from the real corpus's parsed records (copies re-keyed and spread over four
repositories, so a lookup's scope admits a quarter of the rows), which keeps the real vocabulary
and the real length of texts. Each lookup uses terms shaped like `admit`'s: a command that ran in
the corpus, a file it touched, and the fixture's ids. No refresh runs inside the timed lookups
(the roots count as just refreshed); a lookup is connect, scoped query, redaction and limits.
Wall time and CPU time are both printed: on a shared machine the wall time mostly measures the
other processes (the load average is printed too).

`--decisions N` adds issue 17's series: whole decisions in process (admit to decision, as `decide()`
runs them) on the generated decision corpus of each `--messages` size (cached under `.state/bench/`),
for the bench's stalled situations. It prints CPU p50/p95 and a digest of the verdicts, so two
checkouts run one after the other show whether a change moved any verdict (and `--verdicts` lists
them).

    .venv/bin/python -m bench.query_latency [--rows 100000 --rows 1000000] [--lookups 200]
    .venv/bin/python -m bench.query_latency --rows 0 --decisions 200 --messages 10000 --messages 100000
"""

import argparse
import collections
import hashlib
import os
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench._corpus import SYNTHETIC_ROOT, grow_index, real_outcomes
from obelisk_session_evidence.contracts.config import SOURCE_KINDS, Enablement
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.providers.native.index.store import connect, index_file
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider


def lookup_terms(outcomes, rng: random.Random, count: int) -> list[list[str]]:
    """Terms for `count` lookups: a real command and a real file path, plus fixture ids."""
    commands = [
        c.command_text
        for _, o in outcomes
        for c in o.tool_calls
        if c.command_text and c.name in ("Bash", "bash", "exec_command")
    ]
    files = [p for _, o in outcomes for c in o.tool_calls for p in c.file_paths]
    return [
        [rng.choice(commands)[:256], rng.choice(files)[:256], "surface-auth", "hypothesis-boundary", "probe-test-rerun"]
        for _ in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="index sizes in entries (default 100000)")
    parser.add_argument("--lookups", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None, help="where to build (default: a temp folder)")
    parser.add_argument("--decisions", type=int, default=0, help="stalled situations decided per --messages size")
    parser.add_argument("--messages", type=int, action="append", help="decision corpus sizes (default 100000)")
    parser.add_argument("--verdicts", action="store_true", help="also print each situation's verdict")
    parser.add_argument("--cache", type=Path, default=None, help="decision corpora cache (default .state/bench/)")
    arguments = parser.parse_args()
    if arguments.decisions:
        for messages in sorted(arguments.messages or [100_000]):
            decision_series(messages, arguments.decisions, cache=arguments.cache, show_verdicts=arguments.verdicts)
    sizes = sorted(size for size in (arguments.rows or [100_000]) if size > 0)
    if not sizes:
        return
    outcomes = real_outcomes()
    rng = random.Random(11)
    work = arguments.dir or Path(tempfile.mkdtemp(prefix="ose-bench-query-"))
    index_dir = work / "index"
    connection = connect(index_file(index_dir))
    enablement = Enablement(
        surface="replan-history",
        agent_id="agent-bench",
        project_id="project-bench",
        repository_id="repo-bench",
        repo_roots=["/bench/repo-0"],
        source_roots={s: f"{SYNTHETIC_ROOT}/{s}" for s in SOURCE_KINDS},
        enabled_at=datetime.now(UTC),
    )
    grower = grow_index(connection, outcomes, rows=sizes[-1])
    for size in sizes:
        built = 0
        for step in grower:
            built, seconds = step
            if built >= size:
                break
        messages = connection.execute("SELECT count(*) FROM entries WHERE kind = 'message'").fetchone()[0]
        _mark_refreshed(connection)
        provider = NativeIndexProvider(index_dir, enablement, refresh_window_s=1e9)
        wall, cpu, items = [], [], []
        for terms in lookup_terms(outcomes, rng, arguments.lookups):
            request = _request(terms)
            started, started_cpu = time.perf_counter(), time.process_time()
            result = provider.search(request).result
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
            items.append(len(result.items))
        print(
            f"entries={built} messages={messages} build_s={seconds:.1f} lookups={len(wall)} "
            f"wall_p50_ms={_percentile(wall, 50):.1f} wall_p95_ms={_percentile(wall, 95):.1f} "
            f"cpu_p50_ms={_percentile(cpu, 50):.1f} cpu_p95_ms={_percentile(cpu, 95):.1f} "
            f"mean_items={statistics.mean(items):.1f} load={os.getloadavg()[0]:.1f}",
            flush=True,
        )
    connection.close()


def decision_series(messages: int, count: int, *, cache: Path | None, show_verdicts: bool) -> None:
    """Decide `count` stalled situations in process on the generated corpus of about `messages` messages.

    Keep `cache` outside any git checkout when comparing two trees: the generated repositories'
    `.git` folders hold no commits, so git resolves their identity from an enclosing checkout.
    """
    from bench._scaled import DECISION_ROUNDS, decision_scale, default_cache_dir, generated_corpus
    from bench.batch_throughput import stalled_situations
    from obelisk_session_evidence.compose import decide
    from obelisk_session_evidence.contracts.json_input import load_contract
    from obelisk_session_evidence.contracts.situation import ReplanSituation
    from obelisk_session_evidence.providers.native.index.refresh import refresh_index

    corpus = generated_corpus(
        cache or default_cache_dir(), seed=7, scale=decision_scale(messages), rounds=DECISION_ROUNDS
    )
    refresh_index(corpus.index_path, corpus.roots)  # the decisions start inside the refresh window
    situations = stalled_situations(count)
    warm = load_contract(ReplanSituation, situations[0])
    decide(warm, paths=corpus.state)  # imports, encoder, first connection
    cpu, wall, verdicts = [], [], []
    for raw in situations:
        started, started_cpu = time.perf_counter(), time.process_time()
        situation = load_contract(ReplanSituation, raw)
        decision = decide(situation, paths=corpus.state).decision
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
        verdicts.append((situation.situation_id, decision.comparison.verdict, decision.retrieval.reason_code))
    digest = hashlib.sha256(repr(verdicts).encode()).hexdigest()[:16]
    tally = collections.Counter(verdict for _, verdict, _ in verdicts)
    print(
        f"decisions messages={corpus.stats['messages']} situations={len(cpu)} "
        f"cpu_p50_ms={_percentile(cpu, 50):.1f} cpu_p95_ms={_percentile(cpu, 95):.1f} "
        f"wall_p50_ms={_percentile(wall, 50):.1f} wall_p95_ms={_percentile(wall, 95):.1f} "
        f"verdicts={dict(sorted(tally.items()))} verdict_digest={digest} load={os.getloadavg()[0]:.1f}",
        flush=True,
    )
    if show_verdicts:
        for situation_id, verdict, reason in verdicts:
            print(f"  {situation_id} {verdict} {reason}")


def _percentile(values: list[float], percent: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(percent / 100 * len(ordered)) - 1))]


def _mark_refreshed(connection) -> None:
    now = time.time()
    with connection:
        for source in SOURCE_KINDS:
            connection.execute(
                "INSERT OR REPLACE INTO roots (source, path, state, refreshed_at) VALUES (?, ?, 'indexed', ?)",
                (source, f"{SYNTHETIC_ROOT}/{source}", now),
            )


def _request(terms: list[str]) -> HistoricalEvidenceRequest:
    return HistoricalEvidenceRequest(
        request_id="req-bench",
        situation_id="situation-bench",
        trigger="replan_repetition",
        scope={"agent_id": "agent-bench", "project_id": "project-bench", "repository_id": "repo-bench"},
        evidence_types=["prior_failure", "decision", "file_history", "tool_outcome", "summary"],
        query_terms=terms,
        limits={"max_sessions": 20, "max_items": 12, "max_snippet_chars": 600, "max_total_chars": 6000},
    )


if __name__ == "__main__":
    main()
