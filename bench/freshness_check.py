"""What a lookup pays to check its scope's files before it may say `fresh` (issue 26 item 2).

For generated corpora of about 100, 1,000 and 10,000 session files (the bench's cached corpora,
`bench/_scaled.py`), with the index refreshed and nothing changed since, measures in one process:

    check   `changes.pending_changes` over the enablement's roots: one `stat` per stored folder and
            unit, compared with what the last complete refresh stored (`last_scan.py`; what
            every lookup inside the refresh window does before it answers)
    scan    what the check does when it cannot vouch for the roots (and did for every lookup
            before `last_scan.py`): the roots scanned as a refresh scans them, folder listings
            reused while their signature holds, and the scan's digest compared with the last
    lookup  `NativeIndexProvider.search` for the bench's query terms inside the refresh window
            (the check included)

and prints medians in milliseconds, the check's share of the lookup and the check's time ÷ the
scan's, all in one run. Nothing is asserted.

    .venv/bin/python -m bench.freshness_check [--files 100 1000 10000] [--repeats 30]
"""

import argparse
import statistics
import time

from bench._scaled import default_cache_dir, files_scale, generated_corpus
from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.lifecycle.policy import load_config
from obelisk_session_evidence.providers.native.index.changes import pending_changes, same_scan_as_last, scan_roots
from obelisk_session_evidence.providers.native.index.listings import load_listings
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.scope import enablement_roots
from obelisk_session_evidence.providers.native.index.store import connect
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.qualify.session_writers import FAILING_COMMAND

SEED = 17


def _request() -> HistoricalEvidenceRequest:
    return HistoricalEvidenceRequest(
        request_id="bench-freshness",
        situation_id="bench-freshness",
        trigger="replan_repetition",
        scope={"agent_id": FIXTURE_AGENT, "project_id": FIXTURE_PROJECT, "repository_id": FIXTURE_REPOSITORY},
        evidence_types=["prior_failure", "decision", "file_history", "tool_outcome", "summary"],
        query_terms=[FAILING_COMMAND, "tests/test_auth.py"],
        limits={"max_sessions": 20, "max_items": 8, "max_snippet_chars": 600, "max_total_chars": 20000},
    )


def _median_ms(action, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def measure(files: int, repeats: int) -> dict[str, float]:
    corpus = generated_corpus(default_cache_dir(), seed=SEED, scale=files_scale(files), rounds=2)
    config = load_config(corpus.state)
    assert config is not None
    enablement = config.enablements[0]
    provider = NativeIndexProvider(corpus.state.index_dir, enablement, home=corpus.home, refresh_window_s=1e9)
    roots = enablement_roots(enablement, home=corpus.home)
    # Unbudgeted: a cache indexed by an older release has files to read again (new migrations),
    # more than one lookup's refresh budget covers.
    refresh_index(corpus.index_path, roots)
    connection = connect(corpus.index_path)
    try:
        assert pending_changes(connection, roots) == 0
        check = _median_ms(lambda: pending_changes(connection, roots), repeats)
        scan = _median_ms(lambda: _full_scan(connection, roots), repeats)
    finally:
        connection.close()
    lookup = _median_ms(lambda: provider.search(_request()), repeats)
    return {"files": corpus.stats["files"], "check_ms": check, "scan_ms": scan, "lookup_ms": lookup}


def _full_scan(connection, roots) -> None:
    scanned = scan_roots(roots, load_listings(connection, now_ns=time.time_ns()))
    assert same_scan_as_last(connection, scanned) is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeats", type=int, default=30)
    arguments = parser.parse_args()
    print(f"{'files':>8} {'check ms':>9} {'lookup ms':>10} {'share':>6} {'scan ms':>8} {'÷ scan':>7}")
    for files in arguments.files:
        row = measure(files, arguments.repeats)
        share = row["check_ms"] / row["lookup_ms"]
        ratio = row["check_ms"] / row["scan_ms"]
        print(
            f"{row['files']:>8,} {row['check_ms']:>9.2f} {row['lookup_ms']:>10.2f} {share:>6.0%}"
            f" {row['scan_ms']:>8.2f} {ratio:>7.2f}"
        )


if __name__ == "__main__":
    main()
