"""How a tool call is written into a snippet, and how comparators read it back.

A tool snippet is three parts separated by newlines:

    $ <command on one line>
    <outcome line>
    <output excerpt, any number of lines>

The outcome line is exactly one of (grammar, case-sensitive, no surrounding space):

    exit <n>    the command ran and exited with integer status n (`exit 0` is a success)
    ok          the tool completed without an error and reported no exit status
    error       the tool reported an error and no exit status (timeout, rejected call, ...)
    unknown     the outcome was not recorded (the call was cut off or never answered)

File tools (Read, Edit, Write, apply_patch, ...) are written the same way, their command being
the tool name followed by the paths it touched: `$ Edit src/parser.py`.

`cap_by_tokens` may cut a snippet and mark the cut with `…`; a cut inside the first line leaves
the command marked as truncated and the outcome `unknown`.
"""

import re
from typing import Final, Literal

from obelisk_session_evidence.contracts.base import ContractModel

COMMAND_PREFIX: Final = "$ "
"""A tool snippet's first line is `$ <command>`; the outcome and output excerpt follow."""
ELLIPSIS: Final = "…"
"""The mark `cap_by_tokens` leaves where it cut a snippet."""

OutcomeKind = Literal["exit", "ok", "error", "unknown"]
_OUTCOME_WORDS: Final[dict[str, OutcomeKind]] = {"ok": "ok", "error": "error", "unknown": "unknown"}
"""The outcomes a line names by word; `exit` is named with its code."""
_OUTCOME_LINE: Final = re.compile(rf"^(?:exit (?P<code>-?\d{{1,6}})|(?P<word>{'|'.join(_OUTCOME_WORDS)}))$")


class ToolSnippet(ContractModel):
    """A tool snippet read back: the command, its outcome and the output excerpt."""

    command: str
    """The command, whitespace collapsed to single spaces."""
    command_truncated: bool
    """True when the command was cut (an `…` at its start, or at the snippet's end)."""
    outcome: OutcomeKind
    """The outcome line's kind."""
    exit_code: int | None
    """The exit status for `exit <n>`, else None."""
    output_excerpt: str
    """The output excerpt (may be empty)."""

    @property
    def failed(self) -> bool | None:
        """True for a nonzero exit or `error`, False for `exit 0` or `ok`, None when unknown."""
        if self.outcome == "exit":
            return self.exit_code != 0
        if self.outcome == "unknown":
            return None
        return self.outcome == "error"


def outcome_line(*, exit_code: int | None, is_error: bool | None) -> str:
    """The canonical outcome line for a call's exit status and error flag."""
    if exit_code is not None:
        return f"exit {exit_code}"
    if is_error is None:
        return "unknown"
    return "error" if is_error else "ok"


def canonical_outcome_line(outcome: str) -> str:
    """`outcome` in the grammar above; any other text is written as `unknown`, never copied."""
    text = " ".join(outcome.split()).lower()
    match = _OUTCOME_LINE.match(text)
    if match is None:
        return "unknown"
    if match["code"] is not None:
        return f"exit {int(match['code'])}"
    return match["word"]


def tool_snippet(command: str, outcome: str, output_excerpt: str) -> str:
    """`$ command`, then the canonical outcome line (e.g. `exit 1`), then the output excerpt."""
    one_line = " ".join(command.split())
    return f"{COMMAND_PREFIX}{one_line}\n{canonical_outcome_line(outcome)}\n{output_excerpt}".rstrip("\n")


def parse_tool_snippet(snippet: str) -> ToolSnippet | None:
    """The tool call a snippet records, or None when the snippet is not a tool call."""
    lines = snippet.split("\n", 2)
    first = lines[0]
    if not first.startswith(COMMAND_PREFIX):
        return None
    command = first[len(COMMAND_PREFIX) :]
    cut_before = command.startswith(ELLIPSIS)
    cut_after = len(lines) == 1 and command.endswith(ELLIPSIS)
    truncated = cut_before or cut_after
    command = command.lstrip(ELLIPSIS) if cut_before else command
    command = command.rstrip(ELLIPSIS) if cut_after else command
    command = command.strip()
    if not command:
        return None
    outcome_text = lines[1] if len(lines) > 1 else "unknown"
    match = _OUTCOME_LINE.match(outcome_text)
    if match is None:
        # A cut outcome line (`exi…`) or a foreign writer: the outcome is not known.
        outcome: OutcomeKind = "unknown"
        exit_code = None
    elif match["code"] is not None:
        outcome, exit_code = "exit", int(match["code"])
    else:
        outcome, exit_code = _OUTCOME_WORDS[match["word"]], None
    return ToolSnippet(
        command=command,
        command_truncated=truncated,
        outcome=outcome,
        exit_code=exit_code,
        output_excerpt=lines[2] if len(lines) > 2 else "",
    )


def command_of_snippet(snippet: str) -> str | None:
    """The command a tool snippet records, or None when the snippet is not a tool call."""
    parsed = parse_tool_snippet(snippet)
    return None if parsed is None else parsed.command
