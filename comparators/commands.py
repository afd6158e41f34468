"""Command normalisation: the same action written differently compares equal."""

import re
import shlex
from typing import Final

_ENV_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SHELL_WRAPPERS: Final = frozenset({"bash", "sh", "zsh"})
_VOLATILE: Final = (
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I), "<uuid>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?\b"), "<time>"),
    (re.compile(r"\b[0-9a-f]{7,64}\b"), "<hash>"),
    (re.compile(r"(/tmp|/var/folders|/private/var)/[^\s]*"), "<tmp>"),
    (re.compile(r"\b\d+\b"), "<n>"),
)


def normalise_command(command: str) -> str:
    """Drop env assignments, `cd X &&` prefixes and shell wrappers; mask volatile tokens."""
    words = _split(command)
    while words and _ENV_ASSIGNMENT.match(words[0]):
        words = words[1:]
    if len(words) >= 3 and words[0] in _SHELL_WRAPPERS and words[1] in ("-c", "-lc", "-ic"):
        return normalise_command(words[2])
    if len(words) >= 3 and words[0] == "cd" and words[2] in ("&&", ";"):
        return normalise_command(shlex.join(words[3:]))
    text = " ".join(words)
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def _split(command: str) -> list[str]:
    """Shell words; unbalanced quotes fall back to whitespace words."""
    try:
        return shlex.split(command, posix=True)
    except ValueError:
        return command.split()
