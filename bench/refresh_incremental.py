"""Refresh cost when little or nothing changed: the no-change refresh, and an append as the corpus grows.

- `nochange`: generated histories of about `--files` session files, indexed once; then refreshes
  with nothing changed (stat every file, read none; target <= 0.3 s at 10,000 files).
- `append`: the corpus grows 1x -> 10x, once in bytes per file (more rounds per session, same
  file count) and once in file count; after each full build one Claude session gets one more
  round appended, and that refresh is timed. Growth in bytes must leave it flat (only the new
  bytes are read); growth in files adds only the stat of each file.

    .venv/bin/python -m bench.refresh_incremental nochange [--files 10000]
    .venv/bin/python -m bench.refresh_incremental append [--base-files 1000]
"""

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.parsers import default_roots
from obelisk_session_evidence.qualify.session_writers import SOURCES, write_native_histories

SESSIONS_PER_SOURCE = 3
FILES_PER_SCALE = len(SOURCES) * (SESSIONS_PER_SOURCE + 1)
"""`write_native_histories` writes (sessions_per_source + 1 bait) sessions per agent per scale step."""


def _histories(work: Path, *, files: int, rounds: int):
    scale = max(1, round(files / FILES_PER_SCALE))
    started = time.perf_counter()
    manifest = write_native_histories(
        work / "histories", sessions_per_source=SESSIONS_PER_SOURCE, scale=scale, rounds_per_session=rounds
    )
    roots = {source: [path] for source, path in default_roots(manifest.home).items()}
    return manifest, roots, time.perf_counter() - started


def nochange(files: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="ose-bench-refresh-") as work:
        manifest, roots, generated_s = _histories(Path(work), files=files, rounds=1)
        path = index_file(Path(work) / "index")
        build = refresh_index(path, roots)
        timings, cpu = [], []
        for _ in range(repeat):
            started_cpu = time.process_time()
            report = refresh_index(path, roots)
            cpu.append(time.process_time() - started_cpu)
            assert report.files_unchanged == report.files_seen and not report.content_changed
            timings.append(report.seconds)
        print(
            f"nochange files={build.files_seen} messages={build.messages_written} generate_s={generated_s:.1f} "
            f"build_s={build.seconds:.1f} nochange_median_s={statistics.median(timings):.3f} "
            f"nochange_min_s={min(timings):.3f} nochange_max_s={max(timings):.3f} "
            f"nochange_cpu_median_s={statistics.median(cpu):.3f} load={os.getloadavg()[0]:.1f}"
        )


def append(base_files: int, repeat: int) -> None:
    for growth in ("bytes", "files"):
        for factor in (1, 2, 5, 10):
            files = base_files * (factor if growth == "files" else 1)
            rounds = factor if growth == "bytes" else 1
            with tempfile.TemporaryDirectory(prefix="ose-bench-append-") as work:
                manifest, roots, _ = _histories(Path(work), files=files, rounds=rounds)
                path = index_file(Path(work) / "index")
                build = refresh_index(path, roots)
                target = next(s.path for s in manifest.sessions if s.source == "claude" and not s.is_bait)
                timings, cpu, read = [], [], []
                for round_number in range(repeat):
                    _append_round(target, round_number)
                    started_cpu = time.process_time()
                    report = refresh_index(path, roots)
                    cpu.append(time.process_time() - started_cpu)
                    assert report.files_appended == 1 and report.files_reread == 0
                    timings.append(report.seconds)
                    read.append(report.bytes_read)
                print(
                    f"append growth={growth} x{factor} files={build.files_seen} MB={build.bytes_read / 1e6:.1f} "
                    f"messages={build.messages_written} append_median_s={statistics.median(timings):.3f} "
                    f"append_cpu_median_s={statistics.median(cpu):.3f} bytes_read={statistics.median(read):.0f} "
                    f"load={os.getloadavg()[0]:.1f}",
                    flush=True,
                )


def _append_round(path: Path, number: int) -> None:
    """One more user message and failing Bash call, as Claude Code appends them."""
    session = json.loads(path.read_text().splitlines()[0]).get("sessionId", "bench")
    stamp = f"2026-04-01T10:{number % 60:02d}:00.000Z"
    lines = [
        {
            "type": "user",
            "uuid": f"bench-u-{number}",
            "sessionId": session,
            "cwd": "/bench",
            "timestamp": stamp,
            "message": {"role": "user", "content": f"Run the auth tests again (bench round {number})."},
        },
        {
            "type": "assistant",
            "uuid": f"bench-a-{number}",
            "sessionId": session,
            "cwd": "/bench",
            "timestamp": stamp,
            "message": {
                "id": f"bench-m-{number}",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"bench-t-{number}",
                        "name": "Bash",
                        "input": {"command": "pytest tests/test_auth.py -x"},
                    }
                ],
            },
        },
        {
            "type": "user",
            "uuid": f"bench-r-{number}",
            "sessionId": session,
            "cwd": "/bench",
            "timestamp": stamp,
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"bench-t-{number}",
                        "content": "Exit code 1\nFAILED",
                        "is_error": True,
                    }
                ],
            },
        },
    ]
    with open(path, "a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["nochange", "append"])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--base-files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    arguments = parser.parse_args()
    if arguments.mode == "nochange":
        nochange(arguments.files, arguments.repeat)
    else:
        append(arguments.base_files, arguments.repeat)


if __name__ == "__main__":
    main()
