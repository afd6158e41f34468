"""What a simple command really runs: wrappers (`env`, `sudo`, `timeout`, `uv run`, `npx`,
`bash -c`, `python -m`) peeled off, with the environment they add kept as markers."""

import posixpath
import re
from typing import Final

from obelisk_session_evidence.comparators import command_tables as tables
from obelisk_session_evidence.comparators.paths import looks_like_path

_ENV_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_MAX_WRAPPERS: Final = 8
_OWN_VALUE_FLAGS: Final = {
    "sudo": frozenset({"-u", "-g", "-C"}),
    "doas": frozenset({"-u", "-g", "-C"}),
    **dict.fromkeys(tables.PLAIN_WRAPPERS, tables.WRAPPER_VALUE_FLAGS),
    "nice": frozenset({"-n"}),
}
"""Wrappers that run the rest of their words, and their options that take a value."""

_PACKAGE_VERSION: Final = re.compile(r"(?<=.)@[^/@]*$")
"""The version a package runner is asked for (`vercel@latest`, `@scope/cli@1.2`): how it is fetched,
not what runs."""


def unwrap(words: list[str]) -> tuple[list[str] | str | None, tuple[str, ...]]:
    """The wrapped command's words (a `bash -c` script as a string), and the environment the
    wrappers add (`uv run`, `npx`, `env NAME=`, a `bin/` path)."""
    markers: list[str] = []
    for _ in range(_MAX_WRAPPERS):
        if not words:
            return None, tuple(markers)
        head = basename(words[0])
        if "/" in words[0] and tables.BIN_DIRS.search(words[0]):
            markers.append(f"bin:{posixpath.dirname(words[0])}")
        peeled = _peel(words, head)
        if peeled is None:
            return _interpreted(words, head), tuple(markers)
        words, added = peeled
        markers.extend(added)
    return words, tuple(markers)


def _peel(words: list[str], head: str) -> tuple[list[str], tuple[str, ...]] | None:
    """One wrapper removed: the words it runs and the markers it adds; None when `words` does
    not start with a wrapper."""
    if head == "env":
        rest = skip_flags(words[1:])
        return _without_env(rest), tuple(f"{word.split('=', 1)[0]}=" for word in rest if _ENV_ASSIGNMENT.match(word))
    if head == "command" and len(words) > 1 and words[1] in ("-v", "-V"):
        return None  # a lookup of the name (`command -v shellcheck`), not a run of it
    if head in _OWN_VALUE_FLAGS:
        return skip_flags(words[1:], _OWN_VALUE_FLAGS[head]), ()
    if head == "timeout":
        return skip_flags(words[1:])[1:], ()  # the duration
    if head in tables.RUNNER_WRAPPERS and len(words) > 1 and words[1] == tables.RUNNER_WRAPPERS[head]:
        return skip_flags(words[2:]), (f"{head} {words[1]}",)
    if head in tables.NPX_LIKE:
        rest = skip_flags(words[1:], frozenset({"-p", "--package"}))
        return [_PACKAGE_VERSION.sub("", rest[0]), *rest[1:]] if rest else rest, (head,)
    return None


def _interpreted(words: list[str], head: str) -> list[str] | str | None:
    """What a command that is not a wrapper runs: a shell's script or script file, python's
    module or script, an inline script's program, or the command itself."""
    if head in tables.SHELLS:
        script = shell_script(words)
        if script is not None:
            return script
        return skip_flags(words[1:], frozenset()) or [head]  # `bash run.sh args` runs the script; `| sh` runs stdin
    if tables.PYTHONS.match(head):
        return _python_words(words)
    if head == "node":
        words = [words[0], *_without_input_type(words[1:])]
        if len(words) > 1 and words[1] in ("-e", "--eval", "-p", "--print"):
            return ["node -e", *words[2:3]]
    if head in tables.SCRIPT_INTERPRETERS and len(words) > 1 and looks_like_path(words[1]):
        return words[1:]
    return words


def _without_input_type(words: list[str]) -> list[str]:
    """node's words without a leading `--input-type` (how it reads the script text, module or not):
    `node --input-type=module <<EOF` runs its here-document as `node <<EOF` does."""
    if words[:1] == ["--input-type"]:
        return words[2:]
    return words[1:] if words[:1] and words[0].startswith("--input-type=") else words


def setup_marker(words: list[str]) -> tuple[str, ...] | None:
    """What a setup step adds to the environment (`source .venv/bin/activate`), or None when
    `words` is not a setup step."""
    head = basename(words[0])
    if head in ("source", ".") and len(words) > 1:
        return (f"source:{posixpath.basename(words[1])}",)
    if head in ("conda", "mamba", "micromamba") and len(words) > 1 and words[1] == "activate":
        return (f"{head}:activate",)
    if head == "export":
        return tuple(f"{word.split('=', 1)[0]}=" for word in words[1:] if "=" in word)
    if head in tables.SETUP_PROGRAMS:
        return ()
    return None


def shell_script(words: list[str]) -> str | None:
    """The script of `bash -lc 'script'` (any flag bundle holding `c`), else None."""
    for index, word in enumerate(words[1:], start=1):
        if not word.startswith("-"):
            return None
        if "c" in word[1:] and not word.startswith("--") and index + 1 < len(words):
            return words[index + 1]
    return None


def skip_flags(words: list[str], value_flags: frozenset[str] = tables.WRAPPER_VALUE_FLAGS) -> list[str]:
    """Drop a wrapper's own leading options (and their values)."""
    index = 0
    while index < len(words) and words[index].startswith("-"):
        word = words[index]
        index += 1
        if word == "--":
            break
        if word in value_flags and "=" not in word:
            index += 1
    return words[index:]


def basename(word: str) -> str:
    return posixpath.basename(word) if "/" in word else word


def _without_env(words: list[str]) -> list[str]:
    index = 0
    while index < len(words) and _ENV_ASSIGNMENT.match(words[index]):
        index += 1
    return words[index:]


def _python_words(words: list[str]) -> list[str] | None:
    """`python -m mod args` is `mod args`; `python script.py` is the script; `-c` stays python."""
    index = 1
    while index < len(words) and words[index].startswith("-") and words[index] != "-":
        word = words[index]
        if word == "-m":
            return words[index + 1 :] or None
        if word.startswith("-m"):
            return [word[2:], *words[index + 1 :]]
        if word == "-c":
            return ["python -c", *words[index + 1 : index + 2]]
        index += 2 if word in tables.PYTHON_VALUE_FLAGS else 1
    rest = words[index:]
    return ["python", *rest] if not rest or rest[0] == "-" else rest
