"""A free-text LoopX query as the route compare-route judges: a command, files, or a hypothesis.

The text LoopX sends (`recall-context --query`, the chat server's "Find evidence") is read in
this order, and only one way:

1. **A command line** is compared as a command (exact and near repeats of earlier runs, their
   exit codes): the query starts (after `VAR=value` assignments) with a program this project's
   command grammar knows (`COMMAND_PROGRAMS`) or with a path to a script (`./run.sh`,
   `bin/check`, `scripts/ci.sh`, not `tests/test_auth.py`), does not end with a question mark, and has no prose word
   outside quotes (`PROSE_WORDS`: `the`, `why`, `failed`, ...).
   `pytest tests/test_auth.py -x`, `make lint`, `FOO=1 npm test`, `./scripts/ci.sh --fast`,
   `git commit -m "fix the failing test"` are commands; `pytest auth failure` and
   `make the build pass` are not (they fall through to 2 or 3).
2. **Files**: a query naming files or folders (a word with a `/`, or with a file suffix such as
   `.py`) is compared as those files (earlier edits and changes to them); its other words, if
   any, are the hypothesis too. `why does tests/test_auth.py fail` gives the file
   `tests/test_auth.py` and the hypothesis `why does fail`.
3. **Hypothesis text**: anything else is compared as hypothesis words against earlier
   sessions' text. `token refresh races the login redirect`.

Words are runs of letters, digits and `._/-` (2-64 characters, at most `MAX_QUERY_WORDS`,
de-duplicated); quotes, operators and punctuation are dropped, and the provider escapes every
term as data. LoopX's fixed `prepare-evidence` query (`current decision evidence`) names no
step: it stands for resuming where the agent left off, and the lookup gives it the scope's most
recent unresolved failures as commands (`scoped_lookup.resume_route`). The query itself stays in
the private situation.
"""

import re
from typing import Final

from obelisk_session_evidence.comparators.command_tables import (
    BIN_DIRS,
    CHECK_PROGRAMS,
    FILTERS,
    NPX_LIKE,
    PLAIN_WRAPPERS,
    PROGRAM_ALIASES,
    RUNNER_WRAPPERS,
    SCRIPT_INTERPRETERS,
    SCRIPT_RUNNERS,
    SETUP_PROGRAMS,
    SHELLS,
    SUBCOMMAND_PROGRAMS,
)
from obelisk_session_evidence.contracts.situation import MAX_COMMAND_CHARS, MAX_ROUTE_FILES, RouteProposal

MAX_QUERY_WORDS: Final = 12
WORD: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{1,63}")
LOOPX_PREPARE_QUERY: Final = "current decision evidence"
"""The query `prepare-evidence` always sends (`assemble_profile_decision_evidence`)."""
RESUME: Final = "resume"
"""The action kind of the route LoopX's `prepare-evidence` stands for: resume what failed last."""
ENVIRONMENT_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
PYTHON: Final = re.compile(r"^(?:python(?:\d(?:\.\d+)?)?|pypy\d?)$")
SCRIPT_SUFFIXES: Final = (".sh", ".bash", ".zsh")
FILE_SUFFIX: Final = re.compile(r"\.(?:[chmrs]|(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{2,8})$")
COMMAND_PROGRAMS: Final = frozenset(
    {
        *SHELLS,
        *SCRIPT_INTERPRETERS,
        *PLAIN_WRAPPERS,
        *RUNNER_WRAPPERS,
        *NPX_LIKE,
        *SETUP_PROGRAMS,
        *FILTERS,
        *PROGRAM_ALIASES,
        *PROGRAM_ALIASES.values(),
        *SUBCOMMAND_PROGRAMS,
        *SCRIPT_RUNNERS,
        *(check.split()[0] for check in CHECK_PROGRAMS),
        # Build, check and shell tools the grammar's tables do not need to single out.
        *("make", "cmake", "ninja", "just", "tsc", "eslint", "prettier", "black", "isort", "mypy"),
        *("pyright", "flake8", "pylint", "ls", "cat", "cd", "rg", "find", "curl", "wget", "echo"),
        *("rm", "cp", "mv", "mkdir", "touch", "chmod", "env", "sudo", "export", "source", "ssh"),
        *("scp", "rsync", "tar", "psql", "sqlite3", "jq", "java", "javac", "gcc", "clang"),
    }
)
"""Programs a command-line query may start with: the command grammar's vocabulary, and more."""
PROSE_WORDS: Final = frozenset(
    {
        *("a", "an", "the", "is", "are", "was", "were", "be", "been", "does", "did", "do", "why", "how"),
        *("what", "when", "where", "which", "again", "still", "before", "after", "because", "that"),
        *("this", "it", "not", "no", "and", "or", "but", "of", "on", "in", "for", "with", "about"),
        *("fail", "fails", "failed", "failing", "failure", "failures", "error", "errors", "broken"),
        *("breaks", "broke", "crash", "crashes", "crashed", "pass", "passes", "passed", "works"),
    }
)
"""Words that make a query prose, not a command, when they stand outside quotes after the program
(a command's own arguments rarely are English function or outcome words)."""
QUOTED: Final = re.compile(r"\"[^\"]*\"|'[^']*'")


def query_words(query: str) -> list[str]:
    """The bounded words of a free-text query, in order (none for LoopX's fixed query)."""
    if _is_prepare_query(query):
        return []
    words: list[str] = []
    for token in query.split():
        match = WORD.fullmatch(_trimmed(token))
        if match is not None and match.group(0) not in words:
            words.append(match.group(0))
    return words[:MAX_QUERY_WORDS]


def query_route(query: str) -> RouteProposal:
    """The route a free-text query stands for (see the module docstring); for LoopX's fixed
    `prepare-evidence` query an empty `resume` route, which the lookup fills with the scope's
    most recent unresolved failures."""
    text = " ".join(query.split())
    if _is_prepare_query(text):
        return RouteProposal(action_kind=RESUME)
    if not text:
        return RouteProposal(action_kind="lookup")
    if is_command_line(text):
        return RouteProposal(action_kind="shell", commands=[text[:MAX_COMMAND_CHARS]])
    words = query_words(text)
    files = [word for word in words if names_file(word)][:MAX_ROUTE_FILES]
    rest = " ".join(word for word in words if word not in files) or None
    return RouteProposal(action_kind="lookup", files=files, hypothesis=rest)


def is_command_line(text: str) -> bool:
    """True when `text` reads as a shell command: a known program or a script path first, and
    no prose word outside quotes."""
    if text.endswith("?"):
        return False
    tokens = text.split()
    while tokens and ENVIRONMENT_ASSIGNMENT.match(tokens[0]):
        tokens = tokens[1:]
    if not tokens:
        return False
    first = tokens[0]
    # A script by path (`./run`, `bin/check`, `scripts/ci.sh`); `tests/test_auth.py` names a file.
    script = first.startswith(("./", "../", "~/")) or first.endswith(SCRIPT_SUFFIXES) or BIN_DIRS.search(first)
    if not (first in COMMAND_PROGRAMS or PYTHON.match(first) or script):
        return False
    unquoted = QUOTED.sub(" ", " ".join(tokens[1:])).split()
    return not any(_trimmed(token).lower() in PROSE_WORDS for token in unquoted)


def names_file(word: str) -> bool:
    """True for a query word that names a file or folder: it has a `/`, or a file suffix
    (`auth.py`, `README.md`, `io.c`; not `v1.2`, `3.14` or `e.g`)."""
    return "/" in word or FILE_SUFFIX.search(word) is not None


def _is_prepare_query(query: str) -> bool:
    return " ".join(query.split()) == LOOPX_PREPARE_QUERY


def _trimmed(token: str) -> str:
    return token.strip(".,;:!?()[]{}\"'`")
