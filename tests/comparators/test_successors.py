"""Grounded successors (issue "Cause-aware verdicts" item 4, RFC §10): for each failure a failure
verdict rests on, the later call in the same checkout where the failing program succeeded."""

from tests.comparators.test_cause_aware import REPO, match, shell
from tests.comparators.test_cause_changes_replayed import BIOME_REFUSED

NOT_FOUND = "Exit code 127\n(eval):1: command not found: pytest"
PASSED = "============================= 12 passed in 0.84s =============================="


def test_after_a_missing_command_the_run_in_its_environment_that_passed_is_the_successor():
    calls = [shell("pytest", NOT_FOUND, exit_code=127, minute=0), shell("uv run pytest", PASSED, minute=2)]
    result = match(calls, "pytest")
    assert result.repeats_failure
    assert (result.command_items, result.successor_items) == (frozenset({0}), frozenset({1}))


def test_after_a_refused_lint_the_passing_lint_is_the_successor_not_the_fixer():
    calls = [
        shell("CI=true bun run lint 2>&1", BIOME_REFUSED, exit_code=1, minute=0),
        shell("bun run lint:fix", "Checked 275 files in 153ms. Fixed 4 files.", minute=1),
        shell("bun run lint", "Checked 275 files in 98ms. No fixes applied.", minute=2),
    ]
    result = match(calls, "CI=true bun run lint 2>&1")
    assert result.repeats_failure_changed_since
    assert result.successor_items == frozenset({2})


def test_the_successor_most_like_the_failing_command_wins_then_the_earliest():
    calls = [
        shell("pytest tests/test_auth.py -x", NOT_FOUND, exit_code=127, minute=0),
        shell("uv run pytest tests/test_models.py", PASSED, minute=1),
        shell("uv run pytest tests/test_auth.py -x", PASSED, minute=2),
        shell("uv run pytest tests/test_auth.py -x", PASSED, minute=3),
    ]
    assert match(calls, "pytest tests/test_auth.py -x").successor_items == frozenset({2})


def test_a_segment_that_passed_before_a_later_one_failed_worked():
    calls = [
        shell("pytest", NOT_FOUND, exit_code=127, minute=0),
        shell("uv run pytest && git push", PASSED + "\nfatal: no upstream branch", exit_code=128, minute=2),
    ]
    assert match(calls, "pytest").successor_items == frozenset({1})


def test_no_successor_when_nothing_later_succeeded():
    calls = [
        shell("pytest", NOT_FOUND, exit_code=127, minute=0),
        shell("uv run pytest", "error: Failed to spawn: `pytest`", exit_code=2, minute=2),
        shell("python -c 'import app'", minute=3),
    ]
    result = match(calls, "pytest")
    assert result.repeats_failure and result.successor_items == frozenset()


def test_no_successor_from_another_checkout():
    elsewhere = f"{REPO}-review"
    success = shell("uv run pytest", PASSED, minute=2, cwd=elsewhere).model_copy(update={"repository_cwd": ""})
    result = match([shell("pytest", NOT_FOUND, exit_code=127, minute=0), success], "pytest")
    assert result.repeats_failure and result.successor_items == frozenset()


def test_no_successor_from_before_the_failure():
    calls = [shell("uv run pytest", PASSED, minute=0), shell("pytest", NOT_FOUND, exit_code=127, minute=2)]
    result = match(calls, "pytest")
    assert result.repeats_failure and result.successor_items == frozenset()


def test_a_verdict_that_rests_on_no_failure_names_no_successor():
    calls = [
        shell("pytest", NOT_FOUND, exit_code=127, minute=0),
        shell("uv run pytest", PASSED, minute=2),
    ]
    result = match(calls, "uv run pytest")
    assert result.repeats_attempt and result.successor_items == frozenset()


def test_a_call_without_a_time_is_never_after_the_failure():
    undated = shell("uv run pytest", PASSED, minute=2).model_copy(update={"observed_at": None})
    result = match([shell("pytest", NOT_FOUND, exit_code=127, minute=0), undated], "pytest")
    assert result.repeats_failure and result.successor_items == frozenset()


def test_a_matched_call_whose_failure_the_route_does_not_repeat_names_no_successor():
    """The route repeats `npm run build`, which ran well in call 1 before its `npm test` failed:
    that failure is not one the verdict rests on, so what passed after it is no successor."""
    calls = [
        shell("pytest", NOT_FOUND, exit_code=127, minute=0),
        shell("npm run build && npm test", "Tests: 1 failed, 9 passed", exit_code=1, minute=1),
        shell("npm test", "Tests: 10 passed", minute=2),
    ]
    result = match(calls, "npm run build && pytest")
    assert result.repeats_failure and result.command_items == frozenset({0, 1})
    assert result.successor_items == frozenset()
