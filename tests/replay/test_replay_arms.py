"""RFC §10's three arms on identical replayed calls: arm 1 decides on the call's own session alone,
arm 2 is the replay itself, arm 3 sizes the whole history before each call (the cost ceiling)."""

import dataclasses
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.index.history_size import HistorySizes
from obelisk_session_evidence.providers.native.index.scope import scope_filter
from obelisk_session_evidence.providers.native.index.scoped_sql import JOINS, TEXT, scope_clauses
from obelisk_session_evidence.providers.native.index.store import connect, index_file
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.replay import replay_one_scope
from obelisk_session_evidence.replay.tally import arm_rule
from obelisk_session_evidence.state.paths import state_paths
from tests.replay.history import History, enable

TEST = "pytest tests/test_auth.py"


@pytest.fixture
def history(tmp_path: Path):
    """A test failing in session one and again in session two (a dead end only retrieval sees),
    then a build failing twice within session two (a dead end the session itself holds)."""
    root = tmp_path / "claude"
    sessions = History(root)
    sessions.session("one").bash(TEST, "FAILED test_login", exit_code=1).write()
    (
        sessions.session("two")
        .bash(TEST, "FAILED test_login", exit_code=1)
        .bash("make build", "make: *** [build] Error 2", exit_code=2)
        .bash("make build", "make: *** [build] Error 2", exit_code=2)
        .write()
    )
    paths = state_paths()
    return paths, enable(paths, root)


def test_history_sizes_sum_what_the_as_of_cut_admits(history):
    """The binary-searched sums equal a plain SQL read of the rows each cut admits."""
    paths, enablement = history
    provider = NativeIndexProvider(paths.index_dir, enablement)
    provider.refresh()
    cuts = [timed.cut for timed in provider.timed_calls(provider.timeline())]
    sizes = provider.history_sizes(len)
    connection = connect(index_file(paths.index_dir))
    try:
        scope = scope_filter(provider._roots, provider._repository_binding(connection))
        assert isinstance(sizes, HistorySizes)
        for cut in [*cuts, *(dataclasses.replace(cut, own_session_only=True) for cut in cuts)]:
            params: dict[str, object] = {}
            where = scope_clauses(dataclasses.replace(scope, as_of=cut), None, params)
            texts = connection.execute(
                "SELECT coalesce(t.command, '') || ' ' || coalesce(t.body, '') || ' ' || coalesce(t.detail, '')"
                f" FROM entries AS e\n{JOINS}\nJOIN {TEXT} AS t ON t.rowid = e.id WHERE {where}",
                params,
            ).fetchall()
            assert sizes.before(cut) == sum(len(text.strip()) for (text,) in texts)
    finally:
        connection.close()
    whole = [sizes.before(cut) for cut in cuts]
    assert whole == sorted(whole) and whole[0] == 0 < whole[-1]  # nothing precedes the first call


def test_the_arms_judge_identical_calls(history):
    paths, enablement = history
    run = replay_one_scope(paths, enablement, arms=len)
    calls = run.judged
    assert [call.outcome for call in calls] == ["failed"] * 4
    assert all(call.own_alarm is not None and call.history_size is not None for call in calls)
    assert [call.dead_end for call in calls] == [False, True, False, True]
    # Arm 1 cannot see session one's failure; arm 2 can. Both see the build's within the session.
    assert calls[1].alarm and calls[1].own_alarm is False
    within = arm_rule(calls, lambda call: bool(call.own_alarm))
    admitted = arm_rule(calls, lambda call: call.alarm)
    assert admitted.dead_ends_caught == 2 and within.dead_ends_caught == 1
    assert [call.history_size for call in calls] == sorted(call.history_size or 0 for call in calls)
    plain = replay_one_scope(paths, enablement)
    assert [call.verdict for call in plain.judged] == [call.verdict for call in calls]
    assert all(call.history_size is None and call.own_alarm is None for call in plain.judged)
