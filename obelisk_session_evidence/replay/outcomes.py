"""What a replayed call really did, read from its recorded exit code, error flag and output.

The judge of every verdict, so it reads only what the session recorded and nothing the
comparator decides: a call failed when it exited non-zero or the agent flagged an error, unless
it never ran (the user rejected it, a sibling call's failure cancelled it, a turn was aborted)
or it is a search that found nothing (grep's exit 1 is an answer, not an error).
"""

import re
from typing import Final

from obelisk_session_evidence.contracts.prior_calls import SHELL_TOOL_NAMES, PriorToolCall
from obelisk_session_evidence.contracts.replay import CallOutcome

NOT_RUN: Final = re.compile(
    r"\A\s*(?:"
    r"The user doesn't want to (?:proceed|take this action)"  # Claude Code: the user rejected the call
    r"|\[Request interrupted by user"  # Claude Code: interrupted before it ended
    r"|(?:<tool_use_error>)?(?:Sibling tool call errored|Cancelled: parallel tool call)"  # a sibling failed
    r"|(?:Operation )?aborted\b"  # pi, Codex: the turn was aborted
    r"|(?:User )?rejected (?:tool use|by user)"  # DSH, Codex approvals
    r"|exec command rejected"
    r")",
    re.IGNORECASE,
)
"""Outputs of calls that never ran to an outcome of their own (anchored at the output's start)."""
SEARCH_PROGRAMS: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep"})
"""Programs whose exit status 1 means "no match" (2 and above are their errors)."""
_SEGMENTS: Final = re.compile(r"\|\|?|&&|;|\n")
_ASSIGNMENT: Final = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*=\S*\Z")


def is_shell_call(call: PriorToolCall) -> bool:
    """The call ran a shell command (what replay decides on)."""
    return call.tool_name.lower() in SHELL_TOOL_NAMES and bool(call.command.strip())


def call_outcome(call: PriorToolCall) -> CallOutcome:
    """What the call did, from its recorded outcome alone."""
    if NOT_RUN.search(call.output_excerpt[:400]):
        return "not_run"
    failed = bool(call.is_error) or (call.exit_code is not None and call.exit_code != 0)
    if failed:
        return "no_match" if call.exit_code == 1 and _last_program(call.command) in SEARCH_PROGRAMS else "failed"
    if call.exit_code is None and call.is_error is None:
        return "unknown"
    return "succeeded"


def command_key(command: str) -> str:
    """A command's identity for the naive rule: its text, whitespace aside."""
    return " ".join(command.split())


def _last_program(command: str) -> str:
    """The program of the command's last segment (a pipeline's exit status is its last command's)."""
    segments = [part.strip() for part in _SEGMENTS.split(command) if part.strip()]
    if not segments:
        return ""
    words = [word for word in segments[-1].split() if not _ASSIGNMENT.match(word)]
    if words[:1] == ["git"] and words[1:2] == ["grep"]:
        return "git grep"
    return words[0].rsplit("/", 1)[-1] if words else ""
