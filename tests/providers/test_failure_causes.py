"""The one outcome rule and the failure-cause catalogue every provider uses (docs/failure-causes.md)."""

import pytest

from obelisk_session_evidence.providers.failure_causes import call_outcome, failure_cause

SKIPPED_FOR_USER = (
    "Skipped due to queued user message. Do not count this skipped result as completed work or verification."
)
"""Oh My Pi's result of a call it skipped (`details.executed: false`; preloopdev/preloop)."""

OUTCOMES = [
    # (command, exit code, error flag, output, outcome)
    # Reading a failed run's log: the failures shown are that run's, and the filter hid the reader's status.
    ("gh run view 22082614200 --log-failed 2>/dev/null | tail -60", 0, False, "test\t(fail) a > b\n 1 fail", "unknown"),
    ("gh api repos/o/r/actions/jobs/6399/logs 2>/dev/null | strings | tail", 0, False, "error: x\n1 fail", "unknown"),
    ("GH_PAGER= kubectl logs pod/api | tail -20", 0, False, "FATAL: 1 failed", "unknown"),
    ("gh run view 22082614200 --log-failed", 0, False, "test\t(fail) a > b\n 1 fail", "succeeded"),
    ("gh run view 22082614200 --log-failed", 1, True, "failed to get run log: log not found", "failed"),
    # A CI status reading exits non-zero while the run is pending (8): no outcome yet. A failed check stands.
    (
        "cd /w && gh pr checks 7 --watch",
        8,
        True,
        "Refreshing checks status every 10 seconds.\n\nci\tpending\t0",
        "unknown",
    ),
    (
        "gh run view 28556 --job 84663 --log",
        1,
        True,
        "run 28556 is still in progress; logs will be available",
        "unknown",
    ),
    ("gh pr checks 7", 1, True, "lint\tfail\t7m20s\thttps://github.com/o/r/actions/runs/1\t\nci\tpending\t0", "failed"),
    ("gh pr checks 10705", 1, True, 'no pull requests found for branch "main"', "failed"),
    ("gh pr checks 7 && git push", 8, True, "ci\tpending\t0\thttps://github.com/o/r/actions/runs/1\t\n", "failed"),
    ("pytest -x", 1, True, "FAILED tests/test_auth.py::test_login", "failed"),
    ("pytest -x", 0, False, "3 passed", "succeeded"),
    ("pytest -x", None, None, "", "unknown"),
    ("ls", None, True, "The user doesn't want to proceed with this tool use. The tool use was rejected.", "not_run"),
    ("make", None, True, "[Request interrupted by user for tool use]", "not_run"),
    ("npm test", None, True, "<tool_use_error>Sibling tool call errored</tool_use_error>", "not_run"),
    ("npm test", 1, True, "Operation aborted", "not_run"),
    ("git show e901fa0 --stat", None, True, SKIPPED_FOR_USER, "not_run"),
    # Older Codex, when the model's arguments did not parse (JaydenXsoe/ocodex): the tool never ran.
    ("cargo check", None, True, "failed to parse function arguments: missing field `command`", "not_run"),
    # A lookup of a name that finds none answered (jdx/mise: `command -v shellcheck`).
    ("command -v shellcheck", 1, True, "", "no_match"),
    ("which cargo-deny", 1, True, "cargo-deny not found", "no_match"),
    ("command ls missing", 1, True, "ls: missing: No such file or directory", "failed"),
    ("grep -rn token src", 1, True, "", "no_match"),
    ("git log | grep fix", 1, True, "", "no_match"),
    ("grep -rn token missing/", 2, True, "grep: missing/: No such file or directory", "failed"),
    # zsh ran nothing when a pattern matched no file (jdx/mise, Claude Code's `(eval)`): no search answered,
    # and the filter after it read nothing.
    ("rg -n name plugins/*/package.json", 1, True, "zsh:1: no matches found: plugins/*/package.json\n", "failed"),
    ("ls target/deps/mise-* 2>/dev/null | head", 0, False, "zsh:1: no matches found: target/deps/mise-*\n", "failed"),
    ("ls -lt ~/.m/*jsonl 2>/dev/null | head -10", 0, False, "(eval):1: no matches found: /Users/u/.m/*jsonl", "failed"),
    ("grep -rn x src | head", 0, False, "src/a.py:3: # zsh:1: no matches found: in a comment", "succeeded"),
    ("bun run test 2>&1 | tail -5", 0, False, " 1231 pass\n 1 fail\nRan 1232 tests", "failed"),
    ("bun run lint 2>&1 | tail -3", 0, False, "Found 2 errors.\ncheck ━━━", "failed"),
    ("npx tsc 2>&1 | head", 0, False, "src/a.ts(3,4): error TS2345: Argument of type", "failed"),
    ("bun run test 2>&1 | tail -5", 0, False, " 1232 pass\n 0 fail\nRan 1232 tests", "succeeded"),
    ("bun run test 2>&1 | head -20", 0, False, "bun test v1.3.5\n\nsrc/a.test.ts:", "unknown"),
    ("cat src/a.ts | head -20", 0, False, "import x from 'y'", "succeeded"),
    ("rtk bun run test 2>&1 | tail -30", 0, False, "error: unrecognized subcommand 'bun'", "failed"),
    ("bun run test 2>&1 | tail -30", 0, False, "error: Database connection failed\n      at test", "unknown"),
]


@pytest.mark.parametrize(("command", "exit_code", "is_error", "output", "expected"), OUTCOMES)
def test_call_outcome(command, exit_code, is_error, output, expected):
    assert call_outcome(command, exit_code=exit_code, is_error=is_error, output=output) == expected


CAUSES = [
    # (command, exit code, output, kind, a subject it must name)
    # zsh refused the pattern; what the rest of the pipeline printed of nothing is no cause (planetfall)
    (
        "curl -sS http://127.0.0.1:3000/api/x?type=w | node -e 'JSON.parse(s)'",
        1,
        "zsh:1: no matches found: http://127.0.0.1:3000/api/x?type=w\nSyntaxError: Unexpected end of JSON input",
        "path_not_found",
        "http://127.0.0.1:3000/api/x?type=w",
    ),
    (
        "cargo deny check advisories",
        101,
        "error: no such command: `deny`\n\nhelp: a command with a similar name exists: `bench`",
        "command_not_found",
        "deny",
    ),
    ("git lg", 1, "git: 'lg' is not a git command. See 'git --help'.", "command_not_found", "lg"),
    # Older Codex could not start a program run without a shell (`["rg", …]`; JaydenXsoe/ocodex).
    ("rg -n docs -l", None, "execution error: No such file or directory (os error 2)", "command_not_found", "rg"),
    (
        "gh pr checks 10705",
        1,
        "lint\tfail\t7m20s\thttps://github.com/o/r/runs/1\t\nci\tpass\t3m\t",
        "checks_failed",
        "lint",
    ),
    (
        "rtk bun run test",
        2,
        "error: unrecognized subcommand 'bun'\n\nUsage: rtk [OPTIONS] <COMMAND>",
        "usage_error",
        "bun",
    ),
    ("cat -A f", 1, "cat: illegal option -- A\nusage: cat [-belnstuv] [file ...]", "usage_error", "A"),
    ("ps -ef", 1, "zsh:1: command not found: rtk", "command_not_found", "rtk"),
    ("mix phx.server", 127, "bash: mix: command not found", "command_not_found", "mix"),
    ("foo", 127, "", "command_not_found", "foo"),
    ("npm run lnt", 1, 'npm error Missing script: "lnt"', "usage_error", "lnt"),
    ("python -c 'import yaml'", 1, "ModuleNotFoundError: No module named 'yaml'", "module_not_found", "yaml"),
    (
        "bun test",
        1,
        "error: Cannot find module '@octokit/rest' from 'src/x.test.ts'",
        "module_not_found",
        "@octokit/rest",
    ),
    (
        "git add dist",
        1,
        "The following paths are ignored by one of your .gitignore files:\ndist",
        "git_ignored",
        "dist",
    ),
    ("git push", 1, " ! [rejected]        main -> main (fetch first)", "git_rejected", None),
    ("git commit -m x", 1, "nothing to commit, working tree clean", "nothing_to_commit", None),
    (
        "git fetch origin && git pull --rebase",
        128,
        "error: cannot pull with rebase: You have unstaged changes.\nerror: Please commit or stash them.",
        "uncommitted_changes",
        None,
    ),
    (
        "git checkout main",
        1,
        "Your local changes to the following files would be overwritten by checkout:\n\tsrc/a.ts",
        "uncommitted_changes",
        None,
    ),
    (
        "git commit -m \"$(cat <<'EOF'\nfix\nEOF\n)\"",
        1,
        "(eval):1: can't create temp file for here document: operation not permitted",
        "here_document_refused",
        None,
    ),
    ("pytest -m slow", 5, "collected 12 items / 12 deselected / 0 selected", "no_tests_collected", None),
    ("pytest", 5, "no tests ran in 0.01s", "no_tests_collected", None),
    (
        "curl localhost:4000",
        7,
        "curl: (7) Failed to connect to localhost port 4000: Connection refused",
        "connection_refused",
        None,
    ),
    # pg_isready while no server listens yet (ivanma9/ship, before `brew services restart postgresql@16`)
    ("pg_isready -h localhost", 2, "localhost:5432 - no response\n", "connection_refused", "localhost:5432"),
    (
        "npx tsc",
        2,
        "src/shared/engine.ts(218,25): error TS7006: Parameter 'p' implicitly has an 'any' type.",
        "compile_error",
        "src/shared/engine.ts",
    ),
    (
        "bun run lint",
        1,
        "at src/a.test.ts format ━━━\n  × Formatter would have printed the following content:",
        "format_or_lint_refused",
        "src/a.test.ts",
    ),
    (
        "mix test",
        2,
        "  1) test mount renders (SpotterWeb.ReviewTest)\n     test/spotter_web/review_test.exs:12",
        "test_failed",
        "test/spotter_web/review_test.exs",
    ),
    ("ls x/", 1, "ls: cannot access 'x/': No such file or directory", "path_not_found", "x/"),
    ("ls ~/a*.jsonl", 1, "(eval):1: no matches found: /home/u/a*.jsonl", "path_not_found", "/home/u/a*.jsonl"),
    ("cat src", 1, "cat: src: Is a directory", "is_a_directory", None),
    ("ps -ef", 1, "zsh:1: operation not permitted: ps", "permission_denied", None),
    ("/u/s/init.py a", 126, "zsh:1: permission denied: /u/s/init.py", "permission_denied", "/u/s/init.py"),
    ("./run.sh", 126, "bash: line 1: ./run.sh: Permission denied", "permission_denied", "./run.sh"),
    (
        "git fetch origin main",
        128,
        "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.",
        "auth_failed",
        None,
    ),
    (
        "gh auth status",
        1,
        "github.com\n  X Failed to log in to github.com account u (default)\n  - The token in default is invalid.",
        "auth_failed",
        None,
    ),
    ("gh pr view 1", 1, "HTTP 401: Bad credentials (https://api.github.com/graphql)", "auth_failed", None),
    ("git push", 128, "fatal: The current branch x has no upstream branch.", "tool_error", None),
    ("./run.sh", 3, "something odd happened", "unknown", None),
]


@pytest.mark.parametrize(("command", "exit_code", "output", "kind", "subject"), CAUSES)
def test_failure_cause(command, exit_code, output, kind, subject):
    cause = failure_cause(command, exit_code=exit_code, output=output)
    assert cause.kind == kind
    if subject is not None:
        assert subject in cause.subjects


FAILING_TESTS = [
    (
        "bun test",
        "(fail) prompt-generator > builds the prompt [0.54ms]\n 1 fail",
        "prompt-generator > builds the prompt",
    ),
    (
        "npx vitest run",
        " × parseFlags > throws for unknown flags 12ms\n Tests  1 failed",
        "parseFlags > throws for unknown flags",
    ),
    (
        "npx jest",
        "  ● EvaluationRoutes › POST /api/evaluate\n\nTests: 1 failed, 9 passed",
        "EvaluationRoutes › POST /api/evaluate",
    ),
    ("go test ./...", "--- FAIL: TestParseFoo (0.00s)\nFAIL\tpkg/x\t0.1s", "TestParseFoo"),
    ("cargo test", "test parser::tests::parses ... FAILED\n\nfailures:", "parser::tests::parses"),
]


@pytest.mark.parametrize(("command", "output", "test"), FAILING_TESTS)
def test_a_failing_test_is_named_as_its_runner_named_it(command, output, test):
    cause = failure_cause(command, exit_code=1, output=output)
    assert (cause.kind, cause.tests) == ("test_failed", [test])


def test_only_a_test_failure_names_failing_tests():
    output = "src/a.ts(3,1): error TS2304: Cannot find name 'x'.\n × x > y"
    assert failure_cause("npx tsc", exit_code=2, output=output).tests == []


def test_a_cause_is_bounded_whatever_the_output():
    output = "\n".join(f"src/file_{n}.ts(1,1): error TS1000: bad" for n in range(500))
    cause = failure_cause("npx tsc", exit_code=2, output=output)
    assert cause.kind == "compile_error" and len(cause.subjects) <= 16
    many = "\n".join(f"(fail) suite > case {n} [1.00ms]" for n in range(500))
    assert len(failure_cause("bun test", exit_code=1, output=many).tests) <= 16


def test_only_a_missing_path_is_a_path_not_found():
    # `does not exist` is a path's only when a path or a file is what is missing.
    dialyzer = "No :ignore_warnings opt specified in mix.exs and default does not exist.\nfoo.ex:3: no local return"
    assert failure_cause("mix dialyzer", exit_code=2, output=dialyzer).kind != "path_not_found"
    assert (
        failure_cause("git push origin :x", exit_code=1, output="error: remote ref does not exist").kind == "tool_error"
    )
    missing = "Doppler Error: The fallback file does not exist"
    assert failure_cause("doppler run -- bun test", exit_code=1, output=missing).kind == "path_not_found"
