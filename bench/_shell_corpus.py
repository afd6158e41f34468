"""Every shell call of the real corpus, read straight from the session files, with its output.

The native parsers cut commands at 2,000 characters and outputs to an excerpt; the shell-grammar
evaluation and the masked-failure measurement need the full command and output, so this reads
the raw lines: Claude `Bash` tool_use/tool_result, Codex `exec_command`/`shell`
function_call/function_call_output, pi `bash` toolCall/toolResult, old kimi-cli `Shell` calls.
"""

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from fixtures.shared import REAL_CORPUS as SHARED_REAL_CORPUS

REAL_CORPUS: Final = Path(os.environ.get("NATIVE_REAL_CORPUS", str(SHARED_REAL_CORPUS)))
_CODEX_EXIT: Final = re.compile(r"^Process exited with code (-?\d+)$", re.M)
_CLAUDE_EXIT: Final = re.compile(r"\A\s*Exit code (-?\d+)")
_PI_EXIT: Final = re.compile(r"Command exited with code (-?\d+)")
_SHELL_TOOLS: Final = frozenset({"Bash", "bash", "exec_command", "shell", "Shell"})


@dataclass(frozen=True, slots=True)
class ShellCall:
    """One recorded shell call: where it is, what ran, what it printed, how it ended."""

    path: str
    """The session file, relative to the corpus root."""
    command: str
    output: str
    failed: bool | None
    """True for an error flag or a nonzero exit code; None when neither was recorded."""
    exit_code: int | None


def real_shell_calls(corpus: Path = REAL_CORPUS) -> list[ShellCall]:
    """Every shell call with a result, in file order."""
    calls: list[ShellCall] = []
    for path in sorted(corpus.rglob("*.jsonl")):
        calls.extend(_calls_in(path, str(path.relative_to(corpus))))
    return calls


def _calls_in(path: Path, name: str) -> Iterator[ShellCall]:
    opened: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict):
            continue
        for call_id, command in _opened(row):
            opened[call_id] = command
        for call_id, output, is_error in _results(row):
            if call_id in opened:
                yield _call(name, opened.pop(call_id), output, is_error)


def _call(name: str, command: str, output: str, is_error: bool | None) -> ShellCall:
    exit_code = None
    for pattern in (_CODEX_EXIT, _CLAUDE_EXIT, _PI_EXIT):
        found = pattern.search(output)
        if found:
            exit_code = int(found.group(1))
            break
    failed = bool(is_error) or (exit_code is not None and exit_code != 0)
    if is_error is None and exit_code is None:
        failed = None
    return ShellCall(path=name, command=command, output=output, failed=failed, exit_code=exit_code)


def _opened(row: dict) -> Iterator[tuple[str, str]]:
    payload = row.get("payload")
    if isinstance(payload, dict) and payload.get("type") == "function_call" and payload.get("name") in _SHELL_TOOLS:
        command = _command(_arguments(payload.get("arguments")))
        if command:
            yield str(payload.get("call_id")), command
    message = row.get("message") if isinstance(row.get("message"), dict) else row
    for part in _parts(message.get("content")):
        kind, tool = part.get("type"), part.get("name")
        if kind in ("tool_use", "toolCall") and tool in _SHELL_TOOLS:
            command = _command(part.get("input") or part.get("arguments"))
            if command:
                yield str(part.get("id")), command
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and function.get("name") in _SHELL_TOOLS:
            command = _command(_arguments(function.get("arguments")))
            if command:
                yield str(call.get("id")), command


def _results(row: dict) -> Iterator[tuple[str, str, bool | None]]:
    payload = row.get("payload")
    if isinstance(payload, dict) and payload.get("type") == "function_call_output":
        output = payload.get("output")
        yield str(payload.get("call_id")), output if isinstance(output, str) else json.dumps(output), None
    message = row.get("message") if isinstance(row.get("message"), dict) else row
    if message.get("role") == "toolResult":
        yield str(message.get("toolCallId")), _text(message.get("content")), message.get("isError")
    if message.get("role") == "tool" and message.get("tool_call_id"):
        yield str(message.get("tool_call_id")), _text(message.get("content")), None
    for part in _parts(message.get("content")):
        if part.get("type") == "tool_result":
            yield str(part.get("tool_use_id")), _text(part.get("content")), part.get("is_error")


def _parts(content: object) -> list[dict]:
    return [part for part in content if isinstance(part, dict)] if isinstance(content, list) else []


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in _parts(content))


def _arguments(raw: object) -> dict:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _command(arguments: object) -> str | None:
    if not isinstance(arguments, dict):
        return None
    value = arguments.get("command", arguments.get("cmd"))
    if isinstance(value, list) and all(isinstance(word, str) for word in value):
        return value[2] if len(value) == 3 and value[1] in ("-lc", "-c") else " ".join(value)
    return value if isinstance(value, str) and value.strip() else None
