"""Command normalisation: the same action written differently has the same `CommandShape`.

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
"""

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Final

from obelisk_session_evidence.comparators import command_tables as tables
from obelisk_session_evidence.comparators.inline_scripts import (
    commit_subject,
    javascript_signature,
    python_signature,
    same_commit_subject,
)
from obelisk_session_evidence.comparators.paths import looks_like_path, mask_temp_paths, mask_volatile, repository_path
from obelisk_session_evidence.comparators.shell import Segment, parse_script

_ENV_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_TARGET_MATCH_CUTOFF: Final = 97
"""Two targets are the same when `fuzz.ratio` reaches this (absorbs a cut snippet's last char)."""
_MAX_DEPTH: Final = 4
MAX_TARGET_CHARS: Final = 2048


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


def parse_command(command: str, *, roots: Iterable[str] = (), cwd: str | None = "") -> ParsedCommand:
    """`command` read into shapes; `cwd` is where it started, relative to the repository."""
    all_roots = (*roots, *cd_roots(command))
    state = _ReadState()
    shapes = _shapes(command, all_roots, cwd=cwd, runner=(), depth=0, state=state)
    return ParsedCommand(tuple(shapes), fallback=state.fallback, truncated=state.truncated)


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
            script = _shell_script(words)
            if script is not None:
                roots.extend(cd_roots(script))
    return tuple(roots)


def same_place(proposed: CommandShape, historical: CommandShape) -> bool:
    """True when both ran in the same place: the same cwd, or anywhere in the repository for a
    command whose path targets are already repository-relative; unknown matches anything."""
    if proposed.cwd is None or historical.cwd is None or proposed.cwd == historical.cwd:
        return True
    inside = not proposed.cwd.startswith(("/", "<")) and not historical.cwd.startswith(("/", "<"))
    return inside and bool(proposed.paths or historical.paths)


def command_similarity(proposed: CommandShape, historical: CommandShape) -> int:
    """0–100: 0 for another program, else the lower of flag and target agreement.

    Canonical forms already absorb spelling; what is left is meaning, so a changed flag or
    target must pull the score far down rather than shave a few points off a string ratio.
    """
    if proposed.program != historical.program:
        return 0
    flag_score = _jaccard(set(proposed.flags), set(historical.flags))
    target_score = _target_agreement(
        proposed.targets, historical.targets, commit_message=proposed.program == "git commit"
    )
    return min(flag_score, target_score)


def _target_agreement(proposed: tuple[str, ...], historical: tuple[str, ...], *, commit_message: bool) -> int:
    """100 × targets matched one to one / all distinct targets (`fuzz.ratio`, no processor;
    a commit's subject also by `same_commit_subject`)."""
    if not proposed and not historical:
        return 100
    from rapidfuzz import fuzz  # here: a `run` that compares nothing skips it

    remaining = list(historical)
    matched = 0
    for target in proposed:
        for index, candidate in enumerate(remaining):
            if (
                target == candidate
                or fuzz.ratio(target, candidate, processor=None, score_cutoff=_TARGET_MATCH_CUTOFF)
                or (commit_message and same_commit_subject(target, candidate))
            ):
                matched += 1
                del remaining[index]
                break
    union = len(proposed) + len(historical) - matched
    return round(100 * matched / union)


def _jaccard(a: set[str], b: set[str]) -> int:
    if not a and not b:
        return 100
    return round(100 * len(a & b) / len(a | b))


@dataclass(slots=True)
class _ReadState:
    fallback: bool = False
    truncated: bool = False


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
        next_op = segments[position + 1].joined_by if position + 1 < len(segments) else ""
        words = list(segment.words)
        env = tuple(f"{assignment.split('=', 1)[0]}=" for assignment in segment.assignments)
        if not words:
            runner = tuple(sorted({*runner, *env}))  # `export`-less `NAME=value` lines
            continue
        if words[0] in ("cd", "pushd") and len(words) == 2:
            cwd = _next_cwd(cwd, words[1], roots)
            continue
        if segment.joined_by in ("|", "|&") and _basename(words[0]) in tables.FILTERS:
            if shapes:
                shapes[-1] = replace(shapes[-1], view=(*shapes[-1].view, " ".join(words)))
            continue
        setup = _setup_marker(words)
        if setup is not None:
            runner = tuple(sorted({*runner, *setup}))
            continue
        inner, markers = _unwrap(words)
        if inner is None:
            continue
        shape_runner = tuple(sorted({*runner, *env, *markers}))
        if isinstance(inner, str):
            if depth < _MAX_DEPTH:
                nested = _shapes(inner, roots, cwd=cwd, runner=shape_runner, depth=depth + 1, state=state)
                if nested:
                    nested[0] = replace(nested[0], joined_by=segment.joined_by)
                    nested[-1] = replace(nested[-1], next_op=next_op)
                shapes.extend(nested)
            continue
        shape = _shape(inner, roots, cwd, segment)
        if shape is not None and shapes and segment.joined_by in ("|", "|&"):
            # The previous command's output went to this program, not to the screen.
            shapes[-1] = replace(shapes[-1], view=(*shapes[-1].view, f"| {shape.program}"))
        if shape is not None:
            shapes.append(
                replace(shape, runner=shape_runner, head=words[0], joined_by=segment.joined_by, next_op=next_op)
            )
    return shapes


def _setup_marker(words: list[str]) -> tuple[str, ...] | None:
    """What a setup step adds to the environment (`source .venv/bin/activate`), or None when
    `words` is not a setup step."""
    head = _basename(words[0])
    if head in ("source", ".") and len(words) > 1:
        return (f"source:{posixpath.basename(words[1])}",)
    if head in ("conda", "mamba", "micromamba") and len(words) > 1 and words[1] == "activate":
        return (f"{head}:activate",)
    if head == "export":
        return tuple(f"{word.split('=', 1)[0]}=" for word in words[1:] if "=" in word)
    if head in tables.SETUP_PROGRAMS:
        return ()
    return None


def _next_cwd(cwd: str | None, target: str, roots: tuple[str, ...]) -> str | None:
    """The cwd after `cd target`: repository-relative inside it, absolute outside it."""
    if target.startswith(("~", "$", "-")):
        return None
    if target.startswith("/"):
        for root in sorted({r.rstrip("/") for r in roots}, key=len, reverse=True):
            if target.rstrip("/") == root:
                return ""
            if target.startswith(root + "/"):
                return posixpath.normpath(target[len(root) + 1 :])
        return mask_temp_paths(posixpath.normpath(target))
    if cwd is None:
        return None
    joined = posixpath.normpath(posixpath.join(cwd or ".", target))
    if cwd.startswith(("/", "<")):
        return joined
    return "" if joined == "." else joined


def _without_env(words: list[str]) -> list[str]:
    index = 0
    while index < len(words) and _ENV_ASSIGNMENT.match(words[index]):
        index += 1
    return words[index:]


def _shell_script(words: list[str]) -> str | None:
    """The script of `bash -lc 'script'` (any flag bundle holding `c`), else None."""
    for index, word in enumerate(words[1:], start=1):
        if not word.startswith("-"):
            return None
        if "c" in word[1:] and not word.startswith("--") and index + 1 < len(words):
            return words[index + 1]
    return None


def _skip_flags(words: list[str], value_flags: frozenset[str] = tables.WRAPPER_VALUE_FLAGS) -> list[str]:
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


def _unwrap(words: list[str]) -> tuple[list[str] | str | None, tuple[str, ...]]:
    """The wrapped command's words (a `bash -c` script as a string), and the environment the
    wrappers add (`uv run`, `npx`, `env NAME=`, a `bin/` path)."""
    markers: list[str] = []
    for _ in range(8):
        if not words:
            return None, tuple(markers)
        head = _basename(words[0])
        if "/" in words[0] and tables.BIN_DIRS.search(words[0]):
            markers.append(f"bin:{posixpath.dirname(words[0])}")
        if head == "env":
            rest = _skip_flags(words[1:])
            markers.extend(f"{word.split('=', 1)[0]}=" for word in rest if _ENV_ASSIGNMENT.match(word))
            words = _without_env(rest)
        elif head in ("sudo", "doas"):
            words = _skip_flags(words[1:], frozenset({"-u", "-g", "-C"}))
        elif head in tables.PLAIN_WRAPPERS:
            words = _skip_flags(words[1:])
        elif head == "nice":
            words = _skip_flags(words[1:], frozenset({"-n"}))
        elif head == "timeout":
            words = _skip_flags(words[1:])[1:]  # the duration
        elif head in tables.RUNNER_WRAPPERS and len(words) > 1 and words[1] == tables.RUNNER_WRAPPERS[head]:
            markers.append(f"{head} {words[1]}")
            words = _skip_flags(words[2:])
        elif head in tables.NPX_LIKE:
            markers.append(head)
            words = _skip_flags(words[1:], frozenset({"-p", "--package"}))
        elif head in tables.SHELLS:
            script = _shell_script(words)
            if script is not None:
                return script, tuple(markers)
            rest = _skip_flags(words[1:], frozenset())
            return rest or [head], tuple(markers)  # `bash run.sh args` runs the script; `| sh` runs stdin
        elif tables.PYTHONS.match(head):
            return _python_words(words), tuple(markers)
        elif head == "node" and len(words) > 1 and words[1] in ("-e", "--eval", "-p", "--print"):
            return ["node -e", *words[2:3]], tuple(markers)
        elif head in tables.SCRIPT_INTERPRETERS and len(words) > 1 and looks_like_path(words[1]):
            return words[1:], tuple(markers)
        else:
            return words, tuple(markers)
    return words, tuple(markers)


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


def _basename(word: str) -> str:
    return posixpath.basename(word) if "/" in word else word


_DIRECTORY_OPTIONS: Final = {"git": ("-C",), "make": ("-C", "--directory"), "gmake": ("-C", "--directory")}
"""Programs whose option names the folder they run in: `git -C DIR status` runs in DIR, a place."""


def _directory_option(words: list[str], roots: tuple[str, ...], cwd: str | None) -> tuple[list[str], str | None]:
    """The words without a `-C DIR` folder option, and the cwd it moves the command to."""
    options = _DIRECTORY_OPTIONS.get(_basename(words[0])) if words else None
    if not options:
        return words, cwd
    kept = [words[0]]
    index = 1
    while index < len(words):
        word = words[index]
        name, _, attached = word.partition("=")
        if name in options and (attached or index + 1 < len(words)):
            cwd = _next_cwd(cwd, attached or words[index + 1], roots)
            index += 1 if attached else 2
            continue
        kept.append(word)
        index += 1
    return kept, cwd


def _program(words: list[str], roots: tuple[str, ...], cwd: str | None) -> tuple[str, list[str]]:
    """The program key (with subcommand) and the remaining words."""
    head, rest = words[0], words[1:]
    if "/" in head and not tables.BIN_DIRS.search(head):
        return _path_target(head, roots, cwd), rest
    name = tables.PROGRAM_ALIASES.get(_basename(head), _basename(head))
    if tables.PYTHONS.match(name):
        name = "python"
    program = name
    if name.split(" ")[0] in tables.SUBCOMMAND_PROGRAMS:
        base = name.split(" ")[0]
        if base == "git":
            rest = _skip_flags(rest, tables.GIT_VALUE_FLAGS)
        if rest and not rest[0].startswith("-"):
            sub = tables.SUBCOMMAND_ALIASES.get((base, rest[0]), rest[0])
            rest = rest[1:]
            if base in tables.SCRIPT_RUNNERS:
                if sub == "run" and rest and not rest[0].startswith("-"):
                    sub, rest = f"run {rest[0]}", rest[1:]
                elif sub in tables.NPM_LIFECYCLE or sub not in tables.PACKAGE_MANAGER_BUILTINS:
                    sub = f"run {sub}"
                if sub.startswith("run "):
                    name = "npm"  # a package script is the same script whichever manager runs it
            program = f"{name} {sub}"
    return program, rest


def _shape(words: list[str], roots: tuple[str, ...], cwd: str | None, segment: Segment) -> CommandShape | None:
    words, cwd = _directory_option(words, roots, cwd)
    program, rest = _program(words, roots, cwd)
    if not program:
        return None
    if program in ("python", "python -c", "node", "node -e"):
        inline = _inline_script(program, rest, segment.stdin)
        if inline is not None:
            return CommandShape(program=inline[0], flags=(), targets=inline[1], cwd=cwd)
    if program == "git commit":
        rest = _commit_words(rest, segment.stdin)
    family = " ".join(program.split(" ")[:2])
    cosmetic = {
        **tables.COSMETIC_FLAGS["*"],
        **tables.COSMETIC_FLAGS.get(family, {}),
        **tables.COSMETIC_FLAGS.get(program, {}),
    }
    single_dash_long = program in tables.SINGLE_DASH_LONG or program.split(" ")[0] in tables.SINGLE_DASH_LONG
    value_letters = tables.VALUE_LETTERS.get(program, frozenset())
    flags: set[str] = set()
    targets: list[str] = []
    index = 0
    only_positional = False
    while index < len(rest):
        word = rest[index]
        index += 1
        if only_positional or not word.startswith("-") or word == "-" or re.fullmatch(r"-\d+(\.\d+)?", word):
            targets.append(_target(word, roots, cwd))
            continue
        if word == "--":
            only_positional = True
            continue
        if word.startswith("--") or single_dash_long:
            name, has_value, value = word.partition("=")
            if name in cosmetic:
                if cosmetic[name] and not has_value:
                    index += 1
                continue
            flags.add(name)
            if has_value:
                targets.append(_target(value, roots, cwd))
            continue
        # A getopt bundle: `-xvs`, `-kexpr`, `-n4`.
        letters = word[1:]
        for position, letter in enumerate(letters):
            flag = f"-{letter}"
            attached = letters[position + 1 :]
            takes_value = letter in value_letters or (flag in cosmetic and cosmetic[flag])
            if not letter.isalpha():
                # `-n4` style: the rest (from a digit on) is the previous letter's value.
                value = letters[position:]
                if flag not in cosmetic and f"-{letters[position - 1]}" not in cosmetic:
                    targets.append(_target(value, roots, cwd))
                break
            if takes_value:
                if flag in cosmetic:
                    if not attached:
                        index += 1
                    break
                flags.add(flag)
                if attached:
                    targets.append(_target(attached, roots, cwd))
                elif index < len(rest):
                    targets.append(_target(rest[index], roots, cwd))
                    index += 1
                break
            if flag not in cosmetic:
                flags.add(flag)
    return CommandShape(program=program, flags=tuple(sorted(flags)), targets=tuple(sorted(targets)), cwd=cwd)


def _inline_script(program: str, rest: list[str], stdin: str | None) -> tuple[str, tuple[str, ...]] | None:
    """`python -c BODY`, `python - <<EOF`, `node -e BODY`: the program and the body's signature."""
    if program.endswith(" -c") or program.endswith(" -e"):
        body = rest[0] if rest else ""
    elif stdin is not None and (not rest or rest[0] == "-"):
        body = stdin
    else:
        return None
    language = program.split(" ")[0]
    signature = python_signature(body) if language == "python" else javascript_signature(body)
    return f"{language} {'-c' if language == 'python' else '-e'}", signature


def _commit_words(rest: list[str], stdin: str | None) -> list[str]:
    """`git commit` words with the message as its subject line (`-m`, `--message`, `-F -`)."""
    words: list[str] = []
    index = 0
    subject_seen = False
    while index < len(rest):
        word = rest[index]
        index += 1
        value: str | None = None
        if word in ("-m", "--message") and index < len(rest):
            value, index = rest[index], index + 1
            if value.lstrip('"') == "$(cat":
                # Split by word reading (a snippet cut inside the message): the rest is the message.
                value, index = " ".join(["$(cat", *rest[index:]]), len(rest)
        elif word.startswith("--message="):
            value = word.partition("=")[2]
        elif word.startswith("-m") and len(word) > 2 and not word.startswith("--"):
            value = word[2:]
        elif word in ("-F", "--file") and index < len(rest) and rest[index] == "-" and stdin is not None:
            value, index = stdin, index + 1
        if value is None:
            words.append(word)
        elif not subject_seen:
            words.extend(("-m", commit_subject(value)))
            subject_seen = True  # later `-m` paragraphs are the body
    return words


def _target(word: str, roots: tuple[str, ...], cwd: str | None) -> str:
    """A positional argument: repository-relative when it is a path; volatile parts masked.

    Only its first `MAX_TARGET_CHARS` are compared (a bound on the masking work).
    """
    word = word[:MAX_TARGET_CHARS]
    if looks_like_path(word) and not word.startswith(("http:", "https:")):
        return mask_volatile(_path_target(word, roots, cwd))
    return mask_volatile(" ".join(word.split()))


def _path_target(word: str, roots: tuple[str, ...], cwd: str | None) -> str:
    path = repository_path(word, roots=roots)
    if cwd and not word.startswith(("/", "~", "$")) and not path.startswith("<"):
        path = repository_path(posixpath.join(cwd, path))
    return path
