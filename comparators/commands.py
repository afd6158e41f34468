"""Reading a command: the same action written differently has the same `CommandShape`.

A command is read by the shell grammar (`comparators.shell`) into simple commands with the
operators between them (`a && b | c; d`). Each one loses what does not change what it does:
wrappers (`bash -lc`, `env`, `timeout`, `uv run`, `npx`, ...), redirections, display filters
after a pipe (`| tail -n 30`), and flags that only change how output looks (`pytest -q`).
Interpreter spellings fold (`python -m pytest` is `pytest`, `npm test` is `npm run test`),
combined short flags split (`-xvs` is `-x -v -s`), flags are a sorted set, and volatile tokens
(numbers, hashes, UUIDs, timestamps, temp paths) become placeholders. A commit message is its
subject line; an inline script (`python -c`, `python - <<EOF`, `node -e`) is its signature.

What changes meaning is kept beside the canonical text: the effective working directory
(`cd DIR`, relative to the repository; a temp folder is another place) and the environment the
program runs in (`source …/activate`, `uv run`, `npx`, `NAME=value`, a `bin/` path), which
decides the route after a `command not found`.

Wrappers are peeled in `command_wrappers`, one simple command's words read in `command_words`;
shapes are compared in `command_similarity`.
"""

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Final

from obelisk_session_evidence.comparators import command_tables as tables
from obelisk_session_evidence.comparators.command_words import (
    commit_words,
    directory_option,
    flags_and_targets,
    inline_script,
    next_cwd,
    program_of,
)
from obelisk_session_evidence.comparators.command_wrappers import basename, setup_marker, shell_script, unwrap
from obelisk_session_evidence.comparators.paths import looks_like_path, mask_temp_paths
from obelisk_session_evidence.comparators.shell import Segment, parse_script

_MAX_DEPTH: Final = 4
"""How deep scripts inside scripts (`bash -c "sh -c '…'"`) are read."""
_PIPES: Final = ("|", "|&")
_ERREXIT_OPTION: Final = re.compile(r"-[a-zA-Z]*e[a-zA-Z]*")
"""A `set` option word that turns on errexit (`-e`, `-euo`)."""


@dataclass(frozen=True, slots=True)
class CommandShape:
    """One simple command in canonical form: what it runs, its options and its targets."""

    program: str
    """Program with its subcommand (`git push`, `npm run test`, `pytest`, `scripts/run.sh`)."""
    flags: tuple[str, ...]
    """Meaningful flags, sorted and deduplicated (`-k`, `--force`)."""
    targets: tuple[str, ...]
    """Positional arguments and flag values, normalised and sorted."""
    cwd: str | None = ""
    """Effective working directory: `""` the repository root (or a worktree's), `sub/dir`
    inside it, an absolute path outside it (`<tmp>` for temp folders); None when unknown."""
    runner: tuple[str, ...] = ()
    """The environment it runs in: activate scripts, runners, `NAME=` assignments, bin paths."""
    head: str = ""
    """The word the shell looked up (`pytest`, `.venv/bin/pytest`), for `command not found`."""
    joined_by: str = ""
    """The operator before its segment (`""`, `&&`, `||`, `;`, `|`, `&`)."""
    next_op: str = ""
    """The operator after its segment: `|` or `||` hides its exit status."""
    view: tuple[str, ...] = ()
    """The output filters piped after it (`tail -50`, `grep error TS`) or the program it fed
    (`| python`): what of its output was shown. Not part of its identity (`text`)."""
    here_document: bool = False
    """It reads a here-document (`shell.Segment.here_document`): how it is written, not its identity."""
    place_options: tuple[str, ...] = ()
    """The options that named its folder (`git -C DIR`): how it is written, not its identity (the
    folder is its `cwd`)."""
    cosmetic_flags: tuple[str, ...] = ()
    """The flags that only change how its output looks (`--no-pager`, `--quiet`): not its identity,
    but arguments it passed, which a usage error may name."""
    globbed: tuple[str, ...] = ()
    """Its arguments that hold a glob character outside quotes, as written (`shell.Segment.globbed`):
    how it is written, not its identity, but the shell expands them before it runs."""

    @property
    def text(self) -> str:
        """The canonical text: program, flags, then targets."""
        return " ".join((self.program, *self.flags, *self.targets))

    @property
    def is_check(self) -> bool:
        """True for tests, builds, linters and type checks."""
        return self.program in tables.CHECK_PROGRAMS or (
            self.program.startswith("make") or posixpath.basename(self.program).startswith("test_")
        )

    @property
    def paths(self) -> tuple[str, ...]:
        """Repository paths the command names (its script and path targets)."""
        named = [t for t in self.targets if "/" in t or looks_like_path(t)]
        if "/" in self.program or looks_like_path(self.program):
            named.insert(0, self.program)
        return tuple(t for t in named if not t.startswith(("<", "import:", "call:", "file:")))


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """A command's simple commands, and how it was read."""

    shapes: tuple[CommandShape, ...]
    fallback: bool
    """True when the shell grammar could not read it (or a script inside it): token reading."""
    truncated: bool
    """True when it went past the reader's work bounds and was compared in part."""
    errexit: bool = False
    """True when `set -e` stops it at its first failing command: its exit code is then that
    command's, not its last command's."""


def parse_command(command: str, *, roots: Iterable[str] = (), cwd: str | None = "") -> ParsedCommand:
    """`command` read into shapes; `cwd` is where it started, relative to the repository."""
    all_roots = (*roots, *cd_roots(command))
    state = _ReadState()
    shapes = _shapes(command, all_roots, cwd=cwd, runner=(), depth=0, state=state)
    return ParsedCommand(tuple(shapes), fallback=state.fallback, truncated=state.truncated, errexit=state.errexit)


def command_shapes(command: str, *, roots: Iterable[str] = ()) -> tuple[CommandShape, ...]:
    """The simple commands `command` runs, in order, without setup steps and output filters."""
    return parse_command(command, roots=roots).shapes


def normalise_command(command: str, *, roots: Iterable[str] = ()) -> str:
    """The canonical text of `command`: its simple commands' texts joined by ` && `."""
    return " && ".join(shape.text for shape in command_shapes(command, roots=roots))


def cd_roots(command: str) -> tuple[str, ...]:
    """Absolute folders `command` changes into: the checkout it ran in, as a root hint.

    A temp folder is never a checkout hint: `cd /tmp && tool` runs somewhere else.
    """
    roots: list[str] = []
    for segment in parse_script(command).segments:
        words = list(segment.words)
        if len(words) == 2 and words[0] in ("cd", "pushd") and words[1].startswith("/"):
            if mask_temp_paths(words[1]) == words[1]:
                roots.append(words[1].rstrip("/") or "/")
        elif len(words) >= 3 and words[0] in tables.SHELLS:
            script = shell_script(words)
            if script is not None:
                roots.extend(cd_roots(script))
    return tuple(roots)


@dataclass(slots=True)
class _ReadState:
    fallback: bool = False
    truncated: bool = False
    errexit: bool = False


def _shapes(
    command: str,
    roots: tuple[str, ...],
    *,
    cwd: str | None,
    runner: tuple[str, ...],
    depth: int,
    state: _ReadState,
) -> list[CommandShape]:
    parsed = parse_script(command)
    state.fallback = state.fallback or parsed.fallback
    state.truncated = state.truncated or parsed.truncated
    shapes: list[CommandShape] = []
    outer: tuple[str | None, tuple[str, ...]] | None = None
    segments = parsed.segments
    for position, segment in enumerate(segments):
        if segment.in_subshell and outer is None:
            outer = (cwd, runner)
        elif not segment.in_subshell and outer is not None:
            cwd, runner = outer  # a `( cd x && … )` group does not outlast itself
            outer = None
        words = list(segment.words)
        if words and segment.joined_by in _PIPES and basename(words[0]) in tables.FILTERS:
            if shapes:
                shapes[-1] = _shown_through(shapes[-1], " ".join(words))
            continue
        state.errexit = state.errexit or _sets_errexit(words)
        setting = _setting(words, segment, cwd, runner, roots)
        if setting is not None:
            cwd, runner = setting
            continue
        next_op = segments[position + 1].joined_by if position + 1 < len(segments) else ""
        inner, markers = unwrap(words)
        shape_runner = tuple(sorted({*runner, *_assigned(segment), *markers}))
        if isinstance(inner, str):
            if depth < _MAX_DEPTH:
                nested = _shapes(inner, roots, cwd=cwd, runner=shape_runner, depth=depth + 1, state=state)
                shapes.extend(_joined(nested, segment.joined_by, next_op))
            continue
        shape = _shape(inner, roots, cwd, segment) if inner is not None else None
        if shape is None:
            continue
        if shapes and segment.joined_by in _PIPES:
            # The previous command's output went to this program, not to the screen.
            shapes[-1] = _shown_through(shapes[-1], f"| {shape.program}")
        shapes.append(replace(shape, runner=shape_runner, head=words[0], joined_by=segment.joined_by, next_op=next_op))
    return shapes


def _setting(
    words: list[str], segment: Segment, cwd: str | None, runner: tuple[str, ...], roots: tuple[str, ...]
) -> tuple[str | None, tuple[str, ...]] | None:
    """The place and environment after a segment that only sets them (`NAME=value` lines,
    `cd DIR`, `source …/activate`), or None for a segment that runs something."""
    if not words:
        return cwd, tuple(sorted({*runner, *_assigned(segment)}))  # `export`-less `NAME=value` lines
    if words[0] in ("cd", "pushd") and len(words) == 2:
        return next_cwd(cwd, words[1], roots), runner
    setup = setup_marker(words)
    if setup is not None:
        return cwd, tuple(sorted({*runner, *setup}))
    return None


def _sets_errexit(words: list[str]) -> bool:
    """`set -e`, `set -euo pipefail`, `set -o errexit`."""
    if not words or words[0] != "set":
        return False
    return "errexit" in words or any(_ERREXIT_OPTION.fullmatch(word) for word in words[1:])


def _assigned(segment: Segment) -> tuple[str, ...]:
    """The `NAME=` of the assignments written before a segment's command."""
    return tuple(f"{assignment.split('=', 1)[0]}=" for assignment in segment.assignments)


def _shown_through(shape: CommandShape, view: str) -> CommandShape:
    """`shape` with its output shown through `view` (a filter, or `| program` it fed)."""
    return replace(shape, view=(*shape.view, view))


def _joined(nested: list[CommandShape], joined_by: str, next_op: str) -> list[CommandShape]:
    """A nested script's shapes with the operators around the segment that ran it."""
    if nested:
        nested[0] = replace(nested[0], joined_by=joined_by)
        nested[-1] = replace(nested[-1], next_op=next_op)
    return nested


_INLINE_RUNNERS: Final = frozenset({"python", "python -c", "node", "node -e"})


def _shape(words: list[str], roots: tuple[str, ...], cwd: str | None, segment: Segment) -> CommandShape | None:
    """One simple command's words in canonical form; None when nothing is left to run."""
    words, cwd, place_options = directory_option(words, roots, cwd)
    program, rest = program_of(words, roots, cwd)
    if not program:
        return None
    inline = inline_script(program, rest, segment.stdin) if program in _INLINE_RUNNERS else None
    if inline is not None:
        program, targets = inline
        flags: tuple[str, ...] = ()
        cosmetic: tuple[str, ...] = ()
    else:
        if program == "git commit":
            rest = commit_words(rest, segment.stdin)
        flags, targets, cosmetic = flags_and_targets(program, rest, roots, cwd)
    return CommandShape(
        program=program,
        flags=flags,
        targets=targets,
        cwd=cwd,
        here_document=segment.here_document,
        place_options=place_options,
        cosmetic_flags=cosmetic,
        globbed=segment.globbed,
    )
