"""What a replayed call really did, read from its recorded exit code, error flag and output.

The judge of every verdict reads only what the session recorded, through the one outcome rule
every provider uses (`providers.failure_causes.call_outcome`): never what the comparator decides.
"""

from obelisk_session_evidence.contracts.prior_calls import SHELL_TOOL_NAMES, CallOutcome, PriorToolCall
from obelisk_session_evidence.providers import failure_causes


def is_shell_call(call: PriorToolCall) -> bool:
    """The call ran a shell command (what replay decides on)."""
    return call.tool_name.lower() in SHELL_TOOL_NAMES and bool(call.command.strip())


def call_outcome(call: PriorToolCall) -> CallOutcome:
    """What the call did, from its recorded outcome alone."""
    return failure_causes.call_outcome(
        call.command, exit_code=call.exit_code, is_error=call.is_error, output=call.output_excerpt
    )


def command_key(command: str) -> str:
    """A command's identity for the naive rule: its text, whitespace aside."""
    return " ".join(command.split())
