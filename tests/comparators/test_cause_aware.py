"""Cause-aware matching: each proposed command against its latest comparable run; a failure stands
until a later change touches its typed cause (issue "Cause-aware verdicts", docs/failure-causes.md)."""

from datetime import UTC, datetime, timedelta

from obelisk_session_evidence.comparators.history import prior_steps_from_calls
from obelisk_session_evidence.comparators.route_match import RouteMatch, route_match
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall
from obelisk_session_evidence.contracts.situation import Revision, RouteProposal
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.failure_causes import call_outcome, failure_cause

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
REPO = "/work/app"


def shell(
    command: str,
    output: str = "",
    *,
    exit_code: int = 0,
    minute: int,
    cwd: str = REPO,
    tool: str = "Bash",
    revision: str | None = None,
) -> PriorToolCall:
    """A prior shell call typed as the native provider types it."""
    outcome = call_outcome(command, exit_code=exit_code, is_error=exit_code != 0, output=output)
    return PriorToolCall(
        session_ref="session:" + "a" * 16,
        tool_name=tool,
        command=command,
        exit_code=exit_code,
        is_error=exit_code != 0,
        cwd=cwd,
        repository_cwd="" if cwd == REPO else None,
        observed_at=T0 + timedelta(minutes=minute),
        revision_ref=revision,
        output_excerpt=output,
        outcome=outcome,
        cause=failure_cause(command, exit_code=exit_code, output=output) if outcome == "failed" else None,
    )


def edit(path: str, *, minute: int) -> PriorToolCall:
    return PriorToolCall(
        session_ref="session:" + "a" * 16,
        tool_name="Edit",
        command=path,
        is_error=False,
        cwd=REPO,
        repository_cwd="",
        observed_at=T0 + timedelta(minutes=minute),
        files=[path],
        outcome="succeeded",
    )


def match(calls: list[PriorToolCall], *commands: str, cwd: str | None = None) -> RouteMatch:
    """The route running `commands` (in `cwd`, when it says where) against `calls`."""
    steps = prior_steps_from_calls(calls, [], roots=(REPO,))
    route = RouteProposal(action_kind="shell", commands=list(commands), cwd=cwd)
    return route_match(route, steps, thresholds=RouteThresholds(), revision=Revision(current="c0ffee1"), roots=(REPO,))


LINT_FAILURE = "at src/app.ts format ━━━\n  × Formatter would have printed the following content:"


def test_a_lint_failure_stands_when_later_edits_touch_other_files():
    calls = [shell("bun run lint", LINT_FAILURE, exit_code=1, minute=0), edit(f"{REPO}/src/other.ts", minute=2)]
    assert match(calls, "bun run lint").repeats_failure


def test_a_lint_failure_after_an_edit_of_the_refused_file_is_changed_since():
    calls = [shell("bun run lint", LINT_FAILURE, exit_code=1, minute=0), edit(f"{REPO}/src/app.ts", minute=2)]
    result = match(calls, "bun run lint")
    assert result.repeats_failure_changed_since and not result.repeats_failure


def test_temporary_paths_never_count_as_a_change():
    calls = [
        shell("pytest", "FAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed", exit_code=1, minute=0),
        shell("rm -f /tmp/x && mkdir -p /tmp/x", minute=2),
    ]
    assert match(calls, "pytest").repeats_failure


def test_an_edit_does_not_fix_a_missing_command():
    calls = [shell("rtk bun run test", "error: unrecognized subcommand 'bun'", exit_code=2, minute=0)]
    calls.append(edit(f"{REPO}/src/app.ts", minute=1))
    assert match(calls, "rtk bun run test 2>&1").repeats_failure


def test_an_install_touches_a_missing_module():
    failure = shell("pytest", "ModuleNotFoundError: No module named 'yaml'", exit_code=1, minute=0)
    assert match([failure], "pytest").repeats_failure
    installed = [failure, shell("pip install pyyaml", "Successfully installed", minute=2)]
    assert match(installed, "pytest").repeats_failure_changed_since


def test_the_latest_run_decides_a_later_success_resolves_an_earlier_failure():
    calls = [shell("make build", "error: x", exit_code=2, minute=0), shell("make build", "ok", minute=3)]
    result = match(calls, "make build")
    assert result.repeats_attempt and not result.repeats_failure and result.resolved == 1


def test_a_success_in_another_environment_does_not_resolve_the_plain_command():
    calls = [
        shell("pytest", "bash: pytest: command not found", exit_code=127, minute=0),
        shell("source .venv/bin/activate && pytest", "3 passed", minute=2),
    ]
    assert match(calls, "pytest").repeats_failure
    assert match(calls, "source .venv/bin/activate && pytest").repeats_attempt


def test_an_environment_assignment_is_part_of_the_route():
    calls = [
        shell("CI=1 npm test", "Tests: 2 failed, 8 passed", exit_code=1, minute=0),
        shell("npm test", "ok", minute=2),
    ]
    assert match(calls, "CI=1 npm test").repeats_failure
    assert match(calls, "npm test").repeats_attempt


def test_the_same_command_in_the_same_temporary_folder_is_comparable():
    calls = [shell("cd /tmp/build && ./configure", "error: missing libfoo", exit_code=1, minute=0)]
    assert match(calls, "cd /tmp/build && ./configure").repeats_failure


def test_nothing_comparable_is_the_only_novel():
    calls = [shell("npm run lint", LINT_FAILURE, exit_code=1, minute=0)]
    result = match(calls, "npm run typecheck")
    assert not (result.repeats_failure or result.repeats_failure_changed_since or result.repeats_attempt)


def stopped(command: str, *, minute: int) -> PriorToolCall:
    """A prior shell call that ran to no outcome: a dev server the agent stopped (Codex's Ctrl-C
    leaves no exit code), as the native provider types it."""
    return PriorToolCall(
        session_ref="session:" + "a" * 16,
        tool_name="exec_command",
        command=command,
        cwd=REPO,
        repository_cwd="",
        observed_at=T0 + timedelta(minutes=minute),
        output_excerpt="VITE v7.1.2  ready in 312 ms\n  ➜  Local:   http://127.0.0.1:5173/",
    )


def test_a_run_that_left_no_outcome_is_an_attempt_not_novel():
    # Replayed (fourth harvest): `npm run dev -- --host 127.0.0.1`, started and stopped twenty times,
    # was judged `novel` each time: nothing comparable had an outcome.
    calls = [stopped("npm run dev -- --host 127.0.0.1", minute=0)]
    result = match(calls, "npm run dev -- --host 127.0.0.1")
    assert result.repeats_attempt and not result.repeats_failure and result.command_items == {0}
    assert not match(calls, "npm run build").repeats_attempt


def test_a_run_without_outcome_never_hides_a_standing_failure():
    calls = [
        shell("npm run dev", "Error: Cannot find module 'vite'", exit_code=1, minute=0),
        stopped("npm run dev", minute=5),
    ]
    assert match(calls, "npm run dev").repeats_failure
    # Before a standing failure, a command that ran before (to no outcome) is nothing new.
    calls = [stopped("npm run dev", minute=0), shell("bun run lint", LINT_FAILURE, exit_code=1, minute=1)]
    assert match(calls, "npm run dev; bun run lint").repeats_failure


def test_a_call_that_never_ran_is_not_a_failure_to_repeat():
    rejected = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    calls = [shell("git push --force", rejected, exit_code=1, minute=0)]
    result = match(calls, "git push --force")
    assert not result.repeats_failure and not result.repeats_attempt


def test_a_search_with_no_match_is_an_answer_not_a_failure():
    calls = [shell("grep -rn TODO src", "", exit_code=1, minute=0)]
    result = match(calls, "grep -rn TODO src")
    assert not result.repeats_failure and result.repeats_attempt


def test_the_route_s_own_earlier_command_can_change_a_failure_s_cause():
    calls = [
        shell("git fetch origin", "fatal: repository 'https://github.com/..git/' not found", exit_code=128, minute=0)
    ]
    assert match(calls, "git fetch origin").repeats_failure
    fixed = match(calls, "git remote set-url origin https://github.com/o/r.git && git fetch origin")
    assert fixed.repeats_failure_changed_since or not fixed.repeats_failure


def test_repeating_the_failed_call_s_own_prefix_is_no_change():
    hook = "lint-staged failed\nhusky - pre-commit hook exited with code 1"
    calls = [shell("git add -A && git commit -m 'feat: x'", hook, exit_code=1, minute=0)]
    assert match(calls, "git add -A && git commit -m 'feat: x'").repeats_failure


def test_the_route_s_place_decides_what_is_comparable():
    calls = [
        shell(
            "make", "make: *** No targets specified and no makefile found.  Stop.", exit_code=2, minute=0, cwd="/tmp/x"
        )
    ]
    assert match(calls, "make", cwd="/tmp/x").repeats_failure
    assert not match(calls, "make", cwd=REPO).repeats_failure


def test_a_privileged_run_is_another_route_after_a_denial():
    # Replayed (fifth harvest): `sudo mkdir -p ../../docs` after `mkdir -p ../../docs` was denied.
    denied = "mkdir: cannot create directory '/srv/app/docs': Permission denied"
    calls = [shell("mkdir -p /srv/app/docs", denied, exit_code=1, minute=0)]
    assert not match(calls, "sudo mkdir -p /srv/app/docs").repeats_failure
    assert match(calls, "mkdir -p /srv/app/docs").repeats_failure


def test_another_program_name_is_another_route_after_it_was_not_found():
    # Replayed (fifth harvest): `python3 -m py_compile …` after `python: command not found`.
    calls = [shell("python -m py_compile src/cli.py", "bash: python: command not found", exit_code=127, minute=0)]
    assert not match(calls, "python3 -m py_compile src/cli.py").repeats_failure
    assert match(calls, "python -m py_compile src/cli.py").repeats_failure
    # A program the script runs is missing whichever manager runs the script.
    calls = [shell("npm run lint", "sh: 1: biome: command not found", exit_code=127, minute=0)]
    assert match(calls, "bun run lint").repeats_failure


def test_a_missing_path_above_the_repository_is_not_a_path_inside_it():
    # Replayed (fifth harvest): `cat docs/requirements.md` after `cat ../../docs/requirements.md` was missing.
    missing = "cat: ../../docs/requirements.md: No such file or directory"
    calls = [shell("cat ../../docs/requirements.md", missing, exit_code=1, minute=0)]
    assert not match(calls, "cat docs/requirements.md").repeats_failure
    assert match(calls, "cat ../../docs/requirements.md").repeats_failure
