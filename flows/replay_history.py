"""The `replay-history` flow: `replay` as one Prefect flow, one task per scope (or part of a scope).

A task `prepare-replay-scope` refreshes each scope once and counts its timeline; each scope is then
cut into parts of at most `calls_per_task` timeline calls, and one task `replay-scope-part` per part
decides its calls as of each (`replay.replay_one_scope(part=...)`), so a large scope spreads over
threads or Dask workers. Only references cross into Prefect: the flow's parameters are the state
folder's reference, the optional project and agent ids and a count; a task's arguments are a
scope's ids and a range, and its result is the part's content-free `ScopeRun` (figures, opaque call
references) with, when the owner asked for the listed calls' text, the spool digest of that text
(the spool is private). Run names are static or positional; a failed part ends Failed with its
reason code alone, and the flow then fails with a content-free `StageFailed`.
"""

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect import State, flow, get_run_logger, task, unmapped
from prefect.runtime import task_run
from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
from prefect.states import Failed

from obelisk_session_evidence.contracts.base import Freshness
from obelisk_session_evidence.contracts.config import Enablement, ProviderKind
from obelisk_session_evidence.contracts.errors import EvidenceError, InvalidInput, StageFailed
from obelisk_session_evidence.contracts.replay import ReplayReport
from obelisk_session_evidence.flows.replan_evidence import PRIVATE_TASK_OPTIONS
from obelisk_session_evidence.flows.reprocess_stalled import DEFAULT_CONCURRENCY, TaskRunnerKind, task_runner_for
from obelisk_session_evidence.flows.temporary_api import expect_records
from obelisk_session_evidence.replay import (
    PrivateCall,
    ScopeRun,
    merged,
    prepare_scope,
    replay_history,
    replay_one_scope,
    scopes_to_replay,
)
from obelisk_session_evidence.replay.private import private_document
from obelisk_session_evidence.state.paths import StatePaths, state_at, state_reference
from obelisk_session_evidence.state.spool import spool_document

DEFAULT_CALLS_PER_TASK = 2000
"""Timeline calls per task: a scope above it is split (about 40 s of deciding each at 50 calls/s)."""
ScopeKey = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class PreparedScope:
    """A scope after its one refresh: how fresh, and how many calls its timeline holds."""

    freshness: Freshness
    calls: int


@dataclass(frozen=True, slots=True)
class ReplayedPart:
    """One part's content-free replay, and the spool digest of its listed calls' text (if asked)."""

    run: ScopeRun
    private_ref: str | None


@dataclass(frozen=True, slots=True)
class ReplayedHistory:
    """The flow's result: the public report and the spool digests of the listed calls' text."""

    report: ReplayReport
    private_refs: tuple[str, ...]


@task(name="prepare-replay-scope", task_run_name="prepare-replay-scope", **PRIVATE_TASK_OPTIONS)
def prepare_replay_scope(scope: ScopeKey, state_root: str, provider_kind: ProviderKind | None) -> PreparedScope | State:
    """Refresh the scope's index once and count its timeline; a failure ends Failed, its code alone."""
    try:
        freshness, calls = prepare_scope(
            StatePaths(Path(state_root)), _enablement(state_root, scope), provider_kind=provider_kind
        )
    except Exception as error:
        return Failed(message=f"prepare-replay-scope: {_reason(error)}")
    return PreparedScope(freshness, calls)


def _part_run_name() -> str:
    """`replay-part-<first call>-<end>`: positions in the timeline, nothing of the scope's content."""
    part = task_run.parameters.get("part")
    return f"replay-part-{part.start}-{part.stop}" if isinstance(part, range) else "replay-part"


@task(name="replay-scope-part", task_run_name=_part_run_name, **PRIVATE_TASK_OPTIONS)
def replay_scope_part(
    scope: ScopeKey,
    part: range,
    freshness: Freshness,
    state_root: str,
    provider_kind: ProviderKind | None,
    keep_private: bool,
) -> ReplayedPart | State:
    """Decide the part's calls; a failure ends Failed with its reason code alone (no traceback)."""
    paths = StatePaths(Path(state_root))
    private: list[PrivateCall] | None = [] if keep_private else None
    try:
        run = replay_one_scope(
            paths,
            _enablement(state_root, scope),
            provider_kind=provider_kind,
            private=private,
            part=part,
            freshness=freshness,
        )
    except Exception as error:
        return Failed(message=f"replay-scope-part {part.start}-{part.stop}: {_reason(error)}")
    private_ref = spool_document(paths, "replays", private_document(private)) if private else None
    return ReplayedPart(run, private_ref)


def _reason(error: Exception) -> str:
    """A typed error's reason code, else the exception's type: never its message."""
    return error.reason_code if isinstance(error, EvidenceError) else type(error).__name__


def _enablement(state_root: str, scope: ScopeKey) -> Enablement:
    for enablement in scopes_to_replay(StatePaths(Path(state_root)), project_id=scope[1], agent_id=scope[0]):
        if enablement.scope_key == scope:
            return enablement
    raise InvalidInput("the scope is no longer enabled")


def parts_of(calls: int, calls_per_task: int) -> list[range]:
    """The timeline's positions cut into consecutive parts of at most `calls_per_task` (one, empty,
    for an empty timeline: the scope is still reported)."""
    return [range(start, min(start + calls_per_task, calls)) for start in range(0, calls, calls_per_task)] or [
        range(0, 0)
    ]


@flow(
    name="replay-history",
    flow_run_name="replay-history",
    persist_result=False,
    log_prints=False,
    validate_parameters=True,
)
def replay_history_flow(
    state_ref: str | None = None,
    project_id: str | None = None,
    agent_id: str | None = None,
    provider_kind: ProviderKind | None = None,
    calls_per_task: int = DEFAULT_CALLS_PER_TASK,
    keep_private: bool = False,
) -> ReplayedHistory:
    """Replay every enabled scope (optionally one project's or agent's); the parameters are a
    reference to the state folder (None: the runner's; never its path), public ids and counts."""
    started = time.perf_counter()
    try:
        state_root = str(state_at(state_ref).root)  # task inputs are not stored; flow parameters are
        chosen = scopes_to_replay(StatePaths(Path(state_root)), project_id=project_id, agent_id=agent_id)
        scopes = [enablement.scope_key for enablement in chosen]
        prepared = _completed(prepare_replay_scope.map(scopes, unmapped(state_root), unmapped(provider_kind)))
        planned = [
            (scope, part, ready.freshness)
            for scope, ready in zip(scopes, prepared, strict=True)
            for part in parts_of(ready.calls, max(1, calls_per_task))
        ]
        futures = replay_scope_part.map(
            [scope for scope, _, _ in planned],
            [part for _, part, _ in planned],
            [freshness for _, _, freshness in planned],
            unmapped(state_root),
            unmapped(provider_kind),
            unmapped(keep_private),
        )
        parts: list[ReplayedPart] = _completed(futures)
    except StageFailed:
        raise
    except EvidenceError as error:
        raise StageFailed(error.reason_code) from None
    except Exception as error:
        raise StageFailed(type(error).__name__) from None
    runs = [
        merged([done.run for (scope, _, _), done in zip(planned, parts, strict=True) if scope == key]) for key in scopes
    ]
    report = replay_history(runs)
    total = report.total
    get_run_logger().info(
        "replay scopes=%d parts=%d calls=%d dead_ends=%d alarms=%d seconds=%.1f",
        len(scopes),
        len(planned),
        total.calls if total else 0,
        total.dead_ends if total else 0,
        total.verdict.alarms if total else 0,
        time.perf_counter() - started,
    )
    return ReplayedHistory(report, tuple(done.private_ref for done in parts if done.private_ref))


def _completed(futures: Any) -> list[Any]:
    """Every mapped task's result, in order; the first failed one's own content-free message
    (its task's name and reason code) as a `StageFailed` otherwise."""
    futures.wait()
    for future in futures:
        if not future.state.is_completed():
            raise StageFailed(future.state.message or "task_failed")
    return [future.result() for future in futures]


def run_replay_flow(
    *,
    paths: StatePaths,
    project_id: str | None = None,
    agent_id: str | None = None,
    provider_kind: ProviderKind | None = None,
    task_runner: TaskRunnerKind = "thread",
    concurrency: int = DEFAULT_CONCURRENCY,
    dask_address: str | None = None,
    calls_per_task: int = DEFAULT_CALLS_PER_TASK,
    keep_private: bool = False,
) -> ReplayedHistory:
    """Run the flow in this process against the configured API (or the temporary one the caller
    started, which then waits for every task run of it to be recorded), heartbeat thread off."""
    runner = task_runner_for(task_runner, concurrency=concurrency, dask_address=dask_address)
    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        state = replay_history_flow.with_options(task_runner=runner)(
            state_reference(paths), project_id, agent_id, provider_kind, calls_per_task, keep_private, return_state=True
        )
    expect_records(state.state_details.flow_run_id, task_runs=None)
    outcome = state.result(raise_on_failure=False)
    if isinstance(outcome, BaseException):
        raise outcome  # the flow's own content-free StageFailed
    if not isinstance(outcome, ReplayedHistory):
        raise StageFailed("replay-history returned no result")
    return outcome
