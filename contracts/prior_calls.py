"""Private structured history for compare-route: the prior tool calls behind retrieved evidence.

The capped snippets are written for a prompt (short windows, newlines collapsed); a comparator
needs what actually ran and how it ended. A provider returns both: the RFC result, and beside it
these bounded records. They are private Turn context like snippets: never in the RFC result, the
receipt, a decision, Prefect's database or a log, and never cut by the prompt's token cap (they
never reach a prompt).
"""

from typing import Annotated, Final

from pydantic import AwareDatetime, Field, StringConstraints

from obelisk_session_evidence.contracts.base import ContractModel
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceResult, Ref

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


class ProviderAnswer(ContractModel):
    """What a provider returns for one lookup: the RFC result and the private structured calls."""

    result: HistoricalEvidenceResult
    """The RFC §5.2 private result (uncapped: cap-by-tokens bounds it for the prompt)."""
    prior_calls: Annotated[list[PriorToolCall], Field(max_length=MAX_PRIOR_CALLS)] = []
    """Structured prior tool calls for compare-route, best first; empty when the provider has
    none (then the comparator reads the snippets)."""
