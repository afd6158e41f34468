"""The accumulator a parser fills while it streams one file, frozen into a `ParseOutcome` at the end."""

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from types import MappingProxyType
from typing import Final, TypeVar

from contracts.config import SourceKind
from providers.native.parsers._text import excerpt
from providers.native.parsers.outcome import ParseOutcome, ResumeState
from providers.native.records import MessageRecord, Role, SessionRecord, SummaryKind, SummaryRecord, ToolCallRecord

OPEN_CALLS_KEPT: Final = 256
"""Calls without an outcome carried into `ResumeState`; older ones (aborted turns) are dropped."""

_Filed = TypeVar("_Filed", MessageRecord, ToolCallRecord, SummaryRecord)


class RecordSink:
    """Collects one file's records, deduplicating messages and joining calls with outcomes."""

    def __init__(self, source: SourceKind, resume: ResumeState | None, *, fallback_session_id: str) -> None:
        resume = resume or ResumeState()
        self.source = source
        self.skipped: Counter[str] = Counter()
        self.session = resume.session or SessionRecord(source=source, session_id=fallback_session_id)
        self.format_version = resume.format_version
        self.summaries: list[SummaryRecord] = []
        self._messages: dict[str, MessageRecord] = {m.record_uid: m for m in resume.open_messages}
        self._calls: dict[str, ToolCallRecord] = {c.call_id: c for c in resume.open_calls}
        self._new_messages: dict[str, None] = {}
        self._new_calls: dict[str, None] = {}
        self._completed: set[str] = set()

    @property
    def session_id(self) -> str:
        """The id every record of this file is filed under."""
        return self.session.session_id

    def update_session(self, **fields: object) -> None:
        """Set session fields the records reveal; `None` never overwrites a known value."""
        known = {name: value for name, value in fields.items() if value is not None}
        if known:
            self.session = replace(self.session, **known)

    def note_time(self, timestamp: str | None) -> None:
        """Widen the session's started/ended range to include `timestamp`."""
        if timestamp is None:
            return
        started, ended = self.session.started_at, self.session.ended_at
        if started is None or timestamp < started:
            self.session = replace(self.session, started_at=timestamp)
        if ended is None or timestamp > ended:
            self.session = replace(self.session, ended_at=timestamp)

    def has_message(self, record_uid: str) -> bool:
        """True when a message with this uid was already collected."""
        return record_uid in self._messages

    def add_message(self, record_uid: str, role: Role, timestamp: str | None, text: str, *, is_meta: bool) -> None:
        """Collect a message once per uid; empty text (tool-only turns) is not a message."""
        if not text.strip():
            return
        if record_uid in self._messages:
            self.skipped["duplicate"] += 1
            return
        self._messages[record_uid] = MessageRecord(self.session_id, record_uid, role, timestamp, text, is_meta)
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
    ) -> None:
        """Register a tool call; an outcome seen earlier (out-of-order lines) is kept."""
        known = self._calls.get(call_id)
        if known is not None and known.name is not None:
            return
        fresh = ToolCallRecord(self.session_id, call_id, name, command_text, file_paths, timestamp=timestamp)
        if known is not None:
            fresh = replace(
                fresh, is_error=known.is_error, exit_code=known.exit_code, output_excerpt=known.output_excerpt
            )
        self._calls[call_id] = fresh
        self._new_calls[call_id] = None

    def record_outcome(
        self,
        call_id: str,
        *,
        is_error: bool | None = None,
        exit_code: int | None = None,
        output: str | None = None,
        append_output: bool = False,
        file_paths: tuple[str, ...] = (),
    ) -> None:
        """Join an outcome to its call by id; a later exit code or error flag wins."""
        known = self._calls.get(call_id) or ToolCallRecord(self.session_id, call_id, None)
        changes: dict[str, object] = {}
        if is_error is not None:
            changes["is_error"] = is_error
        if exit_code is not None:
            changes["exit_code"] = exit_code
        if output is not None:
            joined = f"{known.output_excerpt}\n{output}" if append_output and known.output_excerpt else output
            changes["output_excerpt"] = excerpt(joined)
        if file_paths:
            changes["file_paths"] = tuple(dict.fromkeys(known.file_paths + file_paths))
        self._calls[call_id] = replace(known, **changes)
        self._new_calls[call_id] = None
        self._completed.add(call_id)

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
        open_message_uids: tuple[str, ...] = (),
        process_calls: tuple[tuple[str, str], ...] = (),
        unpaired_messages: tuple[str, ...] = (),
    ) -> ParseOutcome:
        """Freeze what was collected; only records new or changed in this parse are returned."""
        waiting = {call_id for _, call_id in process_calls}
        open_calls = [c for c in self._calls.values() if c.call_id not in self._completed or c.call_id in waiting]
        resume = ResumeState(
            session=self.session,
            open_calls=tuple(open_calls[-OPEN_CALLS_KEPT:]),
            open_messages=tuple(self._messages[uid] for uid in open_message_uids if uid in self._messages),
            process_calls=process_calls,
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
            format_version=self.format_version,
            skipped_records=MappingProxyType(dict(self.skipped)),
            resume=resume,
        )

    def _filed(self, records: Iterable[_Filed]) -> tuple[_Filed, ...]:
        """File records made before the session id was known (a leading Claude `summary`)."""
        session_id = self.session_id
        return tuple(r if r.session_id == session_id else replace(r, session_id=session_id) for r in records)
