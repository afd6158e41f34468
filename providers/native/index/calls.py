"""Index rows to compare-route's private prior calls (`contracts.prior_calls.PriorToolCall`).

A prior call carries what ran and how it ended, bounded: the command with its newlines (a shell
tool's command, a file tool's target, another tool's input), exit code and error flag, the cwd it
ran in and that cwd relative to the repository, when, at which revision, the files it named, and
an excerpt of its output (head and tail). Nothing here is redacted or cut for a prompt: prior
calls never reach one, nor the RFC result, a receipt, Prefect or a log.

The cwd is the folder the call ran in where its source records one per call (Codex's `workdir`,
the `cwd` of the Claude Code line holding the call, which follows the Bash tool's `cd`), else the
session's recorded cwd (Pi, Kimi and DSH record none per call). `repository_cwd` is it relative
to the top of its checkout when that checkout is the enablement's repository (under a root, a
linked worktree, a clone with the same root commit: the call's own checkout and identity,
resolved at refresh, when it has its own folder); `""` for a folder under a root that is no
checkout on this machine (the session's folder is its checkout, as a worktree under a worktree
parent is); otherwise (`/tmp`) None. A call whose own folder is a checkout of another repository
never reaches here: the scope leaves it out (`repository.call_place_sql`; docs/call-places.md).
"""

import json
import os
import re
import sqlite3
from collections.abc import Sequence
from typing import Final

from obelisk_session_evidence.contracts.prior_calls import (
    MAX_CALL_COMMAND_CHARS,
    MAX_CALL_FILES,
    MAX_CALL_OUTPUT_CHARS,
    MAX_CALL_PATH_CHARS,
    MAX_PRIOR_CALLS,
    SHELL_TOOL_NAMES,
    PriorToolCall,
)
from obelisk_session_evidence.contracts.snippets import ELLIPSIS
from obelisk_session_evidence.providers.failure_causes import call_outcome, failure_cause
from obelisk_session_evidence.providers.native.index.query import SearchRow
from obelisk_session_evidence.providers.native.index.repository import (
    RepositoryBinding,
    locate_checkout,
    normalise_path,
    under,
)
from obelisk_session_evidence.providers.native.index.results import message_ref, moment, session_ref
from obelisk_session_evidence.providers.native.records import FILE_TOOL_NAMES

_PARSER_CUT: Final = re.compile(r"\n\[… \d+ characters omitted …\]\n")
"""The mark the parsers leave where they cut a long output to its head and tail (`parsers._text.excerpt`)."""


REMEMBERED_CALLS: Final = 4096
"""Most prior calls a remembering builder keeps (it forgets them all past it): a bound on memory."""


class PriorCallBuilder:
    """Builds prior calls for one enablement's repository, remembering each cwd's checkout, and
    with `remember` each built call by its row (a replay's lookups return the same rows again and
    again; a row's prior call depends on the row alone, while the index is held unchanged)."""

    def __init__(self, binding: RepositoryBinding, *, remember: bool = False) -> None:
        self._binding = binding
        self._places: dict[tuple[str, str | None, str | None], str | None] = {}
        self._built: dict[int, PriorToolCall] | None = {} if remember else None

    def build(self, connection: sqlite3.Connection, rows: Sequence[SearchRow]) -> list[PriorToolCall]:
        """Prior calls for the tool-call rows among `rows`, in order, one per record, at most `MAX_PRIOR_CALLS`."""
        chosen: dict[tuple[str, str], SearchRow] = {}
        for row in rows:
            if row.kind == "tool_call" and len(chosen) < MAX_PRIOR_CALLS:
                chosen.setdefault((row.source, row.uid), row)
        return self.build_each(connection, list(chosen.values()))

    def build_each(self, connection: sqlite3.Connection, rows: Sequence[SearchRow]) -> list[PriorToolCall]:
        """One prior call per tool-call row, in order, uncapped (the caller bounds `rows`)."""
        built = self._built
        if built is None:
            files = _call_files(connection, [row.entry_id for row in rows])
            return [self._call(row, files.get(row.entry_id, ())) for row in rows]
        missing = [row for row in rows if row.entry_id not in built]
        if len(built) + len(missing) > REMEMBERED_CALLS:
            built.clear()
            missing = list(rows)
        files = _call_files(connection, [row.entry_id for row in missing])
        for row in missing:
            built[row.entry_id] = self._call(row, files.get(row.entry_id, ()))
        return [built[row.entry_id] for row in rows]

    def repository_cwd(self, cwd: str | None, *, identity: str | None, session_cwd: str | None = None) -> str | None:
        """`cwd` relative to the repository (`""` at a root or a checkout's top); None outside it.
        `session_cwd`: the folder of the session a call with its own folder ran in."""
        if not cwd:
            return None
        key = (cwd, identity, session_cwd)
        if key not in self._places:
            session = normalise_path(session_cwd) if session_cwd else None
            self._places[key] = self._place(normalise_path(cwd), identity, session)
        return self._places[key]

    def _place(self, cwd: str, identity: str | None, session_cwd: str | None) -> str | None:
        checkout = locate_checkout(cwd)
        if checkout is not None:
            same = any(under(normalise_path(checkout.checkout_root), root) for root in self._binding.roots) or (
                identity is not None and identity in self._binding.identities
            )
            return _relative(cwd, normalise_path(checkout.toplevel)) if same else None
        # No checkout to tell a subfolder from (the folder is gone, or was never a git checkout): the
        # session's own folder under a root is its checkout, as a worktree under a worktree parent
        # is; a call's folder under it (after a `cd`) is a folder of that checkout.
        roots = self._binding.roots
        if session_cwd is not None and under(cwd, session_cwd) and any(under(session_cwd, root) for root in roots):
            return _relative(cwd, session_cwd)
        return "" if any(under(cwd, root) for root in roots) else None

    def _call(self, row: SearchRow, files: tuple[str, ...]) -> PriorToolCall:
        command = _command_of(row, files)
        output = row.body or row.detail
        excerpt = _excerpt(output)
        own = row.call_cwd is not None
        place = row.call_cwd if own else row.cwd
        cwd = normalise_path(place) if place else None
        identity = row.call_identity if own else row.repository_identity
        is_error = None if row.is_error is None else bool(row.is_error)
        outcome = call_outcome(command, exit_code=row.exit_code, is_error=is_error, output=output)
        return PriorToolCall(
            session_ref=session_ref(row.source, row.session_id),
            message_ref=message_ref(row.source, row.kind, row.uid),
            tool_name=(row.tool_name or "tool")[:64],
            command=command[:MAX_CALL_COMMAND_CHARS],
            command_truncated=len(command) >= MAX_CALL_COMMAND_CHARS,
            exit_code=row.exit_code,
            is_error=is_error,
            escalated=row.call_escalated,
            cwd=_bounded_path(cwd),
            repository_cwd=_bounded_path(
                self.repository_cwd(cwd, identity=identity, session_cwd=row.cwd if own else None)
            ),
            observed_at=moment(row.observed_at),
            revision_ref=row.git_commit[:80] if row.git_commit else None,
            files=[path[:MAX_CALL_PATH_CHARS] for path in files[:MAX_CALL_FILES]],
            output_excerpt=excerpt,
            output_truncated=len(excerpt) < len(output) or _PARSER_CUT.search(output) is not None,
            outcome=outcome,
            cause=failure_cause(command, exit_code=row.exit_code, output=output) if outcome == "failed" else None,
        )


def _command_of(row: SearchRow, files: tuple[str, ...]) -> str:
    """The shell command itself; a file tool's target; else the tool's input without its name."""
    name = row.tool_name or ""
    if name.lower() in SHELL_TOOL_NAMES:
        return row.command
    if name.lower() in FILE_TOOL_NAMES and files:
        return " ".join(files)
    return row.command.removeprefix(f"{name} ") if name else row.command


def _excerpt(output: str) -> str:
    """`output` whole when it fits, else its head and tail around a `…` line."""
    if len(output) <= MAX_CALL_OUTPUT_CHARS:
        return output
    half = (MAX_CALL_OUTPUT_CHARS - 3) // 2
    return f"{output[:half]}\n{ELLIPSIS}\n{output[-half:]}"


def _relative(path: str, root: str) -> str:
    return "" if path == root else os.path.relpath(path, root)


def _bounded_path(path: str | None) -> str | None:
    return None if path is None or len(path) > MAX_CALL_PATH_CHARS else path


def _call_files(connection: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
    if not ids:
        return {}
    rows = connection.execute(
        "SELECT c.entry_id, c.paths FROM json_each(?) AS m JOIN call_details AS c ON c.entry_id = m.value",
        (json.dumps(list(ids)),),
    )
    return {entry_id: tuple(path for path in paths.split("\n") if path) for entry_id, paths in rows}
