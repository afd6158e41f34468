"""Private structured history for compare-route: the prior tool calls behind retrieved evidence.

The capped snippets are written for a prompt (short windows, newlines collapsed); a comparator
needs what actually ran and how it ended. A provider returns both: the RFC result, and beside it
these bounded records. They are private Turn context like snippets: never in the RFC result, the
receipt, a decision, Prefect's database or a log, and never cut by the prompt's token cap (they
never reach a prompt).
"""

from typing import Annotated, Final, Literal

from pydantic import AwareDatetime, Field, StringConstraints

from obelisk_session_evidence.contracts.base import ContractModel
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceResult, Ref
from obelisk_session_evidence.contracts.revision_checks import RevisionCheck

MAX_PRIOR_CALLS: Final = 64
"""Most prior tool calls one answer carries (newest and most relevant first)."""
MAX_CALL_COMMAND_CHARS: Final = 16 * 1024
"""Longest command text kept; longer ones are cut and marked `command_truncated`."""
MAX_CALL_OUTPUT_CHARS: Final = 2048
"""Longest output excerpt kept; longer ones are cut and marked `output_truncated`."""
SHELL_TOOL_NAMES: Final[frozenset[str]] = frozenset(
    {
        "bash",
        "shell",
        "exec_command",
        "shell_command",
        "local_shell",
        "container.exec",
        "run_shell_command",
        "execute_command",
        "run_terminal_cmd",
    }
)
"""Lower-cased tool names whose `command` is a shell command (other tools' is their input)."""
MAX_CALL_FILES: Final = 64
MAX_CALL_PATH_CHARS: Final = 1024
MAX_CAUSE_SUBJECTS: Final = 16
MAX_CAUSE_SUBJECT_CHARS: Final = 400

CallOutcome = Literal["failed", "succeeded", "no_match", "not_run", "unknown"]
"""What a call did: exited non-zero or flagged an error (`failed`, also a pipeline whose display
filter hid a failure its output shows); ran and succeeded; a search that found nothing
(`no_match`: an answer, not an error); rejected, cancelled or interrupted before it ran
(`not_run`); or no outcome was recorded (`unknown`)."""
FailureCauseKind = Literal[
    "command_not_found",
    "usage_error",
    "module_not_found",
    "wrong_architecture",
    "git_ignored",
    "git_rejected",
    "nothing_to_commit",
    "uncommitted_changes",
    "merge_conflict",
    "hook_failed",
    "no_tests_collected",
    "permission_denied",
    "auth_failed",
    "here_document_refused",
    "connection_refused",
    "compile_error",
    "format_or_lint_refused",
    "test_failed",
    "timeout",
    "path_not_found",
    "is_a_directory",
    "checks_failed",
    "tool_error",
    "unknown",
]
"""Why a call failed (`docs/failure-causes.md`): the catalogue `providers.failure_causes` types."""


class FailureCause(ContractModel):
    """Why a call failed, and what the cause names: a program, a module, paths, an option. Private."""

    kind: FailureCauseKind
    """The cause's type."""
    subjects: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=MAX_CAUSE_SUBJECT_CHARS)]],
        Field(max_length=MAX_CAUSE_SUBJECTS),
    ] = []
    """What it names, as the output wrote it (the missing program, the refused files, ...)."""
    tests: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=MAX_CAUSE_SUBJECT_CHARS)]],
        Field(max_length=MAX_CAUSE_SUBJECTS),
    ] = []
    """For failing tests: the names a test runner gave the failing ones (`describe > test`,
    `TestParse`, `parser::tests::parses`), as it wrote them."""


class PriorToolCall(ContractModel):
    """One earlier tool call of the same scope, as the session file recorded it. Private."""

    session_ref: Ref
    """Opaque reference to the session (the same digest the RFC items use)."""
    message_ref: Ref | None = None
    """Opaque reference to the tool call."""
    tool_name: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    """The agent's tool name as recorded (`Bash`, `exec_command`, `Read`, ...)."""
    command: Annotated[str, StringConstraints(max_length=MAX_CALL_COMMAND_CHARS)]
    """The full command text, or a file tool's target; newlines kept. Private."""
    command_truncated: bool = False
    """True when `command` was cut at `MAX_CALL_COMMAND_CHARS`."""
    exit_code: int | None = None
    """The exit code, when the session recorded one (Codex: from its `Process exited` text)."""
    is_error: bool | None = None
    """The agent's own error flag, when recorded."""
    escalated: bool | None = None
    """It asked to run outside the agent's sandbox (Claude Code's `dangerouslyDisableSandbox`,
    Codex's `sandbox_permissions: "require_escalated"`); None when the provider does not say."""
    cwd: Annotated[str, StringConstraints(max_length=MAX_CALL_PATH_CHARS)] | None = None
    """The working directory the call ran in, as recorded. Private."""
    repository_cwd: Annotated[str, StringConstraints(max_length=MAX_CALL_PATH_CHARS)] | None = None
    """`cwd` relative to the repository (`""` for its root or a worktree's root); None when the
    call ran outside the repository or the cwd is unknown."""
    observed_at: AwareDatetime | None = None
    """When the call was recorded."""
    revision_ref: Annotated[str, StringConstraints(max_length=80)] | None = None
    """The repository revision the session ran at, when known."""
    files: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=MAX_CALL_PATH_CHARS)]],
        Field(max_length=MAX_CALL_FILES),
    ] = []
    """Files the call named or touched, repository-relative when they lie inside it."""
    output_excerpt: Annotated[str, StringConstraints(max_length=MAX_CALL_OUTPUT_CHARS)] = ""
    """A bounded excerpt of the call's output (its head and tail when long). Private."""
    output_truncated: bool = False
    """True when the output was longer than the excerpt."""
    outcome: CallOutcome | None = None
    """What the call did (`providers.failure_causes.call_outcome`); None when the provider did not say."""
    cause: FailureCause | None = None
    """Why it failed, for a `failed` call; None otherwise."""


class ProviderAnswer(ContractModel):
    """What a provider returns for one lookup: the RFC result and the private structured calls."""

    result: HistoricalEvidenceResult
    """The RFC §5.2 private result (uncapped: cap-by-tokens bounds it for the prompt)."""
    prior_calls: Annotated[list[PriorToolCall], Field(max_length=MAX_PRIOR_CALLS)] = []
    """Structured prior tool calls for compare-route, best first; empty when the provider has
    none (then the comparator reads the snippets)."""
    revision_checks: Annotated[list[RevisionCheck], Field(max_length=MAX_PRIOR_CALLS)] = []
    """Where git places each distinct revision the prior calls recorded, against the request's
    revision (`providers.git_revisions`); empty when none was checked."""
