"""Replay one enabled scope: every shell call decided on the history strictly before it.

One refresh first; then the native index is read as of each call (`providers.base.AsOf`), never
re-indexed. A call is decided through the composition root with the call's own command as the
route; the verdict is then judged by the call's recorded outcome (`outcomes.py`). Where an alarm
or a dead end's evidence lies is told by deciding again on the call's own session alone (RFC
§10 arm 1), only for those calls.
"""

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Final, Protocol

from obelisk_session_evidence.comparators.history import EDIT_TOOLS
from obelisk_session_evidence.contracts.base import Freshness
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.digests import salted_digest
from obelisk_session_evidence.contracts.prior_calls import CallOutcome, PriorToolCall
from obelisk_session_evidence.contracts.replay import (
    MAX_LISTED_CALLS,
    CallRef,
    EvidencePlace,
    OtherToolKind,
    ScopeReplay,
)
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.providers.base import AsOf, EvidenceProvider
from obelisk_session_evidence.providers.native.index.history_size import Count, HistorySizes
from obelisk_session_evidence.providers.native.index.timeline import TimedCall, Timeline
from obelisk_session_evidence.providers.native.records import FILE_TOOL_NAMES
from obelisk_session_evidence.replay.outcomes import call_outcome, command_key, is_shell_call
from obelisk_session_evidence.replay.situations import replay_situation
from obelisk_session_evidence.replay.tally import JudgedCall, figures
from obelisk_session_evidence.stages.pipeline import PipelineRun

ALARM: Final = "repeats_prior_failure"
_JUDGED: Final[frozenset[CallOutcome]] = frozenset({"failed", "succeeded", "no_match"})

Decide = Callable[[ReplanSituation, EvidenceProvider], PipelineRun]
"""Decides one situation with the given provider (the composition root, bound to a policy)."""
Progress = Callable[[int, int], None]
"""Told (calls done, calls in all) as the replay goes."""


class ReplaySource(Protocol):
    """What a replay reads: the native index's timeline of a scope, and answers as of a call."""

    def refresh(self) -> Freshness: ...

    def timeline(self) -> Timeline: ...

    def timed_calls(self, keys: Timeline) -> Iterator[TimedCall]: ...

    def as_of(self, cut: AsOf) -> EvidenceProvider: ...

    def history_sizes(self, count: Count) -> HistorySizes: ...

    def reading(self) -> AbstractContextManager[None]:
        """Hold the index open for the as-of lookups made inside."""
        ...


@dataclass(frozen=True, slots=True)
class PrivateCall:
    """A listed call with its text, for the owner's `--private-out` only."""

    ref: CallRef
    command: str
    cwd: str | None


@dataclass(frozen=True, slots=True)
class ScopeRun:
    """One scope's public replay, and its judged calls (content-free) for totals across scopes."""

    report: ScopeReplay
    judged: tuple[JudgedCall, ...]


@dataclass(frozen=True, slots=True)
class _LastRun:
    outcome: CallOutcome
    session_key: int


def replay_scope(
    enablement: Enablement,
    source: ReplaySource,
    *,
    decide: Decide,
    salt: str,
    progress: Progress | None = None,
    private: list[PrivateCall] | None = None,
    part: range | None = None,
    freshness: Freshness | None = None,
    arms: Count | None = None,
) -> ScopeRun:
    """Replay the scope's calls in time order; `private` (when given) receives the listed calls' text.

    `part` (positions in the timeline) decides only those calls: the calls before it are read, not
    decided, for the naive rule's last runs and each session's call positions, so the parts of a
    timeline replayed apart (a Prefect task each) merge into the whole (`merged`). `freshness`
    given: the caller refreshed the index already. `arms` (a size counter) measures RFC §10's three
    arms on every call: each is decided on its own session alone too (arm 1), and the history
    before it is sized with `arms` (arm 3, the full history's cost)."""
    freshness = freshness if freshness is not None else source.refresh()
    keys = source.timeline()
    part = part if part is not None else range(len(keys.call_keys))
    judged: list[JudgedCall] = []
    false_alarms: list[CallRef] = []
    missed: list[CallRef] = []
    others: dict[OtherToolKind, int] = {"edit": 0, "read": 0, "other": 0}
    last_runs: dict[str, _LastRun] = {}
    positions: dict[str, int] = {}
    shell_calls = 0
    sizes = source.history_sizes(arms) if arms is not None else None
    started = time.perf_counter()
    with source.reading():
        for at, timed in enumerate(source.timed_calls(keys)):
            if at >= part.stop:
                break
            call, deciding = timed.call, at >= part.start
            if not is_shell_call(call):
                if deciding:
                    others[_other_kind(call)] += 1
            else:
                position = positions.get(call.session_ref, 0)
                positions[call.session_ref] = position + 1
                key = command_key(call.command)
                if deciding:
                    one = _judge(
                        enablement, source, decide, call, timed.cut, last_runs.get(key), index=shell_calls, sizes=sizes
                    )
                    judged.append(one)
                    if one.alarm and one.outcome in ("succeeded", "no_match"):
                        _list(false_alarms, private, call, one, position, salt)
                    if one.dead_end and not one.alarm:
                        _list(missed, private, call, one, position, salt)
                    outcome = one.outcome
                else:
                    outcome = call_outcome(call)
                if outcome in _JUDGED:
                    last_runs[key] = _LastRun(outcome, timed.cut.session_key)
                shell_calls += 1
            if progress is not None and deciding:
                progress(at + 1 - part.start, len(part))
    seconds = time.perf_counter() - started
    report = ScopeReplay(
        agent_id=enablement.agent_id,
        project_id=enablement.project_id,
        repository_id=enablement.repository_id,
        freshness=freshness,
        tool_calls=len(keys.call_keys),
        other_tool_calls=others,
        undated_calls=keys.undated,
        figures=figures(judged),
        false_alarms=false_alarms,
        missed_dead_ends=missed,
        seconds=round(seconds, 3),
        calls_per_second=_rate(len(judged), seconds),
    )
    return ScopeRun(report, tuple(judged))


def merged(parts: Sequence[ScopeRun]) -> ScopeRun:
    """One scope's replay from its parts' (`replay_scope(part=...)`), given in timeline order."""
    first = parts[0].report
    judged = tuple(call for run in parts for call in run.judged)
    seconds = sum(run.report.seconds for run in parts)
    others = {kind: sum(run.report.other_tool_calls.get(kind, 0) for run in parts) for kind in first.other_tool_calls}
    report = first.model_copy(
        update={
            "other_tool_calls": others,
            "figures": figures(judged),
            "false_alarms": [ref for run in parts for ref in run.report.false_alarms][:MAX_LISTED_CALLS],
            "missed_dead_ends": [ref for run in parts for ref in run.report.missed_dead_ends][:MAX_LISTED_CALLS],
            "seconds": round(seconds, 3),
            "calls_per_second": _rate(len(judged), seconds),
        }
    )
    return ScopeRun(report, judged)


def _rate(calls: int, seconds: float) -> float | None:
    return round(calls / seconds, 1) if calls and seconds > 0 else None


def _judge(
    enablement: Enablement,
    source: ReplaySource,
    decide: Decide,
    call: PriorToolCall,
    cut: AsOf,
    last: _LastRun | None,
    *,
    index: int,
    sizes: HistorySizes | None,
) -> JudgedCall:
    situation = replay_situation(enablement, call, index=index)
    started = time.perf_counter()
    run = decide(situation, source.as_of(cut))
    decide_ms = (time.perf_counter() - started) * 1000
    outcome = call_outcome(call)
    verdict = run.decision.comparison.verdict
    rerun = last is not None and last.outcome == "failed"
    rerun_place: EvidencePlace | None = None
    if rerun and last is not None:
        rerun_place = "within_session" if last.session_key == cut.session_key else "across_sessions"
    own_alarm: bool | None = None
    own_ms: float | None = None
    if verdict == ALARM or sizes is not None:  # where an alarm's evidence lies; arm 1 for every call
        started = time.perf_counter()
        own = decide(situation, source.as_of(replace(cut, own_session_only=True)))
        own_ms = (time.perf_counter() - started) * 1000
        own_alarm = own.decision.comparison.verdict == ALARM
    alarm_place: EvidencePlace | None = None
    if verdict == ALARM:
        alarm_place = "within_session" if own_alarm else "across_sessions"
    result = run.private_result
    return JudgedCall(
        outcome=outcome,
        verdict=verdict,
        alarm=verdict == ALARM,
        alarm_place=alarm_place,
        rerun_of_failure=rerun,
        rerun_place=rerun_place,
        private_items=len(result.items) if result else 0,
        truncated=bool(result and result.truncated),
        decide_ms=decide_ms,
        own_alarm=own_alarm if sizes is not None else None,
        own_decide_ms=own_ms if sizes is not None else None,
        private_tokens=run.values.capped.token_count,
        history_size=sizes.before(cut) if sizes is not None else None,
    )


def _list(
    refs: list[CallRef],
    private: list[PrivateCall] | None,
    call: PriorToolCall,
    judged: JudgedCall,
    position: int,
    salt: str,
) -> None:
    if len(refs) >= MAX_LISTED_CALLS:
        return
    ref = CallRef(
        session_ref=call.session_ref,
        call_index=position,
        command_digest=salted_digest(command_key(call.command), salt=salt),
        verdict=judged.verdict,
        outcome=judged.outcome,
        place=judged.rerun_place,
    )
    refs.append(ref)
    if private is not None:
        private.append(PrivateCall(ref, call.command, call.cwd))


def _other_kind(call: PriorToolCall) -> OtherToolKind:
    name = call.tool_name.lower()
    if name in EDIT_TOOLS:
        return "edit"
    return "read" if name in FILE_TOOL_NAMES else "other"
