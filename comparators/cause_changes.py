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

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from obelisk_session_evidence.comparators.changes import SCRIPT_RUNNERS, is_project_config, sees_whole_tree
from obelisk_session_evidence.comparators.commands import CommandShape
from obelisk_session_evidence.comparators.paths import (
    looks_like_path,
    names_file,
    related_files,
    repository_path,
    same_file,
    without_position,
)
from obelisk_session_evidence.contracts.prior_calls import FailureCause

ENVIRONMENT_CAUSES: Final = frozenset({"command_not_found", "usage_error", "wrong_architecture"})
SERVICE_CAUSES: Final = frozenset({"connection_refused", "timeout"})
ANY_CHANGE_CAUSES: Final = frozenset({"nothing_to_commit", "merge_conflict"})
STYLE_CAUSES: Final = frozenset({"format_or_lint_refused", "hook_failed", "nothing_to_commit", "unknown", "tool_error"})
"""Causes a formatter's rewrite can touch (a hook formats; an unknown cause may be style)."""
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
PERMISSION_PROGRAMS: Final = frozenset({"chmod", "chown", "chgrp"})
REMOTE_PROGRAMS: Final = frozenset(
    {"gh", "curl", "wget", "http", "ssh", "scp", "rsync", "kubectl", "aws", "gcloud", "az", "heroku", "vercel"}
    | {"git fetch", "git pull", "git ls-remote", "git clone", "npm view", "npm info", "npm show", "docker pull"}
)
"""Programs whose answer is a remote service's state (a pending check, a version not yet published)."""
REMOTE_STATE_CAUSES: Final = frozenset({"unknown", "tool_error"})
"""Causes that, for a remote program, are the service's state rather than the command's."""


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

    @property
    def writes(self) -> bool:
        """It changed files (named or not)."""
        return bool(self.paths) or self.unnamed


def cause_touched(
    cause: FailureCause | None,
    failing: CommandShape,
    output_paths: Sequence[str],
    changes: Sequence[Change],
    *,
    roots: Sequence[str] = (),
) -> bool:
    """True when one of `changes` touches what `cause` names or depends on (the table above)."""
    kind = cause.kind if cause is not None else "unknown"
    if kind not in STYLE_CAUSES | SERVICE_CAUSES:
        changes = [change for change in changes if not change.reformats]
    if not changes:
        return False
    subjects = tuple(cause.subjects) if cause is not None else ()
    if kind in ENVIRONMENT_CAUSES:
        own = [path for path in failing.paths if not path.startswith(("/", "<"))]
        # A manifest defines a project's scripts and tools, not another program's options.
        manifests = kind != "usage_error" or failing.program.startswith(SCRIPT_RUNNERS)
        return any(
            change.installs
            or any(
                (manifests and _is_manifest(path)) or any(same_file(path, mine) for mine in own)
                for path in change.paths
            )
            for change in changes
        )
    if kind == "module_not_found":  # an install, a manifest, the module's own files, the importing file
        names = [part for subject in subjects for part in re.split(r"[./:@-]", subject) if len(part) > 2]
        return any(
            change.installs
            or any(
                _is_manifest(path)
                or any(name in path.split("/") or name in path for name in names)
                or any(related_files(named, path) for named in output_paths if _FILE_SUFFIX.search(named))
                for path in change.paths
            )
            for change in changes
        )
    if kind == "path_not_found":
        missing = [repository_path(subject, roots=roots) for subject in subjects if looks_like_path(subject)]
        return any(
            change.unnamed or any(_names(path, target) for path in change.paths for target in missing)
            for change in changes
        )
    if kind == "git_ignored":
        return any(posixpath.basename(path) == ".gitignore" for change in changes for path in change.paths)
    if kind == "git_rejected":
        return any(program in SYNC_PROGRAMS for change in changes for program in change.programs)
    if kind in ANY_CHANGE_CAUSES:
        return any(change.writes or change.installs for change in changes)
    if kind in SERVICE_CAUSES or (kind in REMOTE_STATE_CAUSES and _remote(failing)):
        # A wait, a connection or a remote service's answer may differ later: time itself changes it.
        return True
    if kind == "permission_denied":
        return any(program in PERMISSION_PROGRAMS for change in changes for program in change.programs)
    return _files_touched(subjects, failing, output_paths, changes, roots=roots)


def _files_touched(
    subjects: Sequence[str],
    failing: CommandShape,
    output_paths: Sequence[str],
    changes: Sequence[Change],
    *,
    roots: Sequence[str],
) -> bool:
    """A check's failure: the files it or its failure names, their relatives, configuration, unnamed writes."""
    named = [
        path
        for path in dict.fromkeys(
            (
                *failing.paths,
                *output_paths,
                *(repository_path(without_position(subject), roots=roots) for subject in subjects if _is_file(subject)),
            )
        )
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
        if change.acts and own & set(change.subjects):
            return True  # something acted on what the failing command named (`bd create X` after `bd show X`)
    # Nothing named the failure's files: a check of the whole tree is changed by any change in it.
    return not named and sees_whole_tree(failing) and any(change.paths for change in changes)


_FILE_SUFFIX: Final = re.compile(r"\.\w{1,10}$")
READING_PROGRAMS: Final = frozenset(
    {"cat", "ls", "grep", "rg", "head", "tail", "find", "echo", "printf", "pwd", "wc", "which", "stat", "file"}
    | {"git status", "git log", "git diff", "git show", "git branch", "tree", "less", "jq", "od", "xxd", "sed", "awk"}
    | {"sort", "uniq", "cut", "tr", "date", "sleep", "ps", "du", "df", "env", "type"}
)
"""Programs that only read: a later run of one changes nothing a failure depends on."""


def reads_only(shape: CommandShape) -> bool:
    """The simple command only reads (a `sed` without `-i`: its writes are `changes.changed_paths`')."""
    return shape.program in READING_PROGRAMS


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
