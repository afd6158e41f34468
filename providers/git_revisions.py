"""Where git places the revisions prior calls recorded, against the situation's revision.

For each distinct `revision_ref` among an answer's prior calls, and a live repository (a root of
the enablement that is a git work tree on this machine), git itself is asked:

- `git merge-base --is-ancestor REV CURRENT` (then `… MERGE_BASE`): is the recorded commit on the
  line of the situation's revision? Exit 0 on either: `ancestor`; exit 1 on every one given:
  `not_ancestor`; anything else (no such commit here, not a repository, a timeout, no git): the
  next root, and finally `unknown` with its reason. A check that cannot run never says `ancestor`.
- for an ancestor, `git log --first-parent -m --name-only REV..TARGET`: the commits after it up
  to the revision it is an ancestor of, each with its time and the paths it changed (bounded:
  `MAX_REVISION_COMMITS` commits, `MAX_COMMIT_PATHS` paths each, `MAX_LOG_BYTES` of output; what
  is cut is flagged).

git runs without a shell, in its own process group, with a minimal environment (no user or
system configuration, no prompt, no optional locks) and one deadline for the whole answer; its
stderr is discarded and its stdout never leaves this module except as the typed checks.
"""

import os
import re
import signal
import time
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.prior_calls import ProviderAnswer
from obelisk_session_evidence.contracts.revision_checks import (
    MAX_COMMIT_PATHS,
    MAX_REVISION_COMMITS,
    MAX_REVISION_PATH_CHARS,
    RevisionCheck,
    RevisionCommit,
    UncheckedReason,
)
from obelisk_session_evidence.contracts.situation import Revision
from obelisk_session_evidence.providers.base import EvidenceProvider

GIT_DEADLINE_SECONDS: Final = 2.0
"""Time for every git run one answer's checks need together; what is left unchecked is `unknown`."""
MAX_CHECKED_REVISIONS: Final = 16
"""Distinct revisions checked per answer (best-ranked calls first); the rest are `unknown`."""
MAX_LOG_BYTES: Final = 256 * 1024
"""Most bytes of `git log` output read per revision; the newest commits are kept."""
_COMMIT_ID: Final = re.compile(r"^[0-9a-f]{7,64}$")
_COMMIT_MARK: Final = b"\x01"
_ENVIRONMENT_KEPT: Final = ("PATH",)
_GIT_ENVIRONMENT: Final = {
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
}


@dataclass(frozen=True, slots=True)
class _GitRun:
    code: int | None
    """The exit status; None when the deadline ended it."""
    stdout: bytes
    cut: bool = False
    """True when stdout passed the byte cap (the process was stopped there)."""


class _GitUnavailable(Exception):
    """git could not be started."""


def check_revisions(
    revisions: Sequence[str],
    revision: Revision | None,
    roots: Sequence[str],
    *,
    timeout: float = GIT_DEADLINE_SECONDS,
    git: str = "git",
) -> list[RevisionCheck]:
    """Each distinct revision of `revisions`, in order, as git places it against `revision`."""
    distinct = list(dict.fromkeys(revisions))
    if not distinct:
        return []
    live = [root for root in dict.fromkeys(roots) if _is_work_tree(root)]
    ends_at = time.monotonic() + timeout
    checks = []
    for index, recorded in enumerate(distinct):
        if index >= MAX_CHECKED_REVISIONS:
            checks.append(_unknown(recorded, "too_many_revisions"))
        elif revision is None:
            checks.append(_unknown(recorded, "no_situation_revision"))
        elif not _COMMIT_ID.fullmatch(recorded):
            checks.append(_unknown(recorded, "invalid_revision"))
        elif not live:
            checks.append(_unknown(recorded, "no_live_repository"))
        else:
            checks.append(_check(recorded, revision, live, ends_at=ends_at, git=git))
    return checks


def _check(recorded: str, revision: Revision, live: Sequence[str], *, ends_at: float, git: str) -> RevisionCheck:
    """The first root whose git gives a definite answer; else `unknown`, with the first reason found."""
    targets = list(dict.fromkeys([revision.current, *([revision.merge_base] if revision.merge_base else [])]))
    reasons: set[UncheckedReason] = set()
    for root in live:
        try:
            placed = _place(root, recorded, targets, ends_at=ends_at, git=git)
        except _GitUnavailable:
            return _unknown(recorded, "git_unavailable")
        if isinstance(placed, RevisionCheck):
            return placed
        if placed == "timeout":
            return _unknown(recorded, "timeout")
        reasons.add(placed)
    return _unknown(recorded, "git_failed" if "git_failed" in reasons else "unknown_commit")


def _place(
    root: str, recorded: str, targets: Sequence[str], *, ends_at: float, git: str
) -> RevisionCheck | UncheckedReason:
    """`recorded` against each target in one root: ancestor of one, of none, or why not known."""
    answers = []
    for target in targets:
        run = _git(root, ["merge-base", "--is-ancestor", recorded, target], ends_at=ends_at, git=git, max_bytes=0)
        if run.code is None:
            return "timeout"
        if run.code == 0:
            return _ancestor(root, recorded, target, ends_at=ends_at, git=git)
        answers.append(run.code)
    if all(code == 1 for code in answers):
        return RevisionCheck(revision=recorded, relation="not_ancestor")
    return "unknown_commit"


def _ancestor(root: str, recorded: str, target: str, *, ends_at: float, git: str) -> RevisionCheck | UncheckedReason:
    """The commits after `recorded` up to `target`, newest first; why not, when git cannot list them."""
    run = _git(
        root,
        [
            *("log", "-z", "-m", "--first-parent", "--no-renames", "--name-only", "--format=%x01%ct"),
            f"--max-count={MAX_REVISION_COMMITS + 1}",
            f"{recorded}..{target}",
            "--",
        ],
        ends_at=ends_at,
        git=git,
        max_bytes=MAX_LOG_BYTES,
    )
    if run.code is None:
        return "timeout"
    if run.code != 0 and not run.cut:
        return "git_failed"
    records = run.stdout.split(_COMMIT_MARK)[1:]
    truncated = run.cut or len(records) > MAX_REVISION_COMMITS
    if run.cut and records:
        records = records[:-1]  # the last one may be partial
    commits = []
    for record in records[:MAX_REVISION_COMMITS]:
        commit = _commit(record)
        if commit is None:
            truncated = True
            break  # an unreadable record: what follows it is older, and is not listed either
        commits.append(commit)
    return RevisionCheck(revision=recorded, relation="ancestor", commits=commits, commits_truncated=truncated)


def _commit(record: bytes) -> RevisionCommit | None:
    """One `log -z` record: its commit time, then NUL-separated paths."""
    fields = record.split(b"\0")
    try:
        committed_at = datetime.fromtimestamp(int(fields[0]), tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    names = [name.decode("utf-8", "replace") for field in fields[1:] if (name := field.strip(b"\n"))]
    kept = [name for name in names if len(name) <= MAX_REVISION_PATH_CHARS][:MAX_COMMIT_PATHS]
    return RevisionCommit(committed_at=committed_at, paths=kept, paths_truncated=len(kept) < len(names))


def _git(root: str, args: Sequence[str], *, ends_at: float, git: str, max_bytes: int) -> _GitRun:
    """Run git in `root` until the deadline, reading at most `max_bytes` of stdout (0: none)."""
    import subprocess  # loaded only when git runs: a cold run without recorded revisions never pays it
    import threading

    remaining = ends_at - time.monotonic()
    if remaining <= 0:
        return _GitRun(None, b"")
    argv = [git, "-C", root, "-c", "core.fsmonitor=false", "-c", "core.quotePath=false", *args]
    environment = {name: os.environ.get(name) or os.defpath for name in _ENVIRONMENT_KEPT} | _GIT_ENVIRONMENT
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if max_bytes else subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=environment,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        raise _GitUnavailable from None
    expired = threading.Event()

    def stop() -> None:
        expired.set()
        _kill_group(process.pid)

    timer = threading.Timer(remaining, stop)
    timer.start()
    try:
        stdout = process.stdout.read(max_bytes + 1) if process.stdout is not None else b""
        cut = len(stdout) > max_bytes
        if cut:
            _kill_group(process.pid)
        code = process.wait()
    except BaseException:
        _kill_group(process.pid)  # still running: never left behind
        process.wait()
        raise
    finally:
        timer.cancel()
        if process.stdout is not None:
            process.stdout.close()
    if expired.is_set():
        return _GitRun(None, b"")
    return _GitRun(code, stdout[:max_bytes], cut)


def _kill_group(leader: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, signal.SIGKILL)


def _is_work_tree(root: str) -> bool:
    """A checkout here: a folder with its `.git` (a folder, or a worktree's file)."""
    return os.path.isabs(root) and Path(root, ".git").exists()


def _unknown(recorded: str, reason: UncheckedReason) -> RevisionCheck:
    return RevisionCheck(revision=recorded[:80], relation="unknown", unchecked_reason=reason)


class RevisionChecking:
    """A provider whose answers say where git places the revisions their prior calls recorded."""

    def __init__(
        self,
        provider: EvidenceProvider,
        roots: Sequence[str],
        *,
        timeout: float = GIT_DEADLINE_SECONDS,
        git: str = "git",
    ) -> None:
        self._provider = provider
        self._roots = tuple(roots)
        self._timeout = timeout
        self._git = git
        self.provider_version = provider.provider_version

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """The wrapped provider's answer, with `revision_checks` for its calls' revisions."""
        answer = self._provider.search(request)
        recorded = [call.revision_ref for call in answer.prior_calls if call.revision_ref]
        if not recorded:
            return answer
        checks = check_revisions(recorded, request.revision, self._roots, timeout=self._timeout, git=self._git)
        return answer.model_copy(update={"revision_checks": checks})

    def index_revision(self) -> str | None:
        """The wrapped provider's."""
        return self._provider.index_revision()
