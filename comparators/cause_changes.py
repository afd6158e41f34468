"""Which later changes touch a failure's cause: a prior failure stands until one does.

A failed call carries a typed cause (`contracts.prior_calls.FailureCause`, from the catalogue in
`providers.failure_causes`). A change made after it (an edit, a file-changing command, an install,
a pull) supersedes it only when it touches what the cause names or depends on:

the rule per cause is in `docs/failure-causes.md` (environment causes by installs and manifests,
a missing path by its creation, a check's failure by changes to the files it or its output names,
their relatives and the project's configuration; with no file named, a whole-tree check by any).

Temporary paths never count: a command that only touches `/tmp` changes nothing a repository
command reads.
"""

import math
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from obelisk_session_evidence.comparators.changes import (
    SCRIPT_RUNNERS,
    changed_paths,
    is_project_config,
    sees_whole_tree,
)
from obelisk_session_evidence.comparators.commands import CommandShape
from obelisk_session_evidence.comparators.paths import (
    looks_like_path,
    names_file,
    related_files,
    repository_path,
    same_file,
    tests_module_of,
    without_position,
)
from obelisk_session_evidence.contracts.prior_calls import FailureCause, FailureCauseKind

REFORMAT_TOUCHES: Final[frozenset[FailureCauseKind]] = frozenset(
    {
        "format_or_lint_refused",
        "hook_failed",
        "nothing_to_commit",
        "unknown",
        "tool_error",
        "connection_refused",
        "timeout",
    }
)
"""Causes a formatter's rewrite can touch (a hook formats; an unknown cause may be style; time
changes a wait or a connection whatever else happened)."""
MANIFESTS: Final = frozenset(
    {
        "package.json",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "makefile",
        "justfile",
        "mix.exs",
        "cargo.toml",
        "go.mod",
        "gemfile",
        "composer.json",
        "deno.json",
        "bunfig.toml",
    }
)
"""Files that define a project's scripts, tasks and dependencies."""
SYNC_PROGRAMS: Final = frozenset(
    {"git pull", "git fetch", "git rebase", "git merge", "git reset", "git switch", "git checkout"}
)
CLEANING_PROGRAMS: Final = frozenset(
    {"git commit", "git stash", "git checkout", "git restore", "git reset", "git clean", "git switch"}
)
"""Programs that commit, stash or discard a working tree's changes."""
PERMISSION_PROGRAMS: Final = frozenset({"chmod", "chown", "chgrp"})
CREDENTIAL_PROGRAMS: Final = frozenset(
    {"gh auth", "git remote", "git config", "ssh-add", "ssh-keygen", "npm login", "npm adduser", "docker login"}
    | {"gcloud auth", "aws configure", "aws sso", "az login", "glab auth", "vercel login", "heroku login"}
)
"""Programs that change how a command authenticates: its credentials, its remote, its helper."""
_CREDENTIAL_READINGS: Final = frozenset({"status", "token", "get-url"})
"""The subcommands with which such a program only reads (`gh auth status`, `git remote get-url`)."""
ROUTE_MOMENT: Final = math.inf
"""`Change.at` of the route's own edits and earlier commands: after every change of the history."""
REMOTE_PROGRAMS: Final = frozenset(
    {"gh", "curl", "wget", "http", "ssh", "scp", "rsync", "kubectl", "aws", "gcloud", "az", "heroku", "vercel"}
    | {"git fetch", "git pull", "git ls-remote", "git clone", "npm view", "npm info", "npm show", "docker pull"}
)
"""Programs whose answer is a remote service's state (a pending check, a version not yet published)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One change after a failure, as the cause rules read it."""

    paths: tuple[str, ...]
    """Repository paths it changed; empty with `unnamed` for files it does not name."""
    unnamed: bool
    """It changed files it does not name (a formatter over the tree, an install)."""
    installs: bool
    """It installed or synced dependencies (what every later program runs with)."""
    programs: tuple[str, ...]
    """The programs it ran (`git pull`, `chmod`, ...)."""
    subjects: tuple[str, ...] = ()
    """What a call that acted (not a reading) named: its targets (`bd create --id av-1` names `av-1`)."""
    acts: bool = True
    """False for a call that only read (`cat`, `git log`): time passed, nothing changed."""
    reformats: bool = False
    """Its only file changes were a formatter's or fixer's: how files are written, not what they do."""
    at: float | None = None
    """When it happened (epoch seconds; `ROUTE_MOMENT` for the route's own commands, run just before
    it); None when unknown (an undated call, commits that landed)."""

    @property
    def writes(self) -> bool:
        """It changed files (named or not)."""
        return bool(self.paths) or self.unnamed


@dataclass(frozen=True, slots=True)
class _Failure:
    """What a cause rule reads of a failure."""

    subjects: tuple[str, ...]
    failing: CommandShape
    output_paths: Sequence[str]
    roots: Sequence[str]
    tests: tuple[str, ...] = ()
    """The failing tests, as their runner named them (`FailureCause.tests`)."""


_Rule = Callable[[_Failure, Sequence[Change]], bool]


def cause_touched(
    cause: FailureCause | None,
    failing: CommandShape,
    output_paths: Sequence[str],
    changes: Sequence[Change],
    *,
    roots: Sequence[str] = (),
) -> bool:
    """True when one of `changes` touches what `cause` names or depends on (`RULES`)."""
    kind: FailureCauseKind = cause.kind if cause is not None else "unknown"
    if kind not in REFORMAT_TOUCHES:
        changes = [change for change in changes if not change.reformats]
    if not changes:
        return False
    if _script_edited(failing, changes):
        return True
    failure = (
        _Failure(tuple(cause.subjects), failing, output_paths, roots, tuple(cause.tests))
        if cause is not None
        else _Failure((), failing, output_paths, roots)
    )
    return RULES[kind](failure, changes)


def _script_edited(failing: CommandShape, changes: Sequence[Change]) -> bool:
    """The failing command runs a script (`npx tsx src/index.ts`, `python tools/gen.py`, `./run.sh`)
    and a change rewrote it: the command is what that file says, whatever its failure was."""
    script = failing.program
    if not looks_like_path(script) or script.startswith(("/", "<")):
        return False
    return any(same_file(path, script) for change in changes for path in change.paths)


def _environment(failure: _Failure, changes: Sequence[Change], *, manifests: bool = True) -> bool:
    """An install, a manifest (with `manifests`), a change to the program's own file."""
    own = [path for path in failure.failing.paths if not path.startswith(("/", "<"))]
    return _any_path(
        changes, lambda path: (manifests and _is_manifest(path)) or any(same_file(path, mine) for mine in own)
    )


def _usage(failure: _Failure, changes: Sequence[Change]) -> bool:
    """As `_environment`, but a manifest only for a script runner: it defines the project's
    scripts (`Missing script`), not another program's options."""
    return _environment(failure, changes, manifests=failure.failing.program.startswith(SCRIPT_RUNNERS))


def _module(failure: _Failure, changes: Sequence[Change]) -> bool:
    """An install, a manifest, the module's own files, the importing file the output names, or
    files a command writes without naming them: a build or a generator writes the outputs a
    workspace package's import resolves to (`Cannot find module '@app/core'` until it is built)."""
    names = [part for subject in failure.subjects for part in re.split(r"[./:@-]", subject) if len(part) > 2]
    importing = [named for named in failure.output_paths if _FILE_SUFFIX.search(named)]
    return any(change.unnamed for change in changes) or _any_path(
        changes,
        lambda path: (
            _is_manifest(path)
            or any(name in path for name in names)
            or any(related_files(named, path) for named in importing)
        ),
    )


def _missing_path(failure: _Failure, changes: Sequence[Change]) -> bool:
    """The path's creation (a change naming it or under it), or files a command does not name."""
    missing = [
        repository_path(subject, roots=failure.roots) for subject in failure.subjects if looks_like_path(subject)
    ]
    return any(
        change.unnamed or any(_names(path, target) for path in change.paths for target in missing) for change in changes
    )


def _gitignore(failure: _Failure, changes: Sequence[Change]) -> bool:
    return any(posixpath.basename(path) == ".gitignore" for change in changes for path in change.paths)


def _synced(failure: _Failure, changes: Sequence[Change]) -> bool:
    return any(program in SYNC_PROGRAMS for change in changes for program in change.programs)


def _cleaned(failure: _Failure, changes: Sequence[Change]) -> bool:
    """Changes in the way (`cannot pull with rebase: You have unstaged changes`): only committing,
    stashing or discarding them touches it, and a file edited after the last of those is a change in
    the way again (files written without being named, a build's outputs, are often ignored by git)."""
    cleanings = [
        change for change in changes if change.acts and any(program in CLEANING_PROGRAMS for program in change.programs)
    ]
    if not cleanings:
        return False
    if any(change.at is None for change in cleanings):
        return True  # not ordered in time: the cleaning may be the last change
    last = max(change.at for change in cleanings if change.at is not None)
    return not any(change.paths and change.at is not None and change.at > last for change in changes)


def _checks_run_again(failure: _Failure, changes: Sequence[Change]) -> bool:
    """A CI run's failed checks (`gh pr checks`): they stand until new commits are pushed or the
    run is started again (`gh run rerun`, `gh workflow run`); neither time nor local edits change them."""
    return any(
        change.acts
        and (
            "git push" in change.programs
            or ("gh run" in change.programs and "rerun" in change.subjects)
            or ("gh workflow" in change.programs and "run" in change.subjects)
        )
        for change in changes
    )


def _any_change(failure: _Failure, changes: Sequence[Change]) -> bool:
    return any(change.writes or change.installs for change in changes)


def _time(failure: _Failure, changes: Sequence[Change]) -> bool:
    """A wait, a connection or a remote service's answer may differ later: time itself changes it."""
    return True


def _permissions(failure: _Failure, changes: Sequence[Change]) -> bool:
    return any(program in PERMISSION_PROGRAMS for change in changes for program in change.programs)


def _credentials(failure: _Failure, changes: Sequence[Change]) -> bool:
    """An authentication failure stands until the credentials the failing program reads or its
    remote change (`git remote set-url`, `ssh-add`; for `gh`, its own `gh auth login`): time alone
    does not log anyone in, and a reading (`gh auth status`) changes nothing."""
    own = {"gh auth"} if failure.failing.program.split(" ")[0] == "gh" else CREDENTIAL_PROGRAMS
    return any(
        change.acts and not own.isdisjoint(change.programs) and not _CREDENTIAL_READINGS & set(change.subjects)
        for change in changes
    )


def _unexplained(failure: _Failure, changes: Sequence[Change]) -> bool:
    """A remote program's unexplained failure is the service's state; any other is a check's."""
    return _time(failure, changes) if _remote(failure.failing) else _files_touched(failure, changes)


def _files_touched(failure: _Failure, changes: Sequence[Change]) -> bool:
    """A check's failure: the files it or its failure names, their relatives, the modules its failing
    tests are named after, configuration, unnamed writes."""
    failing, roots = failure.failing, failure.roots
    subject_files = (
        repository_path(without_position(subject), roots=roots) for subject in failure.subjects if _is_file(subject)
    )
    named = [
        path
        for path in dict.fromkeys((*failing.paths, *failure.output_paths, *subject_files))
        if not path.startswith(("/", "<"))
    ]
    own = {target for target in failing.targets if len(target) > 2 and not target.startswith(("-", "<"))}
    for change in changes:
        if change.unnamed or change.installs:
            return True
        if any(is_project_config(path) for path in change.paths):
            return True
        if any(related_files(target, path) for target in named for path in change.paths):
            return True
        if any(tests_module_of(test, path) for test in failure.tests for path in change.paths):
            return True
        if change.acts and own & set(change.subjects):
            return True  # something acted on what the failing command named (`bd create X` after `bd show X`)
    # Nothing named the failure's files: a check of the whole tree is changed by any change in it.
    return not named and sees_whole_tree(failing) and any(change.paths for change in changes)


RULES: Final[dict[FailureCauseKind, _Rule]] = {
    "command_not_found": _environment,
    "usage_error": _usage,
    "wrong_architecture": _environment,
    "module_not_found": _module,
    "path_not_found": _missing_path,
    "git_ignored": _gitignore,
    "git_rejected": _synced,
    "nothing_to_commit": _any_change,
    "uncommitted_changes": _cleaned,
    "merge_conflict": _any_change,
    "connection_refused": _time,
    "timeout": _time,
    "permission_denied": _permissions,
    "auth_failed": _credentials,
    "here_document_refused": _permissions,
    "unknown": _unexplained,
    "tool_error": _unexplained,
    "hook_failed": _files_touched,
    "no_tests_collected": _files_touched,
    "compile_error": _files_touched,
    "format_or_lint_refused": _files_touched,
    "test_failed": _files_touched,
    "is_a_directory": _files_touched,
    "checks_failed": _checks_run_again,
}
"""Per cause, which later changes touch it (`docs/failure-causes.md` states each rule)."""


def _any_path(changes: Sequence[Change], touches: Callable[[str], bool]) -> bool:
    """An install, or a change to a path `touches` accepts."""
    return any(change.installs or any(map(touches, change.paths)) for change in changes)


_FILE_SUFFIX: Final = re.compile(r"\.\w{1,10}$")
READING_PROGRAMS: Final = frozenset(
    {"cat", "ls", "grep", "rg", "head", "tail", "find", "echo", "printf", "pwd", "wc", "which", "stat", "file"}
    | {"git status", "git log", "git diff", "git show", "git branch", "tree", "less", "jq", "od", "xxd", "sed", "awk"}
    | {"sort", "uniq", "cut", "tr", "date", "sleep", "ps", "du", "df", "env", "type"}
)
"""Programs that only read: a later run of one changes nothing a failure depends on."""
_SELF_DESCRIBING: Final = frozenset({"--help", "--version"})


def reads_only(shape: CommandShape) -> bool:
    """The simple command only reads (a `sed` without `-i`: its writes are `changes.changed_paths`'),
    or only prints its own usage or version (`gh auth setup-git --help`)."""
    return shape.program in READING_PROGRAMS or not _SELF_DESCRIBING.isdisjoint(shape.flags)


def observes_only(shape: CommandShape) -> bool:
    """The simple command only reads or checks (`cat`, `pytest tests/a.py`): it acts on nothing it names."""
    return reads_only(shape) or (shape.is_check and changed_paths(shape) is None)


def _is_file(subject: str) -> bool:
    return names_file(without_position(subject))


def _remote(shape: CommandShape) -> bool:
    return shape.program in REMOTE_PROGRAMS or shape.program.split(" ")[0] in REMOTE_PROGRAMS


def _is_manifest(path: str) -> bool:
    return posixpath.basename(path).lower() in MANIFESTS


def _names(changed: str, missing: str) -> bool:
    """The change made `missing`: the same file, or something under a missing folder."""
    missing = missing.rstrip("/")
    return same_file(changed, missing) or changed.startswith(missing + "/")
