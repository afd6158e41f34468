"""What a recorded tool call did, and why a failed one failed: the one catalogue every provider uses.

`call_outcome` reads the recorded exit code, error flag and output: a call `failed` when it
exited non-zero or the agent flagged an error, unless it never ran (the user rejected it, a
sibling's failure cancelled it, the turn was aborted: `not_run`) or it is a search that found
nothing (grep's exit 1: `no_match`, an answer). A pipeline whose status a display filter hid
(`cmd | tail`, `cmd || true`) failed when its output carries a runner's own failure summary.

`failure_cause` types a failed call from its command and output (`docs/failure-causes.md`):
table-driven, first match wins, specific causes before generic ones; `unknown` is a cause too.
Each cause names its subjects (a program, a module, paths, an option) so compare-route can tell
which later changes touch it. Every pattern runs on bounded text (`MAX_READ_CHARS`) and has no
nested quantifier over overlapping classes.

`failure_lines` finds the lines of a long output that bear a failure (a line the catalogue or a
runner's failure summary matches), so a parser that cuts the output keeps them (`parsers._text.excerpt`).
"""

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from obelisk_session_evidence.contracts.prior_calls import (
    MAX_CAUSE_SUBJECT_CHARS,
    MAX_CAUSE_SUBJECTS,
    CallOutcome,
    FailureCause,
    FailureCauseKind,
)

MAX_READ_CHARS: Final = 8192
"""Output read for an outcome or a cause (excerpts are bounded already; this bounds the work)."""
NOT_RUN: Final = re.compile(
    r"\A\s*(?:"
    r"The user doesn't want to (?:proceed|take this action)"  # Claude Code: the user rejected the call
    r"|\[Request interrupted by user"  # Claude Code: interrupted before it ended
    r"|(?:<tool_use_error>)?(?:Sibling tool call errored|Cancelled: parallel tool call)"  # a sibling failed
    r"|(?:Command |Operation )?aborted\b"  # pi, Codex: the turn was aborted
    r"|(?:User )?rejected (?:tool use|by user)"  # DSH, Codex approvals
    r"|exec command rejected"
    r"|Skipped due to queued user message"  # Oh My Pi: skipped for the user's next message (`executed: false`)
    r"|failed to parse function arguments"  # older Codex: the model's arguments did not parse, nothing ran
    r")",
    re.IGNORECASE,
)
"""Outputs of calls that never ran to an outcome of their own (anchored at the output's start)."""
SEARCH_PROGRAMS: Final = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep", "which", "type", "command -v", "command -V"}
)
"""Programs whose exit status 1 means "no match" (2 and above are their errors): searches, and
lookups of a name (`command -v shellcheck` exits 1 when it is not installed: an answer)."""
DISPLAY_FILTERS: Final = frozenset(
    {"tail", "head", "grep", "egrep", "rg", "less", "more", "cat", "sed", "awk", "cut", "sort", "uniq", "wc", "tee"}
)
"""Programs that, piped after a command, make the pipeline's status theirs."""
SHELL_GLOB_REFUSED: Final = re.compile(r"^(?:zsh|\(eval\)):\d+: no matches found: (?P<pattern>\S{1,400})", re.MULTILINE)
"""zsh refusing a command whose unquoted pattern matched no file: the command never ran, so its
status is zsh's (a search's exit 1 is then no answer), a filter after it saw nothing, and what the
rest of the pipeline printed of that empty input is no cause of its own."""
MASKED_FAILURE: Final = re.compile(
    r"^\s*[1-9]\d* (?:tests? )?fail(?:ed|ing|ures?)?\b"  # bun, mocha: ` 2 fail`
    r"|^\s*Tests?:?\s+[1-9]\d* failed"  # jest, vitest
    r"|^=+ .*\b[1-9]\d* failed\b"  # pytest's summary line
    r"|^(?:FAIL|FAILED)\b|^\(fail\) "  # `(fail) suite > test`: bun's line per failing test
    r"|\berror TS\d+"
    r"|^npm (?:ERR!|error) "
    r"|\bFound [1-9]\d* (?:errors?|diagnostics?)\b"
    r"|\b[1-9]\d* errors? generated\b"
    r"|command not found|unrecognized subcommand|unexpected argument|[Uu]nknown option|No such file or directory"
    r"|Cannot find module|ModuleNotFoundError|^fatal: "
    r"|\bexited with code [1-9]|^error: script \""
    r"|\bELIFECYCLE\b|" + SHELL_GLOB_REFUSED.pattern,
    re.MULTILINE,
)
"""A runner's own failure summary: what a masked pipeline's output shows when the command failed."""
MASKED_SUCCESS: Final = re.compile(
    r"^\s*0 fail|\b0 (?:failed|failures|errors)\b|\bFound 0 errors?\b|\bNo (?:errors|fixes applied|issues)\b"
    r"|^\s*(?:Tests?:?\s+)?\d+ pass(?:ed)?\b(?!.*\bfail)|\ball (?:tests|checks) passed\b|^=+ .*\bpassed\b(?!.*failed)"
    r"|\bSuccess(?:fully)?\b|\bsuccessfully\b|\bBuild succeeded\b|\bCompiled\b|\bFinished\b|\bDone\b",
    re.MULTILINE | re.IGNORECASE,
)
"""A runner's own success summary in a masked pipeline's output."""
LOG_READER: Final = re.compile(
    r"(?:\S*/)?(?:gh (?:run view\b.*--log|run watch\b|api \S*/logs\b)|(?:docker|podman) (?:compose )?logs\b"
    r"|kubectl logs\b|journalctl\b)"
)
"""A command printing another run's log or status (`gh run view --log-failed`, `gh api …/jobs/N/logs`,
`docker logs`, `kubectl logs`, `journalctl`, `gh run watch`): a runner's failure summary in its
output is that run's, not the command's."""
RUN_STATUS_READER: Final = re.compile(r"(?:\S*/)?gh (?:pr checks|run (?:view|watch))\b")
"""A command reporting a CI run's state (`gh pr checks`, `gh run view`, `gh run watch`): it exits
non-zero while the run fails (`gh pr checks`: 1) and while it has not finished (8)."""
RUN_UNFINISHED: Final = re.compile(
    r"^[^\t\n]{1,200}\tpending\t"  # a `gh pr checks` row
    r"|is still in progress; logs will be available",
    re.MULTILINE,
)
RUN_FAILING: Final = re.compile(r"^(?P<check>[^\t\n]{1,200})\t(?:fail|cancel)\t", re.MULTILINE)
"""A `gh pr checks` row of a check that failed: the run's outcome is known, and it failed."""
READ_ONLY_PROGRAMS: Final = frozenset(
    {"cat", "grep", "egrep", "rg", "ls", "find", "head", "tail", "awk", "wc", "echo", "printf", "ps", "jq", "od"}
    | {"xxd", "file", "stat", "du", "df", "which", "type", "diff", "sort", "uniq", "cut", "tr", "nl", "less"}
)
"""Programs whose masked pipeline is a reading, not a check: its exit status is the reading's."""
_SEGMENTS: Final = re.compile(r"\|\|?|&&|;|\n")
_QUOTED: Final = re.compile(r"""(?P<closed>'[^']*'|"(?:[^"\\]|\\.)*")|(?P<open>['"].*)|\\.?""", re.DOTALL)
"""A quoted string (single quotes keep backslashes), one left open to the end, or an escaped character."""
_ASSIGNMENT: Final = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*=\S*\Z")
_FAILING_TEST: Final = re.compile(
    r"^\s*(?:\(fail\)|[✗✕×]|●) (?P<named>[^\n]{1,300}?)(?: \[[\d.]+m?s\]| \(?\d+(?:\.\d+)? ?m?s\)?)?$"
    r"|^\s*--- FAIL: (?P<go>\S{1,300})"
    r"|^test (?P<rust>\S{1,300}) \.\.\. FAILED",
    re.MULTILINE,
)
"""A failing test as its runner names it: bun's `(fail) A > B`, vitest's `× A > B`, jest's `● A › B`,
go's `--- FAIL: TestX`, cargo's `test a::b ... FAILED`."""
_PATH: Final = re.compile(r"(?<![\w@:/.-])(?:\.{0,2}/)?(?:[\w@.+-]+/)*[\w@+-][\w@.+-]*\.[A-Za-z][\w]{0,9}\b")
"""A file-looking token (`src/a.ts`, `./x.py`, `config.exs`): a name with an extension."""


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: FailureCauseKind
    pattern: re.Pattern[str]
    names_files: bool = False
    """The cause's subjects include the file paths its output names."""


def _rule(kind: FailureCauseKind, pattern: str, *, names_files: bool = False, flags: int = re.MULTILINE) -> _Rule:
    return _Rule(kind, re.compile(pattern, flags), names_files)


CATALOGUE: Final[tuple[_Rule, ...]] = (
    _rule(
        "command_not_found",
        r"command not found: (?P<t>\S+)|(?<![\w:])(?P<s>[A-Za-z_./][\w.+/-]*): (?:command )?not found$",
    ),
    _rule("command_not_found", r"'(?P<s>[^'\n]{1,200})' is not recognized as an internal or external command"),
    # A program's missing subcommand (a plugin not installed: `cargo deny` without cargo-deny).
    _rule(
        "command_not_found",
        r"^error: no such (?:sub)?command: `(?P<s>[^`\n]{1,200})`|^git: '(?P<t>[^'\n]{1,200})' is not a git command",
    ),
    # Older Codex could not start the program it was given (no shell between: `["rg", …]`).
    _rule("command_not_found", r"\Aexecution error: No such file or directory"),
    _rule(
        "module_not_found",
        r"No module named '?(?P<s>[\w.]{1,200})"
        r"|Cannot find (?:module|package) '(?P<t>[^'\n]{1,200})'"
        r"|Could not resolve \"(?P<u>[^\"\n]{1,200})\""
        r"|could not find (?:module|package) (?P<v>\S{1,200})",
    ),
    _rule(
        "here_document_refused",
        r"can(?:'t|not) create temp file for here[ -]document",
        flags=re.MULTILINE | re.IGNORECASE,
    ),
    _rule("wrong_architecture", r"Exec format error|wrong ELF class|incompatible architecture|Bad CPU type"),
    _rule("git_ignored", r"paths are ignored by one of your \.gitignore files:\s+(?P<s>\S{1,400})"),
    _rule(
        "hook_failed",
        r"pre-commit|\bhusky\b|lint-staged|hook (?:failed|exited|declined)|\.{4,}\s*Failed\b",
        names_files=True,
    ),
    _rule("git_rejected", r"\[rejected\]|failed to push some refs|non-fast-forward|Updates were rejected"),
    _rule("nothing_to_commit", r"nothing to commit|no changes added to commit"),
    _rule(
        "uncommitted_changes",
        r"You have unstaged changes|Your index contains uncommitted changes"
        r"|Please commit (?:your changes )?or stash them|Your local changes to the following files would be overwritten"
        r"|untracked working tree files would be",
    ),
    _rule("merge_conflict", r"^CONFLICT \(|Merge conflict in (?P<s>\S{1,400})|unmerged files|fix conflicts"),
    _rule(
        "no_tests_collected",
        r"collected 0 items|no tests ran|No tests? (?:files? )?found|[1-9]\d* deselected.*\b0 selected|0 tests? ran"
        r"|No test suite found|no test files",
        flags=re.MULTILINE | re.IGNORECASE,
    ),
    _rule(
        "compile_error",
        r"\berror TS\d+|\berror\[E\d+\]|^\S{1,300}?[:(]\d+[,:]\d+\)?:? (?:- )?(?:fatal )?error\b|SyntaxError:"
        r"|== Compilation error|\(CompileError\)",
        names_files=True,
    ),
    _rule(
        "format_or_lint_refused",
        r"Formatter would have printed|would reformat|Code style issues|[1-9]\d* files? would be reformatted"
        r"|lint/\w+|\bformat ━|\borganizeImports ━|✖ [1-9]\d* problems?|[1-9]\d* (?:problems?|warnings?) \("
        r"|Found [1-9]\d* (?:errors?|issues?)"
        r"|are not properly formatted|\bcredo\b.*\bissues?\b",
        names_files=True,
    ),
    _rule(
        "test_failed",
        r"^\s*[1-9]\d* (?:tests? )?fail(?:ed|ing|ures?)?\b|^\s*Tests?:?\s+[1-9]\d* failed|^=+ .*\b[1-9]\d* failed\b"
        r"|^\s*(?:FAILED|FAIL)\b|^\s*(?:✗|✕|×|\(fail\)) |^\s*\d+\) test |AssertionError|assert(?:ion)? failed"
        r"|^test \S+ \.\.\. FAILED",
        names_files=True,
    ),
    _rule(
        "usage_error",
        r"unrecognized subcommand '(?P<s>[^'\n]{1,200})'|error: unexpected argument '(?P<t>[^'\n]{1,200})'",
    ),
    _rule(
        "usage_error",
        r"\b(?:unknown|unrecognized|invalid|illegal|unexpected|no such) (?:option|flag|argument|subcommand)s?"
        r"(?: --)?[:=]? ?['\"‘`]?(?P<s>-{0,2}[\w:.-]{1,80})",
        flags=re.MULTILINE | re.IGNORECASE,
    ),
    _rule(
        "usage_error", r"[Mm]issing script:? ['\"]?(?P<s>[\w:.-]{1,80})|[Ss]cript not found ['\"]?(?P<t>[\w:.-]{1,80})"
    ),
    _rule("usage_error", r"^[Uu]sage: (?P<s>\S{1,80})"),
    _rule(
        "auth_failed",
        r"Permission denied \(publickey|Authentication failed|could not read (?:Username|Password)|[Bb]ad credentials"
        r"|\b401 Unauthorized|HTTP 401\b|token (?:in \S+ )?is invalid|[Nn]ot logged in|[Aa]uthentication required",
    ),
    _rule(
        "permission_denied",
        # The shell could not execute a file (no execute bit): it names the file.
        r"^(?:zsh|bash|sh)(?::\d+)?: permission denied: (?P<s>\S{1,400})"
        r"|^(?:bash|sh): (?:line \d+: )?(?P<t>\S{1,400}): Permission denied",
    ),
    _rule(
        "permission_denied",
        r"Permission denied|[Oo]peration not permitted|\bEACCES\b|\bEPERM\b"
        r"|sandbox(?:ed)? (?:denied|blocked|violation)",
    ),
    _rule(
        "connection_refused",
        r"ECONNREFUSED|[Cc]onnection refused|ENOTFOUND|getaddrinfo|Name or service not known|[Nn]etwork is unreachable"
        r"|[Cc]ould not connect to (?P<s>\S{1,200})"
        r"|^(?P<r>[^\s:]{1,200}:\d{1,5}) - (?:no response|rejecting connections)$",  # pg_isready: no server there yet
    ),
    _rule("timeout", r"[Tt]imed? ?out\b|[Tt]imeout (?:waiting|of \d+ms exceeded)|\bETIMEDOUT\b|deadline exceeded"),
    _rule(
        "path_not_found",
        r"cannot access '(?P<s>[^'\n]{1,400})'|can't open file '(?P<t>[^'\n]{1,400})'"
        r"|no matches found: (?P<u>\S{1,400})|(?P<v>\S{1,400}): No such file or directory"
        r"|No such file or directory|\bENOENT\b|[Nn]o such file"
        r"|\b(?:[Ff]ile|[Dd]irectory|[Ff]older|[Pp]ath)\b[^\n]{0,200}?\bdoes not exist|\S/\S*:? does not exist",
        names_files=True,
    ),
    _rule("is_a_directory", r"Is a directory|\bEISDIR\b"),
    _rule("tool_error", r"^(?:[\w.+/-]+: )?(?:error|fatal|ERROR|FATAL)(?:\[\w+\])?: ?(?P<s>[^\n]{0,200})"),
)
"""(kind, pattern): the first rule whose pattern the output matches types the failure."""


_FAILURE_WORDS: Final = (
    *("fail", "error", "fatal", "npm err", "not found", "enotfound", "matches found", "issue", "not recognized"),
    *("unrecognized", "unexpected", "unknown", "invalid", "illegal", "no such", "cannot find", "cannot access"),
    *("can't open", "could not", "no module", "exited with code", "elifecycle", "wrong elf", "incompatible arch"),
    *("bad cpu", "paths are ignored", "pre-commit", "husky", "lint/", "lint-staged", "hook exited", "hook declined"),
    *("rejected", "non-fast-forward", "nothing to commit", "no changes added", "conflict", "unmerged"),
    *("collected 0", "no test", "deselected", "0 test", "would reformat", "would have printed"),
    *("would be reformatted", "code style", "━", "problem", "warnings (", "warning (", "properly formatted"),
    *("✗", "✕", "×", ") test ", "usage:", "missing script", "denied", "not permitted", "eacces", "eperm"),
    *("sandbox", "refused", "getaddrinfo", "not known", "unreachable", "timed out", "timedout", "time out"),
    *("timeout", "deadline exceeded", "enoent", "not exist", "is a directory", "eisdir"),
    *("authentication", "bad credentials", "http 401", "401 unauthorized", "not logged in"),
    *("unstaged", "uncommitted", "stash them", "would be overwritten", "here document", "here-document"),
    *("not a git command", "no response", "rejecting connections"),
)
"""Lower-cased words of which every line a failure pattern matches holds one (a line is read by the
patterns only when it holds one: a word search runs at the speed of a string search, the patterns
do not). A new rule's words belong here: `tests/providers/test_failure_causes.py` checks its table."""


def _prefix_tree(words: Sequence[str]) -> str:
    """An alternation of `words` sharing their prefixes (`f(?:a(?:il|tal)|ound)`): the regex engine
    tries each first character once instead of each word (three times faster than a flat list)."""
    following: dict[str, list[str]] = {}
    for word in words:
        following.setdefault(word[0], []).append(word[1:])
    branches = []
    for first, rests in sorted(following.items()):
        if "" in rests:  # where a word starts is all a search needs: the shortest one found it
            branches.append(re.escape(first))
        elif len(rests) == 1:
            branches.append(re.escape(first + rests[0]))
        else:
            branches.append(f"{re.escape(first)}(?:{_prefix_tree(rests)})")
    return "|".join(branches)


_FAILURE_WORD: Final = re.compile(_prefix_tree(_FAILURE_WORDS))
_FAILURE_WORD_ANY_CASE: Final = re.compile(_FAILURE_WORD.pattern, re.IGNORECASE)
_LONGEST_WORD: Final = max(len(word) for word in _FAILURE_WORDS)
_WORD_WINDOW: Final = 64 * 1024
"""Characters lower-cased at a time: a long output is never copied whole."""
MAX_FAILURE_CANDIDATES: Final = 64
"""Most lines holding a failure word that one call of `failure_lines` reads with the patterns."""
MAX_FAILURE_LINE_READ: Final = 200
"""Characters of a line the patterns read."""


def failure_lines(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The whole lines inside `text[start:end]` that bear a failure, as `(start, end)` spans
    without their newline, in order: each line that holds a failure word is read by
    `MASKED_FAILURE` and the catalogue, the first `MAX_FAILURE_CANDIDATES` such lines at most. One
    pass over the range, however long; stop iterating to stop the work."""
    candidates, next_line = 0, start
    for word_at in _failure_words(text, start, end):
        if word_at < next_line:
            continue
        if candidates == MAX_FAILURE_CANDIDATES:
            return
        candidates += 1
        line_start = text.rfind("\n", max(start - 1, 0), word_at) + 1
        line_end = text.find("\n", word_at, end)
        if line_end == -1:
            line_end = len(text) if end == len(text) else -1
        if line_end == -1:
            return  # the last line runs on past the range
        whole = line_start > 0 or start == 0  # a line that began before the range is not in it
        if whole and _bears_failure(text[line_start : min(line_end, line_start + MAX_FAILURE_LINE_READ)]):
            yield line_start, line_end
        next_line = line_end + 1


def _failure_words(text: str, start: int, end: int) -> Iterator[int]:
    """Where failure words start in `text[start:end]`, in order, a window lower-cased at a time."""
    for window_start in range(start, end, _WORD_WINDOW):
        window_end = min(end, window_start + _WORD_WINDOW)
        reach = min(end, window_end + _LONGEST_WORD - 1)  # a word that starts in the window may end past it
        window = text[window_start:reach].lower()
        if len(window) == reach - window_start:
            found = _FAILURE_WORD.finditer(window)
            offset = window_start
        else:  # lower-casing moved offsets (`İ`): search the text itself, case-blind
            found = _FAILURE_WORD_ANY_CASE.finditer(text, window_start, reach)
            offset = 0
        for word in found:
            if word.start() + offset >= window_end:
                break
            yield word.start() + offset


def _bears_failure(line: str) -> bool:
    return MASKED_FAILURE.search(line) is not None or any(rule.pattern.search(line) for rule in CATALOGUE)


def call_outcome(command: str, *, exit_code: int | None, is_error: bool | None, output: str) -> CallOutcome:
    """What a recorded call did (see the module docstring)."""
    return _outcome(command, exit_code, is_error, output, success_summary=True)


def call_failed(command: str, *, exit_code: int | None, is_error: bool | None, output: str) -> bool:
    """`call_outcome(...) == "failed"`, without reading a masked pipeline's output for a success
    summary, which only tells `succeeded` from `unknown` (index time: about half the outcome's cost)."""
    return _outcome(command, exit_code, is_error, output, success_summary=False) == "failed"


def _outcome(
    command: str, exit_code: int | None, is_error: bool | None, output: str, *, success_summary: bool
) -> CallOutcome:
    text = output[:MAX_READ_CHARS]
    if NOT_RUN.search(text[:400]):
        return "not_run"
    if bool(is_error) or (exit_code is not None and exit_code != 0):
        if _reports_unfinished_run(command, text):
            return "unknown"  # the watched run has no outcome yet: waiting, not a failure of the call
        searched = last_program(command) in SEARCH_PROGRAMS and not SHELL_GLOB_REFUSED.search(text)
        return "no_match" if exit_code == 1 and searched else "failed"
    if exit_code is None and is_error is None:
        return "unknown"
    if not _masked(command):
        return "succeeded"
    if LOG_READER.match(_without_assignments(_segments(command)[:1])):
        return "unknown"  # its status is hidden, and the failures its output shows are the logged run's
    if MASKED_FAILURE.search(text):
        return "failed"
    if not success_summary:
        return "unknown"  # not failed; whether it succeeded was not asked
    # A filter's status says nothing of the command before it: only its own summary does.
    return "succeeded" if MASKED_SUCCESS.search(text) or _reads_only(command) else "unknown"


def _reports_unfinished_run(command: str, text: str) -> bool:
    """`command` ends in a CI status reading that reports a run still pending, and none of its
    checks failed (a failed check is the run's failure, which stands)."""
    return _reads_run_status(command) and RUN_UNFINISHED.search(text) is not None and RUN_FAILING.search(text) is None


def _reads_run_status(command: str) -> bool:
    """`command` ends in a CI status reading: its status is the reading's."""
    segments = _segments(command)
    return bool(segments) and RUN_STATUS_READER.match(_without_assignments(segments[-1:])) is not None


def failure_cause(command: str, *, exit_code: int | None, output: str) -> FailureCause:
    """The typed cause of a failed call (`unknown` when no rule matches)."""
    text = output[:MAX_READ_CHARS]
    if _reads_run_status(command) and RUN_FAILING.search(text):
        return _cause("checks_failed", [row.group("check") for row in RUN_FAILING.finditer(text)])
    if exit_code == 127 and not text.strip():
        return _cause("command_not_found", [first_program(command)])
    if (refused := SHELL_GLOB_REFUSED.search(text)) is not None:
        return _cause("path_not_found", [refused.group("pattern")])
    for rule in CATALOGUE:
        found = rule.pattern.search(text)
        if found is None:
            continue
        subjects = [value for value in found.groupdict().values() if value]
        if rule.kind == "command_not_found" and not subjects:
            subjects = [first_program(command)]
        if rule.names_files:
            subjects += _PATH.findall(text)
        if rule.kind != "test_failed":
            return _cause(rule.kind, subjects)
        tests = [next(name for name in found.groups() if name) for found in _FAILING_TEST.finditer(text)]
        return _cause(rule.kind, subjects, tests)
    return _cause("unknown", _PATH.findall(text))


def last_program(command: str) -> str:
    """The program of the command's last segment (a pipeline's exit status is its last command's)."""
    return _program(_segments(command)[-1:])


def first_program(command: str) -> str:
    """The program of the command's first segment."""
    return _program(_segments(command)[:1])


def _reads_only(command: str) -> bool:
    """Every segment of the command only reads (`cat f | head`, `git log | grep x`)."""
    return all(_program([segment]) in READ_ONLY_PROGRAMS for segment in _segments(command))


def _masked(command: str) -> bool:
    """The command's status is a display filter's (`| tail`), or `|| true` / `; echo` hid it."""
    if "||" in command or re.search(r";\s*echo\b", command):
        return True
    if "|" not in command:
        return False
    return last_program(command) in DISPLAY_FILTERS


def _segments(command: str) -> list[str]:
    """The command's segments between `|`, `||`, `&&`, `;` and newlines outside quotes."""
    return [part.strip() for part in _SEGMENTS.split(_unquoted(command[:MAX_READ_CHARS])) if part.strip()]


def _unquoted(command: str) -> str:
    """`command` with every quoted or escaped character blanked (`grep "a\\|b"` keeps its quotes, not
    its `|`); a quote left open blanks the rest."""
    return _QUOTED.sub(_blanked, command)


def _blanked(found: re.Match[str]) -> str:
    text = found.group()
    if found.lastgroup == "closed":
        return text[0] + "_" * (len(text) - 2) + text[-1]
    if found.lastgroup == "open":
        return text[0] + "_" * (len(text) - 1)
    return "_" * len(text)


def _without_assignments(segments: Sequence[str]) -> str:
    """The first segment without its leading `NAME=value` words."""
    words = segments[0].split() if segments else []
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    return " ".join(words)


def _program(segments: Sequence[str]) -> str:
    if not segments:
        return ""
    words = [word for word in segments[0].split() if not _ASSIGNMENT.match(word)]
    if words[:2] in (["git", "grep"], ["command", "-v"], ["command", "-V"]):
        return " ".join(words[:2])
    return words[0].rsplit("/", 1)[-1] if words else ""


def _cause(kind: FailureCauseKind, subjects: Sequence[str], tests: Sequence[str] = ()) -> FailureCause:
    return FailureCause(kind=kind, subjects=_bounded(subjects), tests=_bounded(tests))


def _bounded(names: Sequence[str]) -> list[str]:
    kept = list(dict.fromkeys(name.strip("'\"`‘’,;:()") for name in names if name.strip()))
    return [name[:MAX_CAUSE_SUBJECT_CHARS] for name in kept if name][:MAX_CAUSE_SUBJECTS]
