"""Codex "code mode" (0.142): the model writes a JavaScript cell, run by a `custom_tool_call` named
`exec`, whose `tools.exec_command({cmd, workdir, …})` calls run the shell commands. Only what the
cell states as string literals is read: a command built at run time (a variable, a template with
`${…}`) is not known from the record, and is never guessed."""

import json
import re
from typing import Any, Final

_TOOL_CALL: Final = "\\btools\\.{}\\s*\\(\\s*\\{{"
_INTEGER: Final = re.compile(r"-?\d+")
_SESSION_LINE: Final = re.compile(r"SESSION_ID=(\d+)")
_TOKEN: Final = re.compile(
    r"""\s+|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`|[{}\[\](),:]|[^\s"'`{}\[\](),:]+""", re.S
)
_JS_ESCAPE: Final = re.compile(r"\\(u\{[0-9a-fA-F]{1,6}\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|\r\n|[\s\S])")
_SIMPLE_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_LINE_CONTINUATIONS: Final = frozenset({"\n", "\r", "\r\n", "\u2028", "\u2029"})
SCRIPT_RUNNING: Final = re.compile(r"^Script running with cell ID (\d+)$", re.M)
SCRIPT_COMPLETED: Final = re.compile(r"^Script completed$", re.M)
UNKNOWN: Final = object()
"""An entry whose value is not one string literal."""


def cell_tool_calls(source: str, tool: str) -> tuple[dict[str, Any], ...]:
    """The arguments of each `tools.<tool>({...})` call in a cell, in source order: the entries
    whose value is a string or integer literal, decoded; any other value is `UNKNOWN`."""
    pattern = re.compile(_TOOL_CALL.format(re.escape(tool)))
    return tuple(_object_entries(source, match.end()) for match in pattern.finditer(source))


def reported_exit_code(body: str) -> int | None:
    """The exit code a cell printed as the whole result object (`JSON.stringify(r)` or
    `{exit_code: r.exit_code, output: r.output}`); anything else states none unambiguously."""
    return _result_field(body, "exit_code")


def reported_process(body: str) -> str | None:
    """The process a cell's command left running, as the cell printed it: a last line
    `SESSION_ID=<n>` (the cells' own convention) or the whole result object's `session_id`."""
    line = _SESSION_LINE.fullmatch(body.rstrip().rpartition("\n")[2])
    session = int(line.group(1)) if line else _result_field(body, "session_id")
    return None if session is None else str(session)


def _result_field(body: str, key: str) -> int | None:
    """An integer field of a tool result printed whole (a JSON object with a string `output`)."""
    text = body.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        result = json.loads(text)
    except ValueError:
        return None
    if not isinstance(result, dict) or not isinstance(result.get("output"), str):
        return None
    value = result.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _object_entries(source: str, start: int) -> dict[str, Any]:
    """The top-level `key: value` entries of the object literal whose `{` ends at `start`."""
    entries: dict[str, Any] = {}
    depth, key, after_colon = 1, None, False
    value: list[str] = []
    for match in _TOKEN.finditer(source, start):
        token = match.group()
        if token.isspace():
            continue
        if depth == 1 and token in (",", "}"):
            if key is not None and after_colon:
                entries[key] = _scalar(value[0]) if len(value) == 1 else UNKNOWN
            if token == "}":
                return entries
            key, value, after_colon = None, [], False
            continue
        if token in "{[(":
            depth += 1
        elif token in "}])":
            depth -= 1
        if depth == 1 and not after_colon and token == ":":
            after_colon = True
        elif depth == 1 and not after_colon:
            decoded = _literal(token) if token[0] in "\"'" else token
            key = decoded if key is None and isinstance(decoded, str) else None
        else:
            value.append(token)
    return {}  # the object never closes: a cut or broken cell states nothing


def _scalar(token: str) -> Any:
    """A string or integer literal's value, else `UNKNOWN`."""
    return int(token) if _INTEGER.fullmatch(token) else _literal(token)


def _literal(token: str) -> Any:
    """A JavaScript string literal's value; a template with a substitution, or anything else, is `UNKNOWN`."""
    quote = token[0]
    if quote not in "\"'`" or (quote == "`" and "${" in token):
        return UNKNOWN
    if quote == '"':
        try:
            return str(json.loads(token))
        except ValueError:
            pass  # an escape JSON lacks (`\'`, `\x41`, `\v`): decoded below
    try:
        decoded = _JS_ESCAPE.sub(_unescape, token[1:-1])
        return decoded.encode("utf-16", "surrogatepass").decode("utf-16")
    except (ValueError, UnicodeError):  # a code point past U+10FFFF, or a lone surrogate
        return UNKNOWN


def _unescape(match: re.Match[str]) -> str:
    escape = match.group(1)
    if escape in _LINE_CONTINUATIONS:
        return ""
    if escape[0] in "ux" and len(escape) > 1:
        return chr(int(escape[1:].strip("{}"), 16))
    return _SIMPLE_ESCAPES.get(escape, escape)
