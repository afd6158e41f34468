"""Rules found by replaying real histories (issue "Cause-aware verdicts"): each output and command
below is shaped on a call whose recorded outcome contradicted the verdict before the rule."""

from typing import get_args

import pytest

from obelisk_session_evidence.comparators.attribution import attribute
from obelisk_session_evidence.comparators.cause_changes import RULES
from obelisk_session_evidence.comparators.changes import reformats
from obelisk_session_evidence.comparators.commands import parse_command
from obelisk_session_evidence.contracts.prior_calls import FailureCauseKind
from obelisk_session_evidence.providers.failure_causes import call_outcome
from tests.comparators.test_cause_aware import REPO, edit, match, shell

BIOME_REFUSED = (
    "$ biome check --error-on-warnings\n at frontend/src/components/Summary.tsx:72:9 lint/correctness/noUnusedVariables"
    "  FIXABLE  ━━━\n  × This variable activeId is unused.\n    70 │ const p = providers.find((p) => p.name);"
)
BIOME_REFUSED_UNNAMED = (
    "$ biome check --error-on-warnings\n  × Formatter would have printed the following content:\n {/* x */}"
)
BUN_TESTS_FAILED = (
    "src/api/routes/evaluation.test.ts:\n(fail) EvaluationRoutes > POST /api/evaluate [0.93ms]\n 1 fail\n"
)
MISSING_MODULE_IN_CLONE = (
    "# Unhandled error between tests\nerror: Cannot find module '@testing-library/react' from "
    f"'{REPO}/tmp/clones/eval-eqYk1k/src/app/__tests__/review-list.test.tsx'\n 1 fail\n"
)


def test_a_masked_pipeline_showing_bun_failing_tests_failed():
    # `grep "…\|…"` holds its `|` inside quotes: the pipeline still ends in a display filter.
    command = 'bun run test 2>&1 | grep -A 20 "FAIL\\|✗\\|fail.*prompt-generator"'
    output = "(fail) prompt-generator > suggestion prompt includes decision criteria [0.54ms]\n"
    assert call_outcome(command, exit_code=0, is_error=False, output=output) == "failed"


def test_a_fixer_whose_output_a_filter_cut_still_rewrote_the_files():
    calls = [
        shell("bun run lint 2>&1", BIOME_REFUSED, exit_code=1, minute=0),
        shell("bun run lint:fix 2>&1 | tail -5", "Checked 275 files in 153ms. Fixed 4 files.", minute=1),
    ]
    result = match(calls, "bun run lint 2>&1 | tail -5")
    assert result.repeats_failure_changed_since and not result.repeats_failure


def test_a_fixer_that_reports_what_it_could_not_fix_still_rewrote_files():
    fixer = "Exit code 1\n$ biome check --write\n at src/a.ts:3:10 lint/suspicious/noEmptyBlockStatements ━━"
    calls = [
        shell("bun run lint", BIOME_REFUSED_UNNAMED, exit_code=1, minute=0),
        shell("bun run lint:fix", fixer, exit_code=1, minute=1),
    ]
    assert match(calls, "bun run lint").repeats_failure_changed_since


def test_a_formatter_run_does_not_supersede_failing_tests():
    calls = [
        shell("bun test src/ 2>&1 | tail -5", " 1365 pass\n 228 fail\n", minute=0),
        shell("bun run lint:fix", "$ biome check --write\nChecked 292 files. Fixed 3 files.", minute=1),
    ]
    assert match(calls, "bun test src/ 2>&1 | tail -5").repeats_failure


def test_a_file_an_output_names_at_a_line_and_column_is_the_file():
    calls = [
        shell("bun run lint 2>&1", BIOME_REFUSED, exit_code=1, minute=0),
        edit(f"{REPO}/frontend/src/components/Summary.tsx", minute=1),
    ]
    assert match(calls, "bun run lint 2>&1").repeats_failure_changed_since


def test_code_in_an_output_is_not_a_file_it_names():
    # `p.name` and `{/*` are code the formatter quoted: with no file named, any edit may be the fix.
    calls = [
        shell("bun run lint 2>&1", BIOME_REFUSED_UNNAMED + "\n p.name", exit_code=1, minute=0),
        edit(f"{REPO}/frontend/src/components/RemediateTab.tsx", minute=1),
    ]
    assert match(calls, "bun run lint 2>&1").repeats_failure_changed_since


def test_removing_the_folder_that_holds_the_failing_file_touches_its_cause():
    calls = [
        shell("bun run test 2>&1", MISSING_MODULE_IN_CLONE, exit_code=1, minute=0),
        shell(f"rm -rf {REPO}/tmp/clones/eval-eqYk1k", minute=1),
    ]
    assert match(calls, "bun run test 2>&1").repeats_failure_changed_since


def test_a_folder_an_output_names_is_not_the_file_that_imports_a_missing_module():
    output = "$ bun test src/\n" + MISSING_MODULE_IN_CLONE
    calls = [shell("bun run test 2>&1", output, exit_code=1, minute=0), edit(f"{REPO}/src/docs-finder.ts", minute=1)]
    assert match(calls, "bun run test 2>&1").repeats_failure


def test_a_manifest_edit_does_not_change_another_programs_options():
    usage = "error: unrecognized subcommand 'bun'\n\nUsage: rtk [OPTIONS] <COMMAND>"
    calls = [shell("rtk bun run test", usage, exit_code=2, minute=0), edit(f"{REPO}/package.json", minute=1)]
    assert match(calls, "rtk bun run test").repeats_failure


def test_a_manifest_edit_can_add_a_missing_script():
    calls = [
        shell("npm run typecheck", 'npm error Missing script: "typecheck"', exit_code=1, minute=0),
        edit(f"{REPO}/package.json", minute=1),
    ]
    assert match(calls, "npm run typecheck").repeats_failure_changed_since


def test_a_linter_configuration_change_touches_a_hook_failure():
    hook = "Build........Passed\nLint.........Failed\n- hook id: lint\nerror: some errors were emitted"
    calls = [
        shell("git push -u origin chore/x", hook, exit_code=1, minute=0),
        edit(f"{REPO}/biome.json", minute=1),
    ]
    assert match(calls, "git push -u origin chore/x").repeats_failure_changed_since


def test_scripts_named_for_rewriting_are_fixers_and_checks_are_not():
    def shape(command: str):
        return parse_command(command, roots=(REPO,)).shapes[0]

    assert reformats(shape("npm run lint:fix")) and reformats(shape("make fmt")) and reformats(shape("prettier -w ."))
    assert reformats(shape("yarn lint --fix")) and reformats(shape("bunx biome check --write src/a.ts"))
    assert not reformats(shape("npm run format:check")) and not reformats(shape("prettier --check ."))
    assert not reformats(shape("sed -i s/a/b/ src/a.py"))


def test_a_tools_file_under_a_hidden_folder_is_not_the_repositorys_file_of_that_name():
    missing = "ls: cannot access 'scripts/dispatch.sh': No such file or directory"
    calls = [shell("ls scripts/dispatch.sh", missing, exit_code=2, minute=0)]
    assert not match(calls, "ls /home/dev/.agents/skills/workmux/scripts/dispatch.sh").repeats_failure
    assert match(calls, f"ls {REPO}/scripts/dispatch.sh").repeats_failure


def test_a_failing_output_filter_is_repeated_only_by_the_same_filter():
    url = "'https://api.github.com/repos/o/r/issues?state=open'"
    jq_error = (
        "jq: error: syntax error, unexpected INVALID_CHARACTER (Unix shell quoting issues?) at <top-level>\n"
        "curl: (23) Failure writing output to destination"
    )
    failing = f"curl -sSL {url} | jq -r '.[] | \"\\(.number)\\t\\(.title)\"'"
    calls = [shell(failing, jq_error, exit_code=3, minute=0)]
    assert not match(calls, f"curl -sSL {url} | jq -r '.[] | [.number, .title] | @tsv'").repeats_failure
    assert match(calls, failing).repeats_failure


def test_every_failure_cause_has_a_rule_for_the_changes_that_touch_it():
    assert set(RULES) == set(get_args(FailureCauseKind))


def test_a_build_writes_what_a_workspace_test_imports():
    failing = "apps/cli/test/eval.integration.test.ts:\n239 |     const result = await run()\nerror: expect(received)\n 1 fail"
    calls = [
        shell("bun test apps/cli/test/eval.integration.test.ts", failing, exit_code=1, minute=0),
        shell("bun run build", "$ bun --filter @agentv/core build", minute=1),
    ]
    assert match(calls, "bun test apps/cli/test/eval.integration.test.ts").repeats_failure_changed_since
    calls[1] = shell("tsc --noEmit", "", minute=1)  # a type check writes nothing
    assert match(calls, "bun test apps/cli/test/eval.integration.test.ts").repeats_failure


def test_biome_sorting_imports_is_a_style_refusal_its_fixer_touches():
    refused = (
        "$ biome check .\n./apps/cli/src/grade/index.ts organizeImports ━━━━\n\n  × Import statements could be sorted:"
    )
    calls = [
        shell("bun run lint", refused, exit_code=1, minute=0),
        shell(
            "bunx biome check --write apps/cli/src/grade/index.ts", "Checked 1 file in 64ms. Fixed 1 file.", minute=1
        ),
    ]
    assert match(calls, "bun run lint").repeats_failure_changed_since


def test_a_check_that_passed_in_another_environment_acts_on_nothing_it_names():
    failing = "FAILED tests/test_auth.py::test_login - assert 401 == 200\n1 failed"
    calls = [
        shell("pytest tests/test_auth.py -x", failing, exit_code=1, minute=0),
        shell("uv run pytest tests/test_auth.py", "1 passed", minute=1),
    ]
    assert match(calls, "pytest tests/test_auth.py -x").repeats_failure


WORKSPACE_MODULE_MISSING = (
    "bun test v1.3.5 (1e86cebd)\n\npackages/plugin-codegen/src/index.test.ts:\n\n# Unhandled error between tests\n"
    f"error: Cannot find module '@chkit/core' from '{REPO}/packages/plugin-codegen/src/index.ts'\n 0 pass\n 1 fail\n"
)


def test_building_a_workspace_package_touches_a_missing_module():
    # The test ran before its workspace dependency was built; the build wrote the outputs it imports.
    calls = [
        shell(
            "bun test packages/plugin-codegen/src/index.test.ts 2>&1", WORKSPACE_MODULE_MISSING, exit_code=1, minute=0
        ),
        shell("bun run --filter '@chkit/core' build 2>&1 | tail -5", "Exited with code 0", minute=1),
    ]
    result = match(calls, "bun test packages/plugin-codegen/src/index.test.ts 2>&1")
    assert result.repeats_failure_changed_since and not result.repeats_failure


def test_a_missing_module_stands_after_a_reading():
    calls = [
        shell("bun test packages/plugin-codegen/src/index.test.ts", WORKSPACE_MODULE_MISSING, exit_code=1, minute=0),
        shell(f"ls {REPO}/node_modules/@chkit/", "codegen", minute=1),
    ]
    assert match(calls, "bun test packages/plugin-codegen/src/index.test.ts").repeats_failure


def test_a_package_managers_options_before_the_script_keep_it_a_script_run():
    filtered = parse_command("bun run --filter '@chkit/codegen' build 2>&1").shapes[0]
    pnpm = parse_command("pnpm -F web run build").shapes[0]
    assert (filtered.program, filtered.flags, filtered.targets) == ("npm run build", ("--filter",), ("@chkit/codegen",))
    assert (pnpm.program, pnpm.targets) == ("npm run build", ("web",))
    assert parse_command("pnpm -C packages/web lint").shapes[0].cwd == "packages/web"


def test_every_package_managers_dependency_update_is_an_install():
    calls = [
        shell(
            "doppler run -- bun run deploy 2>&1", "Exit code 1\nerror: wrangler 3.1 is too old", exit_code=1, minute=0
        ),
        shell("bun update wrangler --latest 2>&1", "installed wrangler@4.2.0", minute=1),
    ]
    assert match(calls, "doppler run -- bun run deploy 2>&1").repeats_failure_changed_since


def test_a_missing_file_stands_only_for_a_command_given_that_file():
    missing = "cat: node_modules/@changesets/cli/package.json: No such file or directory"
    calls = [shell("cat node_modules/@changesets/cli/package.json", missing, exit_code=1, minute=0)]
    assert match(calls, "cat node_modules/@changesets/cli/package.json").repeats_failure
    assert match(calls, "cat @changesets/cli/package.json").repeats_failure  # written from another folder
    assert not match(calls, "cat packages/cli/package.json").repeats_failure
    assert not match(calls, "cat package.json").repeats_failure  # a bare name is any folder's


def test_a_missing_path_named_from_the_top_is_that_path_for_a_route_run_there():
    # ivanma9/ship: `sed … .specify/memory/constitution.md` failed at the top of the repository; the
    # agent then read `ship/.specify/memory/constitution.md`, another path, from the same place.
    missing = "sed: .specify/memory/constitution.md: No such file or directory"
    calls = [shell("sed -n '1,260p' .specify/memory/constitution.md", missing, exit_code=1, minute=0)]
    assert not match(calls, "sed -n '1,260p' ship/.specify/memory/constitution.md", cwd=REPO).repeats_failure
    # a route that does not say where it runs may have written the same path from another folder
    assert match(calls, "sed -n '1,260p' ship/.specify/memory/constitution.md").repeats_failure
    assert match(calls, "sed -n '1,260p' .specify/memory/constitution.md", cwd=REPO).repeats_failure


def test_an_option_the_failure_refused_stands_only_for_a_command_passing_it():
    # A `cat` wrapper that knows no `-A`: the same reading without it is another route.
    refused = "error: unexpected argument '-A' found\n\nUsage: rtk read [OPTIONS] <FILE>"
    calls = [shell(f"cat -A {REPO}/src/api/routes.ts | sed -n '610,620p'", refused, exit_code=2, minute=0)]
    assert not match(calls, f"cat {REPO}/src/api/routes.ts | sed -n '610,620p'").repeats_failure
    assert match(calls, f"cat -A {REPO}/src/api/routes.ts | sed -n '610,620p'").repeats_failure


def test_a_failure_is_the_command_whose_subcommand_the_output_names():
    # `git fetch` ran; git refused the pull: the failure is the pull's, not the first git command's.
    shapes = parse_command("git fetch origin && git pull --rebase 2>&1").shapes
    output = "error: cannot pull with rebase: You have unstaged changes.\nerror: Please commit or stash them."
    assert attribute(shapes, output, failed=True, exit_code=128).failing == 1


def test_a_list_fails_with_its_last_command_when_both_could_print_the_error():
    # jdx/mise: on a detached HEAD `git branch --show-current` prints nothing and exits 0; the
    # `fatal:` and the exit code are the `git rev-parse … @{u}` after the `;`.
    shapes = parse_command("git branch --show-current; git rev-parse --abbrev-ref --symbolic-full-name @{u}").shapes
    output = "fatal: HEAD does not point to a branch\n"
    assert attribute(shapes, output, failed=True, exit_code=128).failing == 1
    calls = [shell("git branch --show-current; git rev-parse --abbrev-ref @{u}", output, exit_code=128, minute=0)]
    assert not match(calls, "git branch --show-current").repeats_failure


def test_under_set_e_the_first_command_that_fails_ends_the_list():
    parsed = parse_command("set -euo pipefail; git fetch origin; git status")
    assert parsed.errexit
    output = "fatal: 'origin' does not appear to be a git repository\n"
    assert attribute(parsed.shapes, output, failed=True, exit_code=128, errexit=True).failing == 0


def test_a_missing_absolute_path_is_not_the_folder_sharing_its_ending():
    # MandavkarPranjal/prsui: `apps/registry/registry/new-york` was missing; `registry/new-york`
    # at the top of the same checkout is another folder, listed fine before and after.
    missing = f"ls: cannot access '{REPO}/apps/registry/registry/new-york': No such file or directory\n"
    calls = [shell(f"ls {REPO}/apps/registry/registry/new-york", missing, exit_code=2, minute=0)]
    assert not match(calls, f"ls {REPO}/registry/new-york/").repeats_failure
    assert match(calls, f"ls {REPO}/apps/registry/registry/new-york/").repeats_failure


def test_a_lookup_that_found_no_such_program_is_no_failure_to_repeat():
    # jdx/mise: `command -v shellcheck` exited 1 (not installed); a later `if command -v …` asks again.
    calls = [shell("command -v shellcheck", "", exit_code=1, minute=0)]
    probe = "if command -v shellcheck >/dev/null; then shellcheck x.sh; else echo 'shellcheck not installed'; fi"
    assert not match(calls, probe).repeats_failure


PUBLICKEY = "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.\n"


def test_an_authentication_failure_stands_until_credentials_or_the_remote_change():
    # chikachow/cyspbot: `git fetch` over SSH was refused until the remote was set to HTTPS with
    # `gh` as its credential helper; edits and time in between changed nothing.
    refused = [
        shell("git fetch origin main", PUBLICKEY, exit_code=128, minute=0),
        edit(f"{REPO}/src/a.ts", minute=1),
        shell("ls -la ~/.ssh", "total 40\n", minute=2),
    ]
    assert match(refused, "git fetch origin main").repeats_failure
    relogged = [*refused, shell("git remote set-url origin https://github.com/o/r.git", minute=3)]
    assert match(relogged, "git fetch origin main").repeats_failure_changed_since


def test_gh_logged_out_stands_until_gh_itself_logs_in():
    # chikachow/cyspbot: git's credential helper was set and `gh auth status` still failed; then `gh auth login`.
    logged_out = (
        "github.com\n  X Failed to log in to github.com account u (default)\n  - The token in default is invalid."
    )
    calls = [
        shell("gh auth status", logged_out, exit_code=1, minute=0),
        shell("git config --local credential.https://github.com.helper '!gh auth git-credential'", minute=1),
        shell("gh auth setup-git --help", "This command configures `git` to use GitHub CLI", minute=1),  # a reading
    ]
    assert match(calls, "gh auth status").repeats_failure
    calls.append(
        shell("gh auth login -h github.com --git-protocol https --web", "! First copy your one-time code", minute=2)
    )
    assert match(calls, "gh auth status").repeats_failure_changed_since


UNSTAGED = (
    "Exit code 128\nerror: cannot pull with rebase: You have unstaged changes.\nerror: Please commit or stash them."
)


def test_changes_in_the_way_stand_after_an_edit_and_a_reading():
    calls = [
        shell("git fetch origin && git pull --rebase 2>&1", UNSTAGED, exit_code=128, minute=0),
        edit(f"{REPO}/docs/prs/POLY-39.md", minute=1),
        shell("git status", "On branch main\nChanges not staged for commit:", minute=2),
    ]
    assert match(calls, "git fetch origin && git pull --rebase 2>&1").repeats_failure


def test_stashing_the_changes_in_the_way_touches_them():
    calls = [
        shell("git fetch origin && git pull --rebase 2>&1", UNSTAGED, exit_code=128, minute=0),
        shell("git stash", "Saved working directory and index state WIP on main: af7b1c2 x", minute=1),
    ]
    result = match(calls, "git fetch origin && git pull --rebase 2>&1")
    assert result.repeats_failure_changed_since and not result.repeats_failure


def test_a_file_edited_after_the_stash_is_a_change_in_the_way_again():
    stashed_then_edited = [
        shell("git fetch origin && git pull --rebase 2>&1", UNSTAGED, exit_code=128, minute=0),
        shell("git stash", "Saved working directory and index state WIP on main: af7b1c2 x", minute=1),
        edit(f"{REPO}/src/lib/queue.ts", minute=2),
    ]
    assert match(stashed_then_edited, "git fetch origin && git pull --rebase 2>&1").repeats_failure
    edited_then_committed = [
        shell("git fetch origin && git pull --rebase 2>&1", UNSTAGED, exit_code=128, minute=0),
        edit(f"{REPO}/src/lib/queue.ts", minute=1),
        shell("git commit -am 'queue'", "[main 1a2b3c4] queue\n 1 file changed", minute=2),
    ]
    assert match(edited_then_committed, "git fetch origin && git pull --rebase 2>&1").repeats_failure_changed_since
    # The route's own stash runs after every edit of the history.
    assert match(stashed_then_edited, "git stash && git pull --rebase 2>&1").repeats_failure_changed_since


def test_a_path_the_output_names_is_read_from_the_folder_the_failing_command_ran_in():
    # Run in packages/cli, git looked for packages/cli/packages/cli/package.json; the same words run
    # at the top name the file that exists: another path, not the failure's.
    in_package = shell(
        "git add packages/cli/package.json",
        "Exit code 128\nfatal: pathspec 'packages/cli/package.json' did not match any files",
        exit_code=128,
        minute=0,
        cwd=f"{REPO}/packages/cli",
    ).model_copy(update={"repository_cwd": "packages/cli"})
    for cwd, repeats in ((REPO, False), (f"{REPO}/packages/cli", True)):
        assert match([in_package], "git add packages/cli/package.json", cwd=cwd).repeats_failure is repeats


CHECKS_FAILING = "Exit code 1\nlint\tfail\t7m20s\thttps://github.com/jdx/mise/actions/runs/28556222127/job/1\t\n"


def test_failed_checks_stand_until_new_commits_are_pushed():
    # jdx/mise: `gh pr checks` polled again and again while a check failed; only a push runs them again.
    polled = [shell("gh pr checks 10705", CHECKS_FAILING, exit_code=1, minute=0), edit(f"{REPO}/src/a.rs", minute=5)]
    assert match(polled, "gh pr checks 10705").repeats_failure
    pushed = [*polled, shell("git commit -am fix && git push", "[main 1a2b3c4] fix", minute=6)]
    result = match(pushed, "gh pr checks 10705")
    assert result.repeats_failure_changed_since and not result.repeats_failure


HERE_DOCUMENT_REFUSED = (
    "Exit code 1\n(eval):1: can't create temp file for here document: operation not permitted\n"
    "Aborting commit due to empty commit message."
)


def test_a_refused_here_document_stands_only_for_a_command_reading_one():
    # A sandbox refused the shell's temp file: the same message given with `-m` is another route.
    written = "git add docs/report.md && git commit -m \"$(cat <<'EOF'\nvalidate(POLY-39): PASSED\n\nCo-Authored-By: A\nEOF\n)\""
    calls = [shell(written, HERE_DOCUMENT_REFUSED, exit_code=1, minute=0)]
    assert not match(
        calls, 'git add docs/report.md && git commit -m "validate(POLY-39): PASSED" -m "Co-Authored-By: A"'
    ).repeats_failure
    assert match(calls, written).repeats_failure


def test_a_workspace_package_name_is_not_a_file_a_failure_names():
    # turbo prefixes every line with the package (`@chkit/cli:test:`): with no file named, a
    # whole-tree check is changed by any edit in the tree.
    turbo = (
        '@chkit/cli:test: (fail) drift > reports [1.2ms]\n@chkit/cli:test: error: script "test" exited with code 1\n'
    )
    calls = [
        shell("bun verify 2>&1", "Exit code 1\n" + turbo, exit_code=1, minute=0),
        edit(f"{REPO}/packages/core/src/flags.ts", minute=1),
    ]
    assert match(calls, "bun verify 2>&1").repeats_failure_changed_since


def test_an_unknown_flag_is_the_failure_of_the_command_that_passed_it():
    shapes = parse_command("bd where && bd status --short").shapes
    output = "/work/app/.beads\n  prefix: av\nError: unknown flag: --short\nUsage:\n  bd status [flags]"
    assert attribute(shapes, output, failed=True, exit_code=1).failing == 1


GIT_WRAPPER_REFUSED_C = (
    "Exit code 2\nerror: unexpected argument '-C' found\n\nUsage: rtk git [OPTIONS] <COMMAND>\n\n"
    "For more information, try '--help'."
)


def test_an_option_naming_the_folder_is_an_argument_a_failure_can_be_about():
    # A git wrapper refused `git -C DIR status`; a plain `git status` in that folder does not pass -C.
    calls = [shell(f"git -C {REPO} status", GIT_WRAPPER_REFUSED_C, exit_code=2, minute=0)]
    assert not match(calls, "git status").repeats_failure
    assert match(calls, f"git -C {REPO} status").repeats_failure


# blackgirlbytes/planetfall-seed-signalkit: `entire status --no-pager` was refused for the flag it
# did not know, between plain `entire status` runs that passed. The flag is cosmetic, so both
# commands have one identity; it is still an argument only the failing one passed.
ENTIRE_REFUSED_NO_PAGER = "Exit code 1\nError: unknown flag: --no-pager\nUsage:\n  entire status [flags]\n"


def test_a_cosmetic_flag_a_usage_error_names_is_an_argument_the_command_passed():
    status = "● Enabled · manual-commit · branch main\n"
    calls = [
        shell("entire status", status, exit_code=0, minute=0),
        shell("entire status --no-pager", ENTIRE_REFUSED_NO_PAGER, exit_code=1, minute=1),
        shell("entire status", status, exit_code=0, minute=2),
    ]
    assert not match(calls, "entire status").repeats_failure
    # the later plain run passed without the flag: it resolves nothing about the flag
    assert match(calls, "entire status --no-pager").repeats_failure


# planetfall: `vercel inspect … --format json` was refused for its option; `vercel ls … --format=json`,
# another subcommand, then listed the deployments as JSON.
VERCEL_REFUSED_FORMAT = "Vercel CLI 54.14.2 (Node.js 22.20.0)\nError: unknown or unexpected option: --format\n"


def test_an_option_one_subcommand_refused_says_nothing_of_another():
    calls = [shell("npx vercel inspect planetfall --format json", VERCEL_REFUSED_FORMAT, exit_code=1, minute=0)]
    assert not match(calls, "npx vercel@latest ls planetfall --format=json").repeats_failure
    assert match(calls, "npx vercel inspect planetfall --format=json").repeats_failure


# planetfall: `find … | sort | sed 's#^#/##'` failed in its last filter (BSD sed refused the
# expression; a pipeline's status is its last command's). The output names no failure word.
SED_REFUSED = "Exit code 1\nsed: 1: \"s#^#/##\": bad flag in substitute command: '#'\n"


def test_a_filter_opening_the_output_of_a_failed_pipeline_is_what_failed():
    failing = f"find {REPO}/skills -maxdepth 2 -type f | sort | sed 's#^#/##'"
    calls = [shell(failing, SED_REFUSED, exit_code=1, minute=0)]
    assert not match(calls, f"find {REPO}/skills -maxdepth 2 -type f | sort").repeats_failure
    assert match(calls, failing).repeats_failure


# jdx/mise: zsh refused `gh api …/trees/main?recursive=1` (its unquoted `?` matched no file), and
# the same request quoted ran; planetfall: `magick public/x.gif[0]` likewise. The command never ran.
@pytest.mark.parametrize(
    ("unquoted", "quoted", "pattern"),
    [
        (
            "gh api repos/aquaproj/aqua-registry/git/trees/main?recursive=1 --jq .tree",
            "gh api 'repos/aquaproj/aqua-registry/git/trees/main?recursive=1' --jq .tree",
            "repos/aquaproj/aqua-registry/git/trees/main?recursive=1",
        ),
        (
            "magick public/images/marvin.gif[0] -format '%[pixel:p{0,0}]' info:",
            "magick 'public/images/marvin.gif[0]' -format '%[pixel:p{0,0}]' info:",
            "public/images/marvin.gif[0]",
        ),
    ],
)
def test_a_pattern_the_shell_matched_to_nothing_is_another_route_quoted(unquoted, quoted, pattern):
    calls = [shell(unquoted, f"Exit code 1\nzsh:1: no matches found: {pattern}\n", exit_code=1, minute=0)]
    assert not match(calls, quoted).repeats_failure
    assert match(calls, unquoted).repeats_failure


# planetfall: zsh refused the unquoted URL, and `node -e` then parsed the empty input it was fed and
# printed its own error; the refusal is the cause, so the quoted request is another route.
def test_what_a_pipeline_printed_of_a_refused_command_s_empty_output_is_no_cause_of_its_own():
    url = "http://127.0.0.1:3000/api/leaderboard?type=winners"
    reader = (
        "node -e \"let s='';process.stdin.on('data',d=>s+=d);process.stdin.on('end',()=>console.log(JSON.parse(s)))\""
    )
    output = (
        f"zsh:1: no matches found: {url}\nundefined:1\n\nSyntaxError: Unexpected end of JSON input\n    at JSON.parse"
    )
    calls = [shell(f"curl -sS {url} | {reader}", output, exit_code=1, minute=0)]
    assert not match(calls, f"curl -sS '{url}' | {reader}").repeats_failure
    assert match(calls, f"curl -sS {url} | {reader}").repeats_failure


# planetfall: a skill's script was run by its path and the shell refused it (no execute bit); run
# through python3 it is another route.
def test_a_file_the_shell_could_not_execute_is_another_route_through_an_interpreter():
    script = "/Users/dev/.codex/skills/skill-creator/scripts/init_skill.py"
    refused = f"Exit code 126\nzsh:1: permission denied: {script}\n"
    calls = [shell(f"{script} trail --path .codex/skills", refused, exit_code=126, minute=0)]
    assert not match(calls, f"python3 {script} trail --path .codex/skills").repeats_failure
    assert match(calls, f"{script} trail --path .codex/skills").repeats_failure


# `bun run test | grep -A 20 …` showed the failing test's name, not its file; the file the output
# names is a passing test's log.
PROMPT_GENERATOR_FAILED = (
    "(fail) prompt-generator > suggestion prompt - target agent routing > includes decision criteria [0.54ms]\n"
    "\nsrc/api/routes/evaluation.test.ts:\n[EvaluationRoutes] Error in POST /api/evaluate: 179 | "
    "expect(response.status).toBe(202);\n"
)


def test_an_edit_of_the_module_a_failing_test_is_named_after_touches_its_failure():
    command = 'bun run test 2>&1 | grep -A 20 "FAIL\\|✗\\|fail.*prompt-generator"'
    calls = [
        shell(command, PROMPT_GENERATOR_FAILED, minute=0),
        edit(f"{REPO}/src/shared/remediation/prompt-generator.ts", minute=1),
    ]
    result = match(calls, "bun run test 2>&1 | tail -10")
    assert result.repeats_failure_changed_since and not result.repeats_failure


def test_an_edit_of_another_module_leaves_a_failing_test_standing():
    command = 'bun run test 2>&1 | grep -A 20 "FAIL\\|✗\\|fail.*prompt-generator"'
    calls = [shell(command, PROMPT_GENERATOR_FAILED, minute=0), edit(f"{REPO}/src/shared/report.ts", minute=1)]
    assert match(calls, "bun run test 2>&1 | tail -10").repeats_failure


SCRIPT_DENIED = (
    "Exit code 1\n[joke test-1] Failed to install gh CLI: cp: cannot create regular file '/usr/local/bin/gh': "
    "Permission denied\n"
)


def test_an_edit_of_the_script_a_command_runs_touches_any_failure_of_it():
    # The script tried to install into /usr/local/bin; the agent edited it to install elsewhere.
    calls = [
        shell("npx tsx src/index.ts", SCRIPT_DENIED, exit_code=1, minute=0),
        edit(f"{REPO}/src/index.ts", minute=1),
    ]
    result = match(calls, "npx tsx src/index.ts")
    assert result.repeats_failure_changed_since and not result.repeats_failure


def test_an_edit_of_another_file_leaves_a_scripts_denial_standing():
    calls = [shell("npx tsx src/index.ts", SCRIPT_DENIED, exit_code=1, minute=0), edit(f"{REPO}/README.md", minute=1)]
    assert match(calls, "npx tsx src/index.ts").repeats_failure
