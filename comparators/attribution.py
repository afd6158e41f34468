"""Which simple command of a call failed, what made it fail, and failures a pipe hid.

A chain's exit code belongs to the whole chain; the comparator needs the segment. The failing
segment is the one whose program's own error the output shows (`git: fatal:`, `ls: cannot
access`, a Python traceback, `foo: command not found`); without one, the first segment of an
`&&` chain that can fail at all (not `echo`), or the last segment of a `;` list or of a chain
that printed nothing. Segments after
a failed `&&` never ran. When `| head`, `|| true` or `; echo` hid the status (exit 0), the output
is read for the program's own failure signals (`bench/masked_failures.py` measures how often
that flags a call that in fact succeeded). The output also names the meaning-bearing arguments
of a failure: the ignored path, the unknown flag, the missing file.
"""

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from obelisk_session_evidence.comparators.commands import CommandShape

MAX_SCANNED_CHARS: Final = 8192
"""Output read for signals (excerpts are bounded already; this bounds the work)."""
NEVER_FAIL: Final = frozenset({"echo", "printf", "true", ":", "pwd", "date", "sleep", "clear"})
FAILURE_SIGNAL: Final = re.compile(
    r"^[ \t]*(?:[\w.+/-]+: )*(?:error|fatal|ERROR|FATAL)(?:\[\w+\])?:"
    r"|Traceback \(most recent call last\)"
    r"|command not found|: not found$"
    r"|No such file or directory"
    r"|\b(?:unknown|unrecognized|invalid) (?:option|flag|argument)s?\b"
    r"|^npm ERR!|^npm error "
    r"|^[ \t]*\*\* \([A-Z][\w.]*\) "  # an Elixir/Erlang exception the VM printed: `** (Mix) …`
    # a compiler's `file(1,2): error TS…`, `file:1:2: error`
    r"|^[\w./+-]+(?:\(\d+,\d+\)|(?::\d+){1,2}): (?:fatal )?error\b",
    re.M,
)
"""A program's own failure signals, as a masked exit code leaves them in the output. Indents are
spaces and tabs, not any whitespace: from every line start of a run of blank lines, an indent that
crossed line breaks rescanned the rest of the run (quadratic); a signal after blank lines still
matches at its own line's start."""
_HERE_DOCUMENT_REFUSED: Final = re.compile(r"can(?:'t|not) create temp file for here[ -]document", re.IGNORECASE)
"""The shell could not write a here-document: the failure is the command that reads it."""
GLOB_REFUSED: Final = re.compile(r"\bno matches found: (?P<pattern>\S{1,400})")
"""zsh's refusal of a command whose unquoted pattern matched no file: the failure is the command
passing that pattern, whatever the rest of a pipeline then printed of its empty output."""
_NOT_FOUND: Final = re.compile(
    r"^(?:\S+: )?(?:line \d+: )?(?P<a>[^\s:]+): (?:command )?not found$|command not found: (?P<b>\S+)$", re.M
)
_PREFIX: Final = re.compile(r"^(?:\S*/)?(?P<name>[\w.+-]+): ", re.M)
_PROGRAM_SIGNALS: Final = {
    "git commit": re.compile(
        r"[Pp]re-commit|\bhook\b|nothing to commit|no changes added to commit|Author identity unknown"
    ),
    "git add": re.compile(r"ignored by one of your \.gitignore|pathspec '[^']*' did not match"),
    "git push": re.compile(r"\[rejected\]|failed to push|non-fast-forward"),
}
"""A subcommand's own failure text, read before its program's (`git add` before `git commit`)."""
_TEST_SUMMARY: Final = re.compile(
    r"\b\d+ (?:failed|failing|failures?|errors?)\b|^(?:FAILED|FAIL|ERROR)\b|^Tests?: .*\bfailed", re.M
)
"""A test runner's summary of failing tests: it belongs to the segment that ran the tests."""
_FAILED_TESTS: Final = re.compile(r"\b[1-9]\d* (?:tests? )?(?:failed|failing|failures?)\b")
"""A summary that counts failed tests (not `0 failures`): a masked test run that failed."""
_TEST_RUNNERS: Final = frozenset(
    {"pytest", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "tox", "nox", "unittest"}
)
_TASK_RUNNERS: Final = frozenset({"make", "just", "rake", "task", "invoke"})
"""Programs whose target names the task (`make test`)."""
_FAMILY_SIGNALS: Final = {
    "git": re.compile(r"^(?:fatal|error): |^The following paths are ignored by one of your", re.M),
    "python": re.compile(r"^Traceback \(most recent call last\)|^\w+(?:Error|Exception): ", re.M),
    "npm": re.compile(r"^npm (?:ERR!|error) ", re.M),
    "node": re.compile(r"^node:internal|^Error: Cannot find module", re.M),
    "cargo": re.compile(r"^error(?:\[E\d+\])?: ", re.M),
}
_CULPRITS: Final = (
    re.compile(r"(?:unknown|unrecognized|invalid|unexpected) (?:option|flag|argument)s?:?\s*['\"‘`]?(-{1,2}[\w-]+)"),
    re.compile(r"no such option:?\s*['\"]?(-{1,2}[\w-]+)"),
    re.compile(r"pathspec '([^']+)' did not match"),
    re.compile(r"(?:cannot access|can't open file|cannot open|cannot stat) ['‘\"]([^'’\"]+)['’\"]"),
    re.compile(r"^[\w.+-]+: (?:cannot access )?([^:\s]+): No such file or directory", re.M),
)
_IGNORED_HEADER: Final = "The following paths are ignored by one of your .gitignore files:"
_AGENT_FRAMING: Final = re.compile(
    r"^(?:Exit code -?\d+|Process exited with code -?\d+|Command exited with code -?\d+|Chunk ID: \S+"
    r"|Wall time: .*|Original token count: \d+|Output:|Process running with session ID \d+"
    r"|<system>.*</system>)\s*$",
    re.M,
)
"""Lines the agent, not the program, writes around an output (Claude, Codex, pi, kimi)."""


@dataclass(frozen=True, slots=True)
class Attribution:
    """How a call's simple commands ended."""

    failed: bool
    """True when the call failed, its exit code or a masked failure signal says so."""
    failing: int | None
    """Index of the failing shape; None when the call did not fail (or has no shapes)."""
    skipped: frozenset[int]
    """Shapes that never ran: after the failing one, joined by `&&`."""
    masked: bool
    """True when the exit code hid the failure and the output showed it."""
    not_found: bool
    """True when the failing program was not found (`command not found`, exit 127)."""
    culprits: tuple[str, ...]
    """Arguments the failure names: flags (`--yes`) and paths (ignored, missing)."""
    in_view: bool = False
    """The failing shape's output filter failed (`curl … | jq 'bad'`: `jq: error`), not the shape."""


def attribute(
    shapes: Sequence[CommandShape],
    output: str,
    *,
    failed: bool | None,
    exit_code: int | None,
    outcome_known: bool = False,
    errexit: bool = False,
) -> Attribution:
    """The attribution of a call with these shapes, this output and this recorded outcome.

    `outcome_known`: the provider already read a hidden failure from the output
    (`providers.failure_causes.call_outcome`), so a success here is one, never re-read.
    `errexit`: `set -e` made the first failing command end the call (`ParsedCommand.errexit`)."""
    text = _bounded(output)
    masked = False
    if failed is False and outcome_known:
        return _SUCCEEDED
    if failed is not True:
        masked_index = _masked_failure(shapes, text)
        if masked_index is None:
            return _SUCCEEDED
        failing, masked, culprits = masked_index, True, _culprits(text)
    else:
        culprits = _culprits(text)
        if not shapes:
            return Attribution(True, None, frozenset(), False, exit_code == 127, culprits)
        signalled = _signalled(
            shapes,
            text,
            signal=FAILURE_SIGNAL.search(text) is not None,
            culprits=culprits,
            status_from=0 if errexit else _last_list_member(shapes),
        )
        failing = signalled if signalled is not None else _unsignalled_failure(shapes, text)
    skipped = set()
    for index in range(failing + 1, len(shapes)):
        if shapes[index].joined_by != "&&":
            break
        skipped.add(index)
    return Attribution(
        failed=True,
        failing=failing,
        skipped=frozenset(skipped),
        masked=masked,
        not_found=exit_code == 127 or _not_found(shapes[failing], text),
        culprits=culprits,
        in_view=_view_failed(shapes[failing], text, opening_is_enough=not masked),
    )


_SUCCEEDED: Final = Attribution(False, None, frozenset(), False, False, ())


def _view_failed(shape: CommandShape, text: str, *, opening_is_enough: bool) -> bool:
    """The first program the output names is the shape's output filter, not the shape: the filter
    erred (`jq: error: …`), and what the shape says after it (`curl: (23) Failure writing output`)
    is the broken pipe it left. `opening_is_enough`: the call's own status says it failed, and a
    pipeline's status is its last filter's, so the filter's line opening the output says so without
    a failure word (`sed: 1: "s#^#/##": bad flag in substitute command`)."""
    if not shape.view:
        return False
    first = next(_PREFIX.finditer(text), None)
    opens = first is not None and opening_is_enough and not _AGENT_FRAMING.sub("", text[: first.start()]).strip()
    if FAILURE_SIGNAL.search(text) is None and not opens:
        return False
    filters = {posixpath.basename(view.removeprefix("| ").split(" ", 1)[0]) for view in shape.view}
    return first is not None and first["name"] in filters and first["name"] not in _names(shape)


def has_failure_signal(output: str) -> bool:
    """True when the output shows a program's own failure signal."""
    return FAILURE_SIGNAL.search(_bounded(output)) is not None


def _bounded(output: str) -> str:
    if len(output) <= MAX_SCANNED_CHARS:
        return output
    half = MAX_SCANNED_CHARS // 2
    return output[:half] + "\n" + output[-half:]


def _names(shape: CommandShape) -> set[str]:
    first = shape.program.split(" ")[0]
    return {posixpath.basename(shape.head), posixpath.basename(first), first}


def _family(shape: CommandShape) -> str:
    first = shape.program.split(" ")[0]
    if first == "python" or shape.program.endswith(".py") or first in ("pytest", "pip", "uv"):
        return "python"
    if first == "node" or shape.program.startswith("npm run"):
        return "node" if first == "node" else "npm"
    return first


def _signalled(
    shapes: Sequence[CommandShape], text: str, *, signal: bool, culprits: tuple[str, ...], status_from: int = 0
) -> int | None:
    """The first shape whose own error the output shows (`signal`: a generic one is there;
    `culprits`: the arguments the output names, `_culprits`; `status_from`: the first shape of the
    list member whose status is the call's exit code, `_last_list_member`)."""
    if not text or not shapes:
        return None
    if _HERE_DOCUMENT_REFUSED.search(text):
        reading = next((index for index, shape in enumerate(shapes) if shape.here_document), None)
        if reading is not None:
            return reading
    for refused in GLOB_REFUSED.finditer(text):
        globbing = next((index for index, shape in enumerate(shapes) if refused["pattern"] in shape.globbed), None)
        if globbing is not None:
            return globbing
    for match in _NOT_FOUND.finditer(text):
        name = posixpath.basename(match["a"] or match["b"] or "")
        for index, shape in enumerate(shapes):
            if name in _names(shape):
                return index
    for culprit in culprits:  # `unknown flag: --short`: the command that passed it
        passing = [index for index, shape in enumerate(shapes) if culprit.startswith("-") and culprit in shape.flags]
        if len(passing) == 1:
            return passing[0]
    for index, shape in enumerate(shapes):
        own = _PROGRAM_SIGNALS.get(shape.program)
        if own is not None and own.search(text):
            return index
    if _TEST_SUMMARY.search(text):
        for index, shape in enumerate(shapes):
            if _runs_tests(shape):
                return index
    named = {match["name"] for match in _PREFIX.finditer(text)} if signal else set()
    candidates = [
        index
        for index, shape in enumerate(shapes)
        if _names(shape) & named
        or ((pattern := _FAMILY_SIGNALS.get(_family(shape))) is not None and pattern.search(text))
    ]
    # Several commands of one program: of `git branch; git rev-parse @{u}` the exit code is the
    # last one's, so a `fatal:` both could print is its; of `git fetch && git pull`, the one whose
    # subcommand the output names (`cannot pull with rebase`), else the first.
    candidates = [index for index in candidates if index >= status_from] or candidates
    return next((index for index in candidates if _subcommand_named(shapes[index], text)), next(iter(candidates), None))


def _last_list_member(shapes: Sequence[CommandShape]) -> int:
    """The first shape after the last `;` or `&`: of `a; b && c` the exit code is `b && c`'s."""
    return max((index for index, shape in enumerate(shapes) if shape.joined_by in (";", "&")), default=0)


def _subcommand_named(shape: CommandShape, text: str) -> bool:
    words = shape.program.split(" ")
    return len(words) > 1 and re.search(rf"\b{re.escape(words[-1])}\b", text) is not None


def _runs_tests(shape: CommandShape) -> bool:
    words = shape.program.split(" ")
    if words[0] in _TASK_RUNNERS:
        return any(target.startswith("test") for target in shape.targets)
    return words[0] in _TEST_RUNNERS or "test" in words[1:] or words[-1].startswith("test")


def _unsignalled_failure(shapes: Sequence[CommandShape], text: str) -> int:
    """Without a signal: the first shape of an `&&` chain that can fail, else the last shape.

    A chain that printed nothing at all is blamed on its last shape: every program that ran
    stayed silent, as a chain's closing predicate does (`test -f`, `grep -q`, `diff -q`), and a
    program failing earlier would have said why.
    """
    if _AGENT_FRAMING.sub("", text).strip() and all(shape.joined_by in ("", "&&", "|", "|&") for shape in shapes):
        for index, shape in enumerate(shapes):
            if shape.program not in NEVER_FAIL and shape.next_op not in ("|", "|&"):
                return index
    return len(shapes) - 1


def _masked_failure(shapes: Sequence[CommandShape], text: str) -> int | None:
    """The shape whose failure a pipe, `|| true` or a later `;` command hid, when the output shows it."""
    masked = [index for index in range(len(shapes)) if _status_hidden(shapes, index)]
    if not masked:
        return None
    if FAILURE_SIGNAL.search(text) is None:
        # No program error; a test runner whose summary counts failed tests still failed.
        runners = [index for index in masked if _runs_tests(shapes[index])]
        return runners[0] if runners and _FAILED_TESTS.search(text) else None
    signalled = _signalled(shapes, text, signal=True, culprits=_culprits(text))
    if signalled is not None:
        return signalled if signalled in masked else None
    return masked[0] if len(masked) == 1 else None


def _status_hidden(shapes: Sequence[CommandShape], index: int) -> bool:
    shape = shapes[index]
    if shape.next_op in ("|", "|&", "||"):
        return True
    return shape.next_op in (";", "&") or (index < len(shapes) - 1 and shapes[index + 1].joined_by == ";")


def _not_found(shape: CommandShape, text: str) -> bool:
    return any(
        posixpath.basename(match["a"] or match["b"] or "") in _names(shape) for match in _NOT_FOUND.finditer(text)
    )


def _culprits(text: str) -> tuple[str, ...]:
    found: list[str] = []
    if _IGNORED_HEADER in text:
        for line in text.split(_IGNORED_HEADER, 1)[1].splitlines()[1:]:
            if not line.strip() or line.startswith(("hint:", "Use ", "fatal:")):
                break
            found.append(line.strip())
    for pattern in _CULPRITS:
        found.extend(match.group(1) for match in pattern.finditer(text))
    return tuple(dict.fromkeys(word.strip("'\"‘’`") for word in found))[:16]
