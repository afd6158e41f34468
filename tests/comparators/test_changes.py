"""What counts as a change since a prior failure, on real calls quoted from /work/shared/corpus/real.

A repeat is a dead end only when nothing that could change its outcome happened since it failed:
an edit, a formatter, an install, in the same checkout (`comparators.changes`, `route_match`).
"""

from datetime import UTC, datetime, timedelta

import pytest

from obelisk_session_evidence.comparators.attribution import attribute
from obelisk_session_evidence.comparators.changes import changed_paths, is_project_config
from obelisk_session_evidence.comparators.commands import parse_command
from obelisk_session_evidence.comparators.history import prior_steps_from_calls
from obelisk_session_evidence.comparators.route_match import route_match
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall
from obelisk_session_evidence.contracts.situation import Revision, RouteProposal
from obelisk_session_evidence.contracts.thresholds import RouteThresholds

T0 = datetime(2026, 2, 12, 14, 0, tzinfo=UTC)
WT_4TE = "/home/USER/projects/spotter-worktrees/spotter-4te"
WT_DOV = "/home/USER/projects/spotter-worktrees/spotter-dov"

# claude-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl: the commit the pre-commit hook rejected
# (is_error true), then `mix format`, then the same commit (labelled: a re-run after a change).
COMMIT = 'git add -A && git commit -m "feat: add OTEL dependencies, bootstrap, and safe runtime defaults"'
HOOK_OUTPUT = "Pre-commit validation failed:\n\n[FORMAT] Code is not formatted.\nRun 'mix format' to fix."
# The same session: `mix test --seed 0 2>&1 | tail -50` exited 0 behind the pipe; its output's head:
MASKED_TEST = "mix test --seed 0 2>&1 | tail -50"
MASKED_OUTPUT = (
    "==> spotter\nCompiling 60 files (.ex)\nGenerated spotter app\nGetting extensions in current project...\n"
    "** (Mix) Could not start application opentelemetry: exited in: :opentelemetry_app.start(:normal, [])"
)


def call(
    command: str,
    output: str = "",
    *,
    minute: int,
    tool: str = "Bash",
    is_error: bool = False,
    cwd: str = WT_4TE,
    files: tuple[str, ...] = (),
) -> PriorToolCall:
    return PriorToolCall(
        session_ref="session:" + "b" * 16,
        tool_name=tool,
        command=command,
        is_error=is_error,
        cwd=cwd,
        repository_cwd="",
        observed_at=T0 + timedelta(minutes=minute),
        output_excerpt=output,
        files=list(files),
    )


def verdict(calls: list[PriorToolCall], *commands: str) -> tuple[bool, bool]:
    steps = prior_steps_from_calls(calls, [])
    roots = tuple(dict.fromkeys(c.cwd for c in calls if c.cwd))
    found = route_match(
        RouteProposal(action_kind="shell", commands=list(commands)),
        steps,
        thresholds=RouteThresholds(),
        revision=Revision(current="c0ffee1"),
        roots=roots,
    )
    return found.repeats_failure, found.repeats_attempt


def test_the_rejected_commit_again_with_nothing_changed_repeats_the_failure() -> None:
    assert verdict([call(COMMIT, HOOK_OUTPUT, minute=0, is_error=True)], COMMIT) == (True, False)


def test_the_commit_after_mix_format_is_not_a_repeat() -> None:
    calls = [call(COMMIT, HOOK_OUTPUT, minute=0, is_error=True), call("mix format", minute=3)]
    assert verdict(calls, COMMIT) == (False, False)


def test_the_commit_after_an_edit_anywhere_in_the_checkout_is_not_a_repeat() -> None:
    edit = call(
        f"{WT_4TE}/lib/spotter/telemetry/otel.ex",
        tool="Edit",
        minute=2,
        files=(f"{WT_4TE}/lib/spotter/telemetry/otel.ex",),
    )
    assert verdict([call(COMMIT, HOOK_OUTPUT, minute=0, is_error=True), edit], COMMIT) == (False, False)


def test_a_change_before_the_failure_does_not_supersede_it() -> None:
    calls = [call("mix format", minute=0), call(COMMIT, HOOK_OUTPUT, minute=3, is_error=True)]
    assert verdict(calls, COMMIT) == (True, False)


def test_an_edit_in_another_worktree_does_not_change_this_one() -> None:
    # claude-spotter: a session in spotter-dov edited session_live.ex while the a0y commit stood rejected.
    other = f"{WT_DOV}/lib/spotter_web/live/session_live.ex"
    edit = call(other, tool="Edit", minute=2, cwd=WT_DOV, files=(other,))
    assert verdict([call(COMMIT, HOOK_OUTPUT, minute=0, is_error=True), edit], COMMIT) == (True, False)


def test_the_git_add_of_a_failed_attempt_is_no_change() -> None:
    # The --no-verify commit failed too; the `git add -A` it ran first stages what the next attempt stages.
    calls = [
        call(COMMIT, HOOK_OUTPUT, minute=0, is_error=True),
        call(COMMIT.replace("commit", "commit --no-verify"), HOOK_OUTPUT, minute=1, is_error=True),
    ]
    assert verdict(calls, COMMIT)[0]


def test_a_masked_elixir_failure_is_a_failure_and_its_repeat_repeats_it() -> None:
    shapes = parse_command(MASKED_TEST).shapes
    found = attribute(shapes, MASKED_OUTPUT, failed=False, exit_code=None)
    assert found.failed and found.masked and shapes[found.failing].program == "mix test"
    assert verdict([call(MASKED_TEST, MASKED_OUTPUT, minute=0)], MASKED_TEST) == (True, False)


def test_a_masked_test_run_counting_failed_tests_failed_and_zero_failures_did_not() -> None:
    shapes = parse_command(MASKED_TEST).shapes
    assert attribute(shapes, "Finished in 4.0 seconds\n141 tests, 11 failures", failed=False, exit_code=None).failed
    assert not attribute(shapes, "14 doctests, 127 tests, 0 failures", failed=False, exit_code=None).failed


def test_the_masked_test_run_after_a_config_edit_is_not_a_repeat() -> None:
    # The same session edited config/runtime.exs after the failed run.
    path = f"{WT_4TE}/config/runtime.exs"
    calls = [call(MASKED_TEST, MASKED_OUTPUT, minute=0), call(path, tool="Edit", minute=4, files=(path,))]
    assert verdict(calls, MASKED_TEST) == (False, False)


@pytest.mark.parametrize(
    ("command", "changed"),
    [
        ("mix format", ()),
        ("git checkout -- lib/a.ex", ("lib/a.ex",)),
        ("mix deps.get", ()),
        ("npm install", ()),
        ("prettier --write src/app.ts", ("src/app.ts",)),
        ("prettier --check src/app.ts", None),
        ("git stash list", None),
        # another commit's tree: `origin/main` and `codex/x` are refs, not files (jdx/mise)
        ("git switch -C codex/x origin/main", ()),
        ("git reset --hard origin/main", ()),
        ("git merge origin/main", ()),
        ("git checkout -b fix origin/main", ()),
        ("git reset src/a.py", ("src/a.py",)),
        ("git status", None),
        ("mix test", None),
        ("ruff check src", None),
        ("ruff check --fix src", ()),
    ],
)
def test_changed_paths(command: str, changed: tuple[str, ...] | None) -> None:
    (shape,) = parse_command(command).shapes
    assert changed_paths(shape) == changed


def test_sed_in_place_changes_the_file_it_names() -> None:
    (shape,) = parse_command("sed -i 's/a/b/' lib/a.ex").shapes
    assert "lib/a.ex" in (changed_paths(shape) or ())


def test_project_configuration_files() -> None:
    assert is_project_config("config/test.exs") and is_project_config("web/tsconfig.json")
    assert not is_project_config("lib/spotter/app.ex")


def test_a_call_cancelled_because_a_sibling_errored_never_ran() -> None:
    # claude-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl: a parallel `npx vitest run` call
    # answered "<tool_use_error>Sibling tool call errored</tool_use_error>" (is_error true).
    vitest = "cd assets && npx vitest run"
    cancelled = call(vitest, "<tool_use_error>Sibling tool call errored</tool_use_error>", minute=0, is_error=True)
    (step,) = prior_steps_from_calls([cancelled], [])
    assert step.result == "unknown" and step.skipped == frozenset({0})
    assert verdict([cancelled], vitest) == (False, False)


def test_another_view_of_a_success_cut_by_a_filter_is_a_new_observation() -> None:
    # claude-spotter/ae4a77f8-…: `mix test --seed 0 2>&1 | head -100` showed only the compile lines;
    # the next run piped to `tail -50` to see the end. A failure repeats whatever the filter.
    head = call("mix test --seed 0 2>&1 | head -100", "==> file_system\nCompiling 7 files (.ex)", minute=0)
    assert verdict([head], MASKED_TEST) == (False, False)
    assert verdict([head], "mix test --seed 0 2>&1 | head -100") == (False, True)
    assert verdict([call("mix test --seed 0 2>&1", "14 doctests, 127 tests, 0 failures", minute=0)], MASKED_TEST) == (
        False,
        True,
    )
    assert verdict([call(MASKED_TEST.replace("50", "80"), MASKED_OUTPUT, minute=0)], MASKED_TEST) == (True, False)


def test_a_success_whose_output_fed_another_program_is_not_the_same_observation() -> None:
    # claude-codemie/session-3fe1b6bc.jsonl: `cat rollout.jsonl | python3 -m json.tool | head -100`
    # and `… | jq -c .` ran; the fix that worked read the file with `| grep -i "usage\|input_token"`.
    (cat, python) = parse_command("cat ~/.codex/sessions/r.jsonl | python3 -m json.tool 2>/dev/null | head -100").shapes
    assert cat.view == ("| json.tool",) and python.view == ("head -100",)
    fed = call("cat ~/.codex/sessions/r.jsonl | python3 -m json.tool 2>/dev/null | head -100", "{}", minute=0)
    assert verdict([fed], 'cat ~/.codex/sessions/r.jsonl | grep -i "usage\\|input_token"') == (False, False)


def test_a_masked_type_check_listing_compiler_errors_failed() -> None:
    # pi-badlogic/--Users-badlogic-workspaces-pi-mono--/*.jsonl: `npx tsgo --noEmit 2>&1 | head -80`
    # exited 0 behind the pipe and listed `error TS2304` diagnostics.
    tsgo = "cd /Users/badlogic/workspaces/pi-mono/packages/coding-agent && npx tsgo --noEmit 2>&1 | head -80"
    output = "src/modes/interactive/interactive-mode.ts(212,28): error TS2304: Cannot find name 'settingsManager'."
    found = attribute(parse_command(tsgo).shapes, output, failed=False, exit_code=None)
    assert found.failed and found.masked
    clean = attribute(parse_command(tsgo).shapes, "src/a.ts(3,1): warning: unused", failed=False, exit_code=None)
    assert not clean.failed
