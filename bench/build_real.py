"""Full build throughput of the native index on the real corpus (MB/s and messages/s).

Each repetition builds a new index from nothing with `refresh_index` over the real corpus's
folders (parsing, repository resolution, rows and full-text rows, one transaction per file),
then the parse alone is timed for comparison.

    .venv/bin/python -m bench.build_real [--repeat 3]
"""

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench._corpus import REAL_ROOTS, real_outcomes
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    builds = []
    for _ in range(arguments.repeat):
        with tempfile.TemporaryDirectory(prefix="ose-bench-build-") as work:
            started_cpu = time.process_time()
            report = refresh_index(index_file(Path(work) / "index"), REAL_ROOTS)
            builds.append((report, time.process_time() - started_cpu))
    started = time.perf_counter()
    outcomes = real_outcomes()
    parse_seconds = time.perf_counter() - started
    report = builds[0][0]
    rows = report.messages_written + report.tool_calls_written + report.summaries_written
    wall = statistics.median(r.seconds for r, _ in builds)
    cpu = statistics.median(c for _, c in builds)
    megabytes = report.bytes_read / 1e6
    print(
        f"files={report.files_seen} MB={megabytes:.1f} messages={report.messages_written} "
        f"tool_calls={report.tool_calls_written} summaries={report.summaries_written} "
        f"build_wall_s={wall:.2f} build_cpu_s={cpu:.2f} "
        f"MB_per_s={megabytes / wall:.1f} messages_per_s={report.messages_written / wall:.0f} "
        f"rows_per_s={rows / wall:.0f} parse_only_s={parse_seconds:.2f} units={len(outcomes)} "
        f"load={os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
