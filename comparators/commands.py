"""Command normalisation: the same action written differently has the same `CommandShape`.

A command is shell-split into simple commands (`a && b; c`). Each one loses what does not
change what it does: environment assignments, `cd X &&` prefixes, wrappers (`bash -lc`, `env`,
`timeout`, `uv run`, `npx`, ...), redirections, display filters after a pipe (`| tail -n 30`),
and flags that only change how output looks (`pytest -q`). Interpreter spellings fold
(`python -m pytest` is `pytest`, `npm test` is `npm run test`), combined short flags split
(`-xvs` is `-x -v -s`), flags are a sorted set (their order does not matter), and volatile
tokens (numbers, hashes, UUIDs, timestamps, temp paths) become placeholders.
"""

import posixpath
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from comparators import command_tables as tables
from comparators.paths import looks_like_path, mask_volatile, repository_path

_ENV_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_TARGET_MATCH_CUTOFF: Final = 97
"""Two targets are the same when `fuzz.ratio` reaches this (absorbs a cut snippet's last char)."""
_MAX_DEPTH: Final = 4


@dataclass(frozen=True, slots=True)
class CommandShape:
    """One simple command in canonical form: what it runs, its options and its targets."""

    program: str
    """Program with its subcommand (`git push`, `npm run test`, `pytest`, `scripts/run.sh`)."""
    flags: tuple[str, ...]
    """Meaningful flags, sorted and deduplicated (`-k`, `--force`)."""
    targets: tuple[str, ...]
    """Positional arguments and flag values, normalised and sorted."""

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
        return tuple(t for t in named if not t.startswith("<"))


def command_shapes(command: str, *, roots: Iterable[str] = ()) -> tuple[CommandShape, ...]:
    """The simple commands `command` runs, in order, without setup steps and output filters."""
    all_roots = (*roots, *cd_roots(command))
    return tuple(_shapes(command, all_roots, cwd=None, depth=0))


def normalise_command(command: str, *, roots: Iterable[str] = ()) -> str:
    """The canonical text of `command`: its simple commands' texts joined by ` && `."""
    return " && ".join(shape.text for shape in command_shapes(command, roots=roots))


def cd_roots(command: str) -> tuple[str, ...]:
    """Absolute folders `command` changes into: the checkout it ran in, as a root hint."""
    roots: list[str] = []
    for words, _ in _segments(_tokens(command)):
        words = _without_env(words)
        if len(words) == 2 and words[0] in ("cd", "pushd") and words[1].startswith("/"):
            roots.append(words[1].rstrip("/") or "/")
        elif len(words) >= 3 and words[0] in tables.SHELLS:
            script = _shell_script(words)
            if script is not None:
                roots.extend(cd_roots(script))
    return tuple(roots)


def command_similarity(proposed: CommandShape, historical: CommandShape) -> int:
    """0–100: 0 for another program, else the lower of flag and target agreement.

    Canonical forms already absorb spelling; what is left is meaning, so a changed flag or
    target must pull the score far down rather than shave a few points off a string ratio.
    """
    if proposed.program != historical.program:
        return 0
    flag_score = _jaccard(set(proposed.flags), set(historical.flags))
    target_score = _target_agreement(proposed.targets, historical.targets)
    return min(flag_score, target_score)


def _target_agreement(proposed: tuple[str, ...], historical: tuple[str, ...]) -> int:
    """100 × targets matched one to one / all distinct targets (`fuzz.ratio`, no processor)."""
    if not proposed and not historical:
        return 100
    from rapidfuzz import fuzz  # here: a `run` that compares nothing skips it

    remaining = list(historical)
    matched = 0
    for target in proposed:
        for index, candidate in enumerate(remaining):
            if target == candidate or fuzz.ratio(
                target, candidate, processor=None, score_cutoff=_TARGET_MATCH_CUTOFF
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


def _tokens(command: str) -> list[str]:
    """Shell words and operators; unbalanced quotes fall back to whitespace words."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return re.findall(r"&&|\|\||[;&|<>]+|[^\s;&|<>]+", command)


def _segments(tokens: list[str]) -> list[tuple[list[str], bool]]:
    """Simple commands, each with whether it follows a pipe; redirections dropped."""
    segments: list[tuple[list[str], bool]] = []
    words: list[str] = []
    piped = after_pipe = False
    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
            continue
        if token in tables.SEGMENT_OPERATORS:
            if words:
                segments.append((words, after_pipe))
            words, after_pipe = [], token in ("|", "|&")
            piped = piped or after_pipe
            continue
        if token in tables.REDIRECTS or (token != "" and token[0] in "<>&" and set(token) <= set("<>&|")):
            if words and words[-1].isdigit():
                words.pop()  # the file descriptor of `2>&1`
            skip_next = True
            continue
        words.append(token)
    if words:
        segments.append((words, after_pipe))
    return segments


def _shapes(command: str, roots: tuple[str, ...], *, cwd: str | None, depth: int) -> list[CommandShape]:
    shapes: list[CommandShape] = []
    for words, after_pipe in _segments(_tokens(command)):
        words = _without_env(words)
        if not words:
            continue
        if words[0] in ("cd", "pushd") and len(words) == 2:
            cwd = _next_cwd(cwd, words[1])
            continue
        if after_pipe and _basename(words[0]) in tables.FILTERS:
            continue
        inner = _unwrap(words)
        if inner is None:
            continue
        if isinstance(inner, str):
            if depth < _MAX_DEPTH:
                shapes.extend(_shapes(inner, roots, cwd=cwd, depth=depth + 1))
            continue
        shape = _shape(inner, roots, cwd)
        if shape is not None:
            shapes.append(shape)
    return shapes


def _next_cwd(cwd: str | None, target: str) -> str | None:
    """Relative `cd` targets prefix later relative paths; absolute ones are roots."""
    if target.startswith(("/", "~", "$", "-")):
        return None
    joined = posixpath.normpath(posixpath.join(cwd or "", target))
    return None if joined in (".", "") else joined


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


def _unwrap(words: list[str]) -> list[str] | str | None:
    """The wrapped command's words; a `bash -c` script as a string; None for setup steps."""
    for _ in range(8):
        if not words:
            return None
        head = _basename(words[0])
        if head in tables.SETUP_PROGRAMS:
            return None
        if head == "env":
            words = _without_env(_skip_flags(words[1:]))
        elif head in ("sudo", "doas"):
            words = _skip_flags(words[1:], frozenset({"-u", "-g", "-C"}))
        elif head in tables.PLAIN_WRAPPERS:
            words = _skip_flags(words[1:])
        elif head == "nice":
            words = _skip_flags(words[1:], frozenset({"-n"}))
        elif head == "timeout":
            words = _skip_flags(words[1:])[1:]  # the duration
        elif head in tables.RUNNER_WRAPPERS and len(words) > 1 and words[1] == tables.RUNNER_WRAPPERS[head]:
            words = _skip_flags(words[2:])
        elif head in tables.NPX_LIKE:
            words = _skip_flags(words[1:], frozenset({"-p", "--package"}))
        elif head in tables.SHELLS:
            script = _shell_script(words)
            if script is not None:
                return script
            rest = _skip_flags(words[1:], frozenset())
            return rest or [head]  # `bash run.sh args` runs the script; `| sh` runs stdin
        elif tables.PYTHONS.match(head):
            return _python_words(words)
        elif head in tables.SCRIPT_INTERPRETERS and len(words) > 1 and looks_like_path(words[1]):
            words = words[1:]
            return words
        else:
            return words
    return words


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
            return ["python -c", *words[index + 1 :]]
        index += 2 if word in tables.PYTHON_VALUE_FLAGS else 1
    return words[index:] or ["python"]


def _basename(word: str) -> str:
    return posixpath.basename(word) if "/" in word else word


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


def _shape(words: list[str], roots: tuple[str, ...], cwd: str | None) -> CommandShape | None:
    program, rest = _program(words, roots, cwd)
    if not program:
        return None
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
    return CommandShape(program=program, flags=tuple(sorted(flags)), targets=tuple(sorted(targets)))


def _target(word: str, roots: tuple[str, ...], cwd: str | None) -> str:
    """A positional argument: repository-relative when it is a path; volatile parts masked."""
    if looks_like_path(word) and not word.startswith(("http:", "https:")):
        return mask_volatile(_path_target(word, roots, cwd))
    return mask_volatile(" ".join(word.split()))


def _path_target(word: str, roots: tuple[str, ...], cwd: str | None) -> str:
    path = repository_path(word, roots=roots)
    if cwd and not word.startswith(("/", "~", "$")) and not path.startswith("<"):
        path = repository_path(posixpath.join(cwd, path))
    return path
