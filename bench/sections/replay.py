"""Section 8: `replay` throughput in process, on a generated history of N shell calls and on the real corpus.

The generated history is the bench's decision corpus (all five agents' formats) at the scale that
holds at least N shell calls in the fixture scope; the replay decides the first N of them (each
on the history strictly before it, an alarm decided again on its own session alone). The real
corpus is laid out as `qualify` replays it (one enablement per repository group). Wall time
includes waiting for a CPU on this shared machine; CPU time is this process's.
"""

import tempfile
import time
from pathlib import Path
from typing import Any, Final

from bench._report import Table, count
from bench._scaled import Corpus
from obelisk_session_evidence.replay import ScopeRun, replay_history, replay_one_scope, scopes_to_replay
from obelisk_session_evidence.replay.outcomes import is_shell_call
from obelisk_session_evidence.state.paths import StatePaths

SHELL_CALLS_PER_SCALE: Final = 754
"""Shell calls the fixture scope holds per scale step of the decision corpus (measured: 10,556 at 14)."""


def replay_scale(calls: int) -> int:
    """The decision corpus's scale that holds at least `calls` shell calls in the fixture scope."""
    return max(1, -(-calls // SHELL_CALLS_PER_SCALE))


def replay_table(corpus: Corpus, calls: int, *, real: bool) -> tuple[Table, dict[str, Any]]:
    """Replay the first `calls` shell calls of `corpus` (and the real corpus when `real`) and tabulate."""
    table = Table(
        "8. Replay in process (target >= 50 calls/s)",
        ("history", "calls", "decisions", "wall s", "CPU s", "calls/s wall", "calls/s CPU", "decide p95 ms", "alarms"),
    )
    (enablement,) = scopes_to_replay(corpus.state, project_id=None, agent_id=None)
    part = _first_shell_calls(corpus.state, enablement, calls)
    replay_one_scope(corpus.state, enablement, part=range(0, 1))  # the refresh and the imports, not timed
    runs, wall, cpu = _timed(lambda: [replay_one_scope(corpus.state, enablement, part=part)])
    figures: dict[str, Any] = {}
    _add(table, f"generated, {count(corpus.stats['messages'])} messages", runs, wall, cpu, figures, "replay")
    if real:
        runs, wall, cpu = _real_corpus_runs()
        _add(
            table, f"the project's real corpus ({len(runs)} repository groups)", runs, wall, cpu, figures, "replay_real"
        )
    table.notes.append(
        "decisions = calls + alarms (an alarm is decided again on its own session alone, for its place);"
        " the target is judged on calls per CPU-second, like the decision targets."
    )
    return table, figures


def _first_shell_calls(paths: StatePaths, enablement: Any, calls: int) -> range:
    """The timeline positions that hold the scope's first `calls` shell calls."""
    from obelisk_session_evidence.providers.native.provider import NativeIndexProvider

    source = NativeIndexProvider(paths.index_dir, enablement)
    source.refresh()
    shell = 0
    keys = source.timeline()
    for at, timed in enumerate(source.timed_calls(keys)):
        shell += is_shell_call(timed.call)
        if shell >= calls:
            return range(0, at + 1)
    return range(0, len(keys.call_keys))


def _real_corpus_runs() -> tuple[list[ScopeRun], float, float]:
    from obelisk_session_evidence.qualify.real_cases import repository_groups
    from obelisk_session_evidence.qualify.replay_corpus import lay_out_corpus

    with tempfile.TemporaryDirectory(prefix="ose-bench-replay-") as folder:
        paths = StatePaths(Path(folder) / "state")
        config = lay_out_corpus(repository_groups(), Path(folder) / "home")
        paths.root.mkdir(parents=True)
        paths.config_file.write_text(config.model_dump_json())
        for enablement in config.enablements:  # each scope's one refresh, not timed
            replay_one_scope(paths, enablement, part=range(0, 0))
        return _timed(lambda: [replay_one_scope(paths, enablement) for enablement in config.enablements])


def _timed(replay: Any) -> tuple[list[ScopeRun], float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    runs = replay()
    return runs, time.perf_counter() - wall, time.process_time() - cpu


def _add(
    table: Table, label: str, runs: list[ScopeRun], wall: float, cpu: float, figures: dict[str, Any], key: str
) -> None:
    total = replay_history(runs).total
    if total is None or not total.calls:
        table.add(label, "0", "not run (no shell call replayed)")
        return
    decisions = total.calls + total.verdict.alarms
    table.add(
        label,
        count(total.calls),
        count(decisions),
        f"{wall:.1f}",
        f"{cpu:.1f}",
        f"{total.calls / wall:.1f}",
        f"{total.calls / cpu:.1f}",
        f"{total.decide_ms_p95:.1f}",
        count(total.verdict.alarms),
    )
    figures.update(
        {
            f"{key}_calls": total.calls,
            f"{key}_calls_per_s_wall": total.calls / wall,
            f"{key}_calls_per_cpu_s": total.calls / cpu,
        }
    )
