"""Generated corpora for the bench, cached under `.state/bench/` and keyed by seed and shape.

A corpus is the fixture generator's session histories (`write_native_histories`, all five agents'
on-disk formats) scaled up, a state folder whose configuration enables the fixture's agent,
project and repository over them, and (when asked) its native index, built once. A marker file
written last makes an interrupted build count as absent, so the next run starts it again.
"""

import json
import os
import random
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY
from obelisk_session_evidence.contracts.config import SOURCE_KINDS, Enablement, EnablementConfig
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.parsers import default_roots
from obelisk_session_evidence.qualify.session_writers import write_native_histories
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private

CACHE_VERSION: Final = 1
"""Bump when the bench changes what a cached corpus holds."""
DECISION_ROUNDS: Final = 50
"""Test rounds per session in the decision corpora: about 102 messages per session."""
SESSIONS_PER_SOURCE: Final = 3
SESSIONS_PER_SCALE: Final = 5 * (SESSIONS_PER_SOURCE + 1)
"""`write_native_histories` writes (sessions_per_source + 1 bait) sessions per agent per scale step."""
MESSAGES_PER_DECISION_SESSION: Final = 2 * DECISION_ROUNDS + 2
MARKER: Final = "corpus.json"


@dataclass(frozen=True, slots=True)
class Corpus:
    """A generated corpus in the cache: its histories, its state folder and what building it took."""

    folder: Path
    home: Path
    roots: dict[str, list[Path]]
    state: StatePaths
    stats: dict[str, Any]
    """messages, entries, files, bytes, generate_s, build_s (as measured when the cache was made)."""

    @property
    def index_path(self) -> Path:
        return index_file(self.state.index_dir)

    @property
    def append_target(self) -> Path:
        """A Claude session in the enabled repository: the file the append bench grows."""
        return Path(self.stats["append_target"])


def default_cache_dir() -> Path:
    """`.state/bench/` in the checkout (gitignored)."""
    return Path(__file__).resolve().parents[1] / ".state" / "bench"


def decision_scale(messages: int) -> int:
    """The generator's `scale` that gives about `messages` messages at `DECISION_ROUNDS` rounds."""
    return max(1, round(messages / (SESSIONS_PER_SCALE * MESSAGES_PER_DECISION_SESSION)))


def files_scale(files: int) -> int:
    """The generator's `scale` that gives about `files` session files."""
    return max(1, round(files / SESSIONS_PER_SCALE))


def generated_corpus(cache: Path, *, seed: int, scale: int, rounds: int, log=print) -> Corpus:
    """The cached corpus of this shape, generated and indexed first when absent."""
    folder = cache / f"native-v{CACHE_VERSION}-seed{seed}-scale{scale}-rounds{rounds}"
    marker = folder / MARKER
    if marker.exists():
        corpus = _corpus_at(folder, json.loads(marker.read_text()))
        restore_append_target(corpus)
        return corpus
    shutil.rmtree(folder, ignore_errors=True)
    log(f"generating corpus scale={scale} rounds={rounds} (cached in {folder})")
    started = time.perf_counter()
    manifest = write_native_histories(
        folder / "histories", seed=seed, sessions_per_source=SESSIONS_PER_SOURCE, scale=scale, rounds_per_session=rounds
    )
    generate_s = time.perf_counter() - started
    roots = default_roots(manifest.home)
    state = StatePaths(folder / "state")
    config = EnablementConfig(
        enablements=[
            Enablement(
                surface="replan-history",
                agent_id=FIXTURE_AGENT,
                project_id=FIXTURE_PROJECT,
                repository_id=FIXTURE_REPOSITORY,
                repo_roots=[str(manifest.repo_root), str(manifest.worktree_root)],
                source_roots={source: str(roots[source]) for source in SOURCE_KINDS},
                enabled_at=datetime(2026, 11, 1, tzinfo=UTC),
            )
        ]
    )
    write_private(state.config_file, config.model_dump_json().encode())
    log(f"building its index ({sum(s.decisions + s.meta_messages for s in manifest.sessions):,} messages)")
    report = refresh_index(index_file(state.index_dir), {source: [path] for source, path in roots.items()})
    target = next(s.path for s in manifest.sessions if s.source == "claude" and not s.is_bait)
    stats = {
        "seed": seed,
        "scale": scale,
        "rounds": rounds,
        "messages": report.messages_written,
        "entries": report.messages_written + report.tool_calls_written + report.summaries_written,
        "files": report.files_seen,
        "bytes": report.bytes_read,
        "generate_s": round(generate_s, 2),
        "build_s": round(report.seconds, 2),
        "append_target": str(target),
        "append_target_size": target.stat().st_size,
    }
    marker.write_text(json.dumps(stats, indent=1))
    return _corpus_at(folder, stats)


def _corpus_at(folder: Path, stats: dict[str, Any]) -> Corpus:
    home = folder / "histories" / "home"
    roots = {source: [path] for source, path in default_roots(home).items()}
    return Corpus(folder=folder, home=home, roots=roots, state=StatePaths(folder / "state"), stats=stats)


def restore_append_target(corpus: Corpus) -> None:
    """Cut the append target back to its generated size (an append bench grows it) and re-index it."""
    target, size = corpus.append_target, int(corpus.stats["append_target_size"])
    if target.stat().st_size != size:
        with open(target, "r+b") as handle:
            handle.truncate(size)
        refresh_index(corpus.index_path, corpus.roots)


def single_session_file(cache: Path, *, megabytes: int, seed: int) -> Path:
    """One Claude Code session file of about `megabytes` MB (cached): tool rounds with varied output."""
    folder = cache / f"single-claude-v{CACHE_VERSION}-seed{seed}-{megabytes}mb"
    path = folder / "home" / ".claude" / "projects" / "-bench-repo" / "big-session.jsonl"
    if (folder / MARKER).exists():
        return path
    shutil.rmtree(folder, ignore_errors=True)
    path.parent.mkdir(parents=True)
    rng = random.Random(seed)
    words = (
        "token",
        "expiry",
        "session",
        "refresh",
        "assert",
        "401",
        "clock",
        "skew",
        "header",
        "cookie",
        "timeout",
        "retry",
        "fixture",
        "mock",
        "database",
        "migration",
        "cache",
        "login",
        "logout",
        "jwt",
    )
    target = megabytes * 1_000_000
    written, number = 0, 0
    with open(path, "w", encoding="utf-8") as handle:
        while written < target:
            lines = _claude_round(number, rng, words)
            chunk = "".join(json.dumps(line) + "\n" for line in lines)
            handle.write(chunk)
            written += len(chunk.encode())
            number += 1
    (folder / MARKER).write_text(json.dumps({"rounds": number, "bytes": os.path.getsize(path)}))
    return path


def _claude_round(number: int, rng: random.Random, words: tuple[str, ...]) -> list[dict[str, Any]]:
    """A user turn, a Bash call with about 1.5 KB of output, and the assistant's reply."""
    session, cwd = "bench-big-session", "/bench/repo"
    stamp = f"2026-04-01T{(number // 3600) % 24:02d}:{(number // 60) % 60:02d}:{number % 60:02d}.000Z"
    head = {"sessionId": session, "cwd": cwd, "timestamp": stamp, "version": "2.1.39", "userType": "external"}
    output = "\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(20))
    test = f"tests/test_{rng.choice(words)}.py"
    failed = rng.random() < 0.4
    return [
        head
        | {
            "type": "user",
            "uuid": f"u-{number}",
            "message": {"role": "user", "content": f"Round {number}: check {rng.choice(words)} handling in {test}."},
        },
        head
        | {
            "type": "assistant",
            "uuid": f"a-{number}",
            "message": {
                "id": f"msg-{number}",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu-{number}",
                        "name": "Bash",
                        "input": {"command": f"pytest {test} -x"},
                    }
                ],
            },
        },
        head
        | {
            "type": "user",
            "uuid": f"r-{number}",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu-{number}",
                        "is_error": failed,
                        "content": ("Exit code 1\n" if failed else "") + output,
                    }
                ],
            },
        },
        head
        | {
            "type": "assistant",
            "uuid": f"t-{number}",
            "message": {
                "id": f"msg-t-{number}",
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"The {rng.choice(words)} check {'fails' if failed else 'passes'}."}
                ],
            },
        },
    ]
