"""compare-route's mechanisms on real calls: each excerpt is quoted from /work/shared/corpus/real.

The excerpts are the minimal part of one recorded call (its command, and the output lines that
matter), with the session file they come from. Prior calls are built as the provider hands them
over (`PriorToolCall`); proposals are what the agent could plausibly have run next.
"""

from datetime import UTC, datetime, timedelta

from obelisk_session_evidence.comparators.attribution import attribute
from obelisk_session_evidence.comparators.command_similarity import command_similarity
from obelisk_session_evidence.comparators.commands import parse_command
from obelisk_session_evidence.comparators.history import prior_steps, prior_steps_from_calls
from obelisk_session_evidence.comparators.route_match import route_match
from obelisk_session_evidence.comparators.shell import parse_script
from obelisk_session_evidence.contracts.evidence import EvidenceItem
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall
from obelisk_session_evidence.contracts.situation import Revision, RouteProposal
from obelisk_session_evidence.contracts.snippets import parse_tool_snippet, tool_snippet
from obelisk_session_evidence.contracts.thresholds import RouteThresholds

T0 = datetime(2026, 2, 11, 20, 0, tzinfo=UTC)
SPOTTER = "/home/USER/projects/spotter-worktrees/spotter-fum"
PI_MONO = "/Users/badlogic/workspaces/pi-mono"


def prior(
    command: str,
    output: str = "",
    *,
    exit_code: int | None = None,
    is_error: bool | None = None,
    cwd: str = SPOTTER,
    tool: str = "Bash",
    minute: int = 0,
) -> PriorToolCall:
    return PriorToolCall(
        session_ref="session:" + "a" * 16,
        tool_name=tool,
        command=command,
        exit_code=exit_code,
        is_error=is_error,
        cwd=cwd,
        repository_cwd="",
        observed_at=T0 + timedelta(minutes=minute),
        output_excerpt=output,
    )


def match(calls: list[PriorToolCall], *commands: str):
    steps = prior_steps_from_calls(calls, [])
    route = RouteProposal(action_kind="shell", commands=list(commands))
    roots = tuple(call.cwd for call in calls if call.cwd)
    return route_match(route, steps, thresholds=RouteThresholds(), revision=Revision(current="c0ffee1"), roots=roots)


# claude-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl: a heredoc commit the pre-commit hook
# rejected (is_error true, no exit code in the text).
HEREDOC_COMMIT = """git add .beads/issues.jsonl && git commit -m "$(cat <<'EOF'
feat: unified transcript visualization and debug parity (spotter-dov)

Extract shared transcript pipeline used by both SessionLive and SubagentLive:
- Shared AshComputer (TranscriptComputers) with reactive visible_lines and expand toggle

Co-Authored-By: Claude Opus 4.6 <[REDACTED_EMAIL]>
EOF
)\""""
HOOK_OUTPUT = "Pre-commit validation failed:\\n\\n[FORMAT] Code is not formatted.\\nRun 'mix format' to fix."


def test_heredoc_commit_message_is_read_as_its_subject_line() -> None:
    parsed = parse_command(HEREDOC_COMMIT)
    assert not parsed.fallback
    commit = parsed.shapes[1]
    assert commit.program == "git commit"
    assert commit.targets == ("feat: unified transcript visualization and debug parity (spotter-dov)",)


def test_heredoc_commit_repeated_with_another_body_repeats_the_failure() -> None:
    calls = [prior(HEREDOC_COMMIT, HOOK_OUTPUT, is_error=True)]
    rewritten = HEREDOC_COMMIT.replace("- Shared AshComputer", "- A shared AshComputer")
    assert match(calls, rewritten).repeats_failure
    assert match(calls, HEREDOC_COMMIT).repeats_failure
    # The hook rejected the commit, not `git add`: another subject is another commit.
    other = HEREDOC_COMMIT.replace("feat: unified", "fix: unified")
    assert not match(calls, other).repeats_failure


def test_heredoc_commit_in_a_collapsed_snippet_still_repeats() -> None:
    # A provider with no structured calls (the Obelisk CLI) hands over snippets: newlines
    # collapsed, and possibly cut by the window. The subject is still found by prefix.
    item = EvidenceItem(
        session_ref="session:" + "a" * 16,
        evidence_type="prior_failure",
        observed_at=T0,
        snippet=tool_snippet(HEREDOC_COMMIT, "error", HOOK_OUTPUT),
    )
    route = RouteProposal(action_kind="shell", commands=[HEREDOC_COMMIT])
    result = route_match(route, prior_steps([item]), thresholds=RouteThresholds(), revision=None)
    assert result.repeats_failure
    collapsed = parse_tool_snippet(item.snippet).command
    (proposed_commit, cut_commit) = (parse_command(HEREDOC_COMMIT).shapes[1], parse_command(collapsed[:150]).shapes[1])
    assert command_similarity(proposed_commit, cut_commit) == 100
    other = parse_command(HEREDOC_COMMIT.replace("feat: unified", "fix: unified")).shapes[1]
    assert command_similarity(other, cut_commit) == 0


# claude-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl: `-m "subject\n\nbody"` failed three
# times in a row with the same subject.
INLINE_MESSAGE_COMMIT = (
    'git add -A && git commit -m "feat: add OTEL dependencies, bootstrap, and safe runtime defaults\n\n'
    "- Add opentelemetry_api, opentelemetry, opentelemetry_exporter, \n"
    '  opentelemetry_bandit, opentelemetry_phoenix, opentelemetry_ash dependencies"'
)


def test_multi_line_commit_message_compared_by_subject() -> None:
    calls = [
        prior(
            INLINE_MESSAGE_COMMIT, "Pre-commit validation failed:\\n\\n[FORMAT] Code is not formatted.", is_error=True
        )
    ]
    shorter = 'git add -A && git commit -m "feat: add OTEL dependencies, bootstrap, and safe runtime defaults"'
    assert match(calls, shorter).repeats_failure


# claude-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl: `git add` of a gitignored path in a
# chain; the commit after it never ran.
IGNORED_ADD = """git add lib/spotter_web/live/session_live.ex lib/spotter_web/components/layouts/root.html.heex priv/static/assets/spotter.css && git commit -m "$(cat <<'EOF'
feat: rebuild SessionLive transcript panel with light theme and threaded rendering (spotter-fum.2)

Co-Authored-By: Claude Opus 4.6 <[REDACTED_EMAIL]>
EOF
)\""""
IGNORED_OUTPUT = """Exit code 1
The following paths are ignored by one of your .gitignore files:
priv/static/assets
hint: Use -f if you really want to add them."""


def test_failed_chain_is_attributed_to_git_add_and_the_commit_never_ran() -> None:
    shapes = parse_command(IGNORED_ADD).shapes
    attribution = attribute(shapes, IGNORED_OUTPUT, failed=True, exit_code=1)
    assert attribution.failing == 0 and attribution.skipped == frozenset({1})
    assert attribution.culprits == ("priv/static/assets",)


def test_same_ignored_path_repeats_the_failure_whatever_the_rest_of_the_chain() -> None:
    calls = [prior(IGNORED_ADD, IGNORED_OUTPUT, exit_code=1, is_error=True)]
    assert match(calls, "git add priv/static/assets/spotter.css lib/spotter_web/live/session_live.ex").repeats_failure
    assert match(calls, "git add priv/static/assets/spotter.css && git commit -m 'wip'").repeats_failure
    # The fix the hint names, and the paths without the ignored one, are other routes.
    assert not match(calls, "git add -f priv/static/assets/spotter.css").repeats_failure
    assert not match(calls, "git add lib/spotter_web/live/session_live.ex").repeats_failure
    # The commit never ran: proposing it alone repeats nothing.
    commit_only = IGNORED_ADD.split(" && ", 1)[1]
    assert not match(calls, commit_only).command_items


# claude-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl: a failed test run behind `cd <worktree> &&`.
CD_TEST = "cd /home/USER/projects/spotter-worktrees/spotter-fum && mix test test/spotter/services/transcript_renderer_test.exs 2>&1"
CD_TEST_OUTPUT = "Exit code 2\nRunning ExUnit with seed: 624694, max_cases: 32\n\n  1) test fixture integration"


def test_cd_prefix_sets_the_place_the_command_runs() -> None:
    calls = [prior(CD_TEST, CD_TEST_OUTPUT, exit_code=2, is_error=True)]
    # The checkout root, spelled or not, is the same place.
    assert match(calls, "mix test test/spotter/services/transcript_renderer_test.exs").repeats_failure
    assert match(calls, CD_TEST).repeats_failure
    # A temp folder is not.
    assert not match(calls, "cd /tmp && mix test test/spotter/services/transcript_renderer_test.exs").command_items
    (shape,) = parse_command("cd /tmp && mix test", roots=(SPOTTER,)).shapes
    assert shape.cwd == "<tmp>"


# claude-spotter/6c2214d7-b87e-4432-8e41-22ba294ea584/subagents/agent-afc096d.jsonl: a program
# that is not installed (exit 127); kimi-moonshotai/legacy-kimi-cli/large-100msgs/context.jsonl:
# the activate prefix the same kind of agent writes.
NOT_FOUND = "tree /home/USER/projects/spotter-worktrees/spotter-0rt/lib -L 3"
NOT_FOUND_OUTPUT = "Exit code 127\n(eval):1: command not found: tree"
ACTIVATE = (
    'source /Users/example/proj/example-project/.venv/bin/activate && echo "Virtual environment activated"'
    " && which python && python --version"
)


def test_activate_prefix_is_the_environment_of_what_follows() -> None:
    shapes = parse_command(ACTIVATE).shapes
    assert [shape.program for shape in shapes] == ["echo", "which", "python"]
    assert all(shape.runner == ("source:activate",) for shape in shapes)


def test_after_command_not_found_a_prefixed_form_is_another_route() -> None:
    calls = [
        prior(
            NOT_FOUND,
            NOT_FOUND_OUTPUT,
            exit_code=127,
            is_error=True,
            cwd="/home/USER/projects/spotter-worktrees/spotter-0rt",
        )
    ]
    step = prior_steps_from_calls(calls, [])[0]
    assert step.not_found and step.failing == 0
    assert match(calls, NOT_FOUND).repeats_failure
    activated = "source /Users/example/proj/example-project/.venv/bin/activate && " + NOT_FOUND
    assert not match(calls, activated).command_items
    assert not match(calls, "npx " + NOT_FOUND).command_items


# pi-badlogic/--Users-badlogic-workspaces-pi-mono--/before-compaction.jsonl: `| head` hid the exit
# code of a failed `npm run check` (the call is recorded as a success).
MASKED = "cd /Users/badlogic/workspaces/pi-mono && npm run check 2>&1 | head -50"
MASKED_OUTPUT = """> pi-monorepo@0.0.3 check
../coding-agent/src/main-new.ts(499,20): error TS2304: Cannot find name 'join'.
npm error Lifecycle script `check` failed with error:
npm error code 2"""


def test_pipe_masked_failure_is_read_from_the_output() -> None:
    calls = [prior(MASKED, MASKED_OUTPUT, exit_code=None, is_error=False, cwd=PI_MONO)]
    step = prior_steps_from_calls(calls, [])[0]
    assert step.result == "failed" and step.masked and step.failing == 0
    assert match(calls, "npm run check").repeats_failure
    # The same call with a clean output is a success: the mask alone says nothing.
    clean = [
        prior(
            MASKED,
            "> pi-monorepo@0.0.3 check\nChecked 236 files in 122ms. No fixes applied.",
            is_error=False,
            cwd=PI_MONO,
        )
    ]
    assert prior_steps_from_calls(clean, [])[0].result == "succeeded"
    assert match(clean, MASKED).repeats_attempt
    # It showed only what its filter let through: the bare run is another observation.
    assert not match(clean, "npm run check").repeats_attempt


# claude-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl: a multi-line `python3 -c` that failed
# with a traceback (the longest inline scripts of the corpus are ~400 characters).
INLINE = """head -c 500 test/fixtures/transcripts/subagent.jsonl | python3 -c "
import sys, json
for line in sys.stdin:
    line = line.strip()
    if not line: continue
    obj = json.loads(line)
    if obj.get('type') in ('assistant', 'user'):
        print(f\\"type={obj['type']} has_agent_id={'agent_id' in obj}\\")
" 2>&1"""
INLINE_OUTPUT = """Exit code 1
Traceback (most recent call last):
  File "<string>", line 6, in <module>
json.decoder.JSONDecodeError: Unterminated string starting at: line 1 column 256 (char 255)"""


def test_inline_python_is_compared_by_its_imports_and_calls() -> None:
    shapes = parse_command(INLINE).shapes
    assert shapes[1].program == "python -c"
    assert {"import:json", "import:sys", "call:json.loads", "call:obj.get"} <= set(shapes[1].targets)
    calls = [prior(INLINE, INLINE_OUTPUT, exit_code=1, is_error=True)]
    assert prior_steps_from_calls(calls, [])[0].failing == 1
    relabelled = INLINE.replace("type={obj['type']}", "kind={obj['type']}").replace("    ", "  ")
    assert match(calls, relabelled).repeats_failure
    # claude-spotter/8463c716…jsonl, the next call: it reads the file itself, with `re` — new.
    other = """python3 -c "
import json, re
pattern = re.compile(r'agent-[a-zA-Z0-9]+')
with open('test/fixtures/transcripts/subagent.jsonl') as f:
    for i, line in enumerate(f):
        obj = json.loads(line)
\""""
    assert not match(calls, other).command_items


def test_inline_python_collapsed_into_a_snippet_reads_the_same() -> None:
    collapsed = parse_tool_snippet(tool_snippet(INLINE, "exit 1", INLINE_OUTPUT)).command
    assert "\n" not in collapsed
    assert parse_command(collapsed).shapes[1] == parse_command(INLINE).shapes[1]


def test_every_real_command_parses_without_raising_and_fallbacks_are_counted() -> None:
    from bench._shell_corpus import real_shell_calls

    commands = [call.command for call in real_shell_calls()]
    assert len(commands) > 900
    fallbacks = sum(parse_script(command).fallback for command in commands)
    assert fallbacks <= len(commands) // 100  # the grammar reads at least 99% of them


def test_unreadable_command_falls_back_to_tokens_and_is_counted() -> None:
    parsed = parse_command("echo 'unbalanced && pytest tests/test_a.py")
    assert parsed.fallback
    assert [shape.program for shape in parsed.shapes] == ["echo", "pytest"]
    result = match([prior("pytest tests/test_a.py", "1 failed", exit_code=1)], "echo 'unbalanced")
    assert result.token_fallbacks == 1


# claude-spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl: `|| echo` hid a failed `ls`.
OR_ECHO = 'ls /home/USER/projects/spotter-worktrees/spotter-a0y/priv/scripts/ 2>&1 || echo "directory does not exist"'
OR_ECHO_OUTPUT = (
    "ls: cannot access '/home/USER/projects/spotter-worktrees/spotter-a0y/priv/scripts/': No such file or directory\n"
    "directory does not exist"
)


def test_or_echo_masked_failure_names_the_missing_path() -> None:
    calls = [prior(OR_ECHO, OR_ECHO_OUTPUT, is_error=False, cwd="/home/USER/projects/spotter-worktrees/spotter-a0y")]
    step = prior_steps_from_calls(calls, [])[0]
    assert step.result == "failed" and step.masked and step.failing == 0
    assert step.culprits == ("/home/USER/projects/spotter-worktrees/spotter-a0y/priv/scripts/",)
    assert match(calls, "ls priv/scripts").repeats_failure


def test_same_unknown_flag_repeats_the_failure_behind_a_pipe() -> None:
    # The example (not in the corpus): `cmd --yes | head` printed the error, exited 0.
    calls = [prior("npx shadcn add button --yes | head", "error: unknown option '--yes'", is_error=False)]
    step = prior_steps_from_calls(calls, [])[0]
    assert step.masked and step.culprits == ("--yes",)
    assert match(calls, "npx shadcn add card --yes").repeats_failure
    assert not match(calls, "npx shadcn add card").repeats_failure
    assert not match(calls, "npx shadcn add card --yes --overwrite").repeats_failure
