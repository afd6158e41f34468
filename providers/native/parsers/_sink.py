"""The accumulator a parser fills while it streams one file, frozen into a `ParseOutcome` at the end."""

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Final, TypedDict, TypeVar, Unpack

from obelisk_session_evidence.contracts.prior_calls import SHELL_TOOL_NAMES
from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.failure_causes import call_outcome
from obelisk_session_evidence.providers.native.parsers._text import (
    describe_tool_input,
    excerpt,
    is_cut,
    parse_arguments,
    runs_escalated,
)
from obelisk_session_evidence.providers.native.parsers.outcome import ParseOutcome, ResumeState
from obelisk_session_evidence.providers.native.records import (
    MessageRecord,
    Role,
    SessionRecord,
    SummaryKind,
    SummaryRecord,
    ToolCallRecord,
)

OPEN_CALLS_KEPT: Final = 256
"""Calls without an outcome carried into `ResumeState`; older ones (aborted turns) are dropped."""
RECENT_CALLS_KEPT: Final = 32
"""Finished calls also carried: late outcome lines (a Codex output after `patch_apply_end`) still
merge into the whole call instead of producing a nameless record."""

_Filed = TypeVar("_Filed", MessageRecord, ToolCallRecord, SummaryRecord)


class SessionFields(TypedDict, total=False):
    """The `SessionRecord` fields a parser learns from the records (None: not known here)."""

    session_id: str | None
    cwd: str | None
    git_branch: str | None
    git_commit: str | None
    repository_url: str | None
    title: str | None
    parent_session_id: str | None
    forked_from: str | None


class RecordSink:
    """Collects one file's records, deduplicating messages and joining calls with outcomes."""

    def __init__(self, source: SourceKind, resume: ResumeState | None, *, fallback_session_id: str) -> None:
        resume = resume or ResumeState()
        self.skipped: Counter[str] = Counter()
        self._session = resume.session or SessionRecord(source=source, session_id=fallback_session_id)
        self._started, self._ended = self._session.started_at, self._session.ended_at
        self.identified = resume.session is not None
        """True once the file's own records (or the caller's resume state) named the session."""
        self.format_version = resume.format_version
        self.summaries: list[SummaryRecord] = []
        self._messages: dict[str, MessageRecord] = {m.record_uid: m for m in resume.open_messages}
        self._calls: dict[str, ToolCallRecord] = {c.call_id: c for c in resume.open_calls}
        self._new_messages: dict[str, None] = {}
        self._new_calls: dict[str, None] = {}
        self._completed: set[str] = set()

    @property
    def session(self) -> SessionRecord:
        """The session as known so far, with the time range the records cover."""
        if (self._session.started_at, self._session.ended_at) != (self._started, self._ended):
            self._session = replace(self._session, started_at=self._started, ended_at=self._ended)
        return self._session

    @property
    def session_id(self) -> str:
        """The id every record of this file is filed under."""
        return self._session.session_id

    def update_session(self, **fields: Unpack[SessionFields]) -> None:
        """Set session fields the records reveal; `None` never overwrites a known value."""
        known: dict[str, Any] = {name: value for name, value in fields.items() if value is not None}
        if known:
            self._session = replace(self.session, **known)
        if "session_id" in known:
            self.identified = True

    def note_time(self, timestamp: str | None) -> None:
        """Widen the session's started/ended range to include `timestamp`."""
        if timestamp is None:
            return
        if self._started is None or timestamp < self._started:
            self._started = timestamp
        if self._ended is None or timestamp > self._ended:
            self._ended = timestamp

    def add_message(
        self, record_uid: str, role: Role, timestamp: str | None, text: str, *, is_meta: bool = False
    ) -> None:
        """Collect a message once per uid; empty text (tool-only turns) is not a message."""
        if not text.strip():
            return
        if record_uid in self._messages:
            self.skipped["duplicate"] += 1
            return
        record = MessageRecord(self.session_id, record_uid, role, timestamp, text, is_meta)
        self._messages[record_uid] = record
        self._new_messages[record_uid] = None

    def extend_message(self, record_uid: str, role: Role, timestamp: str | None, text: str) -> None:
        """Append a further content block to the message with this uid (Claude per-block records)."""
        if not text.strip():
            return
        known = self._messages.get(record_uid)
        if known is None:
            self._messages[record_uid] = MessageRecord(self.session_id, record_uid, role, timestamp, text)
        else:
            self._messages[record_uid] = replace(known, text=f"{known.text}\n{text}" if known.text else text)
        self._new_messages[record_uid] = None

    def drop_messages(self, record_uids: list[str]) -> None:
        """Forget messages the agent itself retracted (Kimi `context.undo`)."""
        for record_uid in record_uids:
            self._messages.pop(record_uid, None)
            self._new_messages.pop(record_uid, None)

    def open_call(
        self,
        call_id: str,
        name: str | None,
        *,
        command_text: str | None,
        file_paths: tuple[str, ...],
        timestamp: str | None,
        cwd: str | None = None,
        escalated: bool = False,
    ) -> None:
        """Register a tool call (with the folder it ran in, where the source records one, and
        whether it asked to run outside the sandbox); an outcome seen earlier (out-of-order lines)
        is kept."""
        known = self._calls.get(call_id)
        if known is not None and known.name is not None:
            return
        fresh = ToolCallRecord(
            self.session_id, call_id, name, command_text, file_paths, timestamp=timestamp, cwd=cwd, escalated=escalated
        )
        if known is not None:
            fresh = replace(
                fresh,
                is_error=known.is_error,
                exit_code=known.exit_code,
                output_excerpt=known.output_excerpt,
                cwd=cwd or known.cwd,
            )
        self._calls[call_id] = fresh
        self._new_calls[call_id] = None

    def open_call_with_arguments(
        self, call_id: str, name: str | None, arguments: object, timestamp: str | None, cwd: str | None = None
    ) -> None:
        """Register a tool call described by its raw arguments (an object or a JSON string)."""
        parsed = parse_arguments(arguments)
        command_text, paths = describe_tool_input(name, parsed)
        self.open_call(
            call_id,
            name,
            command_text=command_text,
            file_paths=paths,
            timestamp=timestamp,
            cwd=cwd,
            escalated=runs_escalated(parsed),
        )

    def record_outcome(
        self,
        call_id: str,
        *,
        is_error: bool | None = None,
        exit_code: int | None = None,
        output: str | None = None,
        output_start: int = 0,
        append_output: bool = False,
        cwd: str | None = None,
    ) -> None:
        """Join an outcome to its call by id; a later exit code or error flag wins. The output kept
        is `output[output_start:]`, cut to an excerpt (`_keeps_failures` says when the excerpt keeps
        the lines of the cut middle that bear a failure); `cwd` (where the outcome names the folder
        the call ran in) fills in a call that recorded none."""
        known = self._calls.get(call_id) or ToolCallRecord(self.session_id, call_id, None)
        is_error = known.is_error if is_error is None else is_error
        exit_code = known.exit_code if exit_code is None else exit_code
        kept = known.output_excerpt
        if output is not None:
            keep = is_cut(output, start=output_start) and _keeps_failures(known, is_error, exit_code)
            bounded = excerpt(output, start=output_start, keep_failures=keep)
            if append_output and kept and bounded is not None:
                # A poll's last chunk usually repeats the tail of the aggregated output already kept.
                bounded = kept if kept.endswith(bounded) else excerpt(f"{kept}\n{bounded}", keep_failures=keep)
            kept = bounded
        # Built field by field, not with `dataclasses.replace` (one call per outcome line; it costs twice as much).
        updated = ToolCallRecord(
            known.session_id,
            known.call_id,
            known.name,
            known.command_text,
            known.file_paths,
            is_error,
            exit_code,
            kept,
            known.timestamp,
            known.cwd or cwd,
            known.escalated,
        )
        if self._calls.get(call_id) != updated:
            self._calls[call_id] = updated
            self._new_calls[call_id] = None
        self._completed.add(call_id)

    def call_name(self, call_id: str) -> str | None:
        """The name of the call with this id, as registered so far (None: unknown or unnamed)."""
        known = self._calls.get(call_id)
        return None if known is None else known.name

    def reopen_call(self, call_id: str) -> None:
        """Mark a call as still waiting (a Codex process that keeps running)."""
        self._completed.discard(call_id)

    def add_summary(self, kind: SummaryKind, text: str, timestamp: str | None) -> None:
        """Collect a title or summary text; blank text is ignored."""
        if text.strip():
            self.summaries.append(SummaryRecord(self.session_id, kind, text, timestamp))

    def outcome(
        self,
        *,
        end_offset: int,
        resumable: bool,
        prefix_sha256: str | None = None,
        open_message_uids: tuple[str, ...] = (),
        process_calls: tuple[tuple[str, str], ...] = (),
        stdin_calls: tuple[tuple[str, str], ...] = (),
        interrupted_calls: tuple[str, ...] = (),
        unpaired_messages: tuple[str, ...] = (),
    ) -> ParseOutcome:
        """Freeze what was collected; only records new or changed in this parse are returned."""
        waiting = {call_id for _, call_id in process_calls}
        keep = self._calls.keys() - self._completed | waiting | set(list(self._calls)[-RECENT_CALLS_KEPT:])
        carried = [call for call_id, call in self._calls.items() if call_id in keep]
        resume = ResumeState(
            # A session still known only by its file name is re-identified by the next parse.
            session=self.session if self.identified else None,
            open_calls=tuple(carried[-OPEN_CALLS_KEPT:]),
            open_messages=tuple(self._messages[uid] for uid in open_message_uids if uid in self._messages),
            process_calls=process_calls,
            stdin_calls=stdin_calls,
            interrupted_calls=interrupted_calls,
            unpaired_messages=unpaired_messages,
            format_version=self.format_version,
        )
        return ParseOutcome(
            sessions=(self.session,),
            messages=self._filed(self._messages[uid] for uid in self._new_messages),
            tool_calls=self._filed(self._calls[call_id] for call_id in self._new_calls),
            summaries=self._filed(self.summaries),
            end_offset=end_offset,
            resumable=resumable,
            prefix_sha256=prefix_sha256,
            format_version=self.format_version,
            skipped_records=MappingProxyType(dict(self.skipped)),
            resume=resume,
        )

    def _filed(self, records: Iterable[_Filed]) -> tuple[_Filed, ...]:
        """File records made before the session id was known (a leading Claude `summary`)."""
        session_id = self.session_id
        return tuple(r if r.session_id == session_id else replace(r, session_id=session_id) for r in records)


def _keeps_failures(call: ToolCallRecord, is_error: bool | None, exit_code: int | None) -> bool:
    """A cut output keeps the lines of its middle that bear a failure when it is a shell's (or a
    call's not yet named) and its status does not say it succeeded (failed, or masked by `| tail`,
    or unknown): a file's content is no failure of the call, and a success's cause is never read."""
    if call.name is not None and call.name.lower() not in SHELL_TOOL_NAMES:
        return False
    return call_outcome(call.command_text or "", exit_code=exit_code, is_error=is_error, output="") in (
        "failed",
        "unknown",
    )
