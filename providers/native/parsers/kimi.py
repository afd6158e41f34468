"""Kimi Code sessions: `$KIMI_CODE_HOME/sessions/<workspaceId>/<sessionId>/` (default `~/.kimi-code`).

A session directory is always re-read whole (`resumable=False`). Layouts, newest first:
`state.json` + `agents/<agentId>/wire.jsonl` (each sub-agent becomes `<sessionId>:<agentId>`),
a legacy `<session>/wire.jsonl` of the same record shape, and the old Python kimi-cli's
`context.jsonl` + `{timestamp, message}` `wire.jsonl` (see `_kimi_cli`). `context.undo` drops the
retracted turns' messages but keeps their tool calls (the commands ran); `context.clear` only
resets the model's context, so nothing is dropped. Think blocks are skipped.
"""

from collections import Counter
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from obelisk_session_evidence.providers.native.parsers._kimi_cli import parse_kimi_cli
from obelisk_session_evidence.providers.native.parsers._reading import JsonLines, read_json_object
from obelisk_session_evidence.providers.native.parsers._sink import RecordSink
from obelisk_session_evidence.providers.native.parsers._text import (
    KIMI_EXIT,
    as_object,
    as_text,
    block_text,
    content_uid,
    exit_code_in,
    is_injected,
    iso_timestamp,
)
from obelisk_session_evidence.providers.native.parsers.outcome import ParseOutcome, ResumeState
from obelisk_session_evidence.providers.native.records import SessionRecord

_IGNORED_RECORDS: Final = frozenset(
    {
        "metadata",
        "turn.prompt",
        "usage.record",
        "tools.set_active_tools",
        "permission.set_mode",
        "context.clear",
    }
)


def session_directory(path: Path) -> Path:
    """The session directory for a path to it, to its `state.json`, or to one of its wire files."""
    if path.is_dir():
        return path
    if path.parent.parent.name == "agents":
        return path.parent.parent.parent
    return path.parent


def parse_kimi(
    path: Path, *, start_offset: int = 0, resume: ResumeState | None = None, max_bytes: int | None = None
) -> ParseOutcome:
    """Parse a whole Kimi session directory (not resumable): `start_offset`, `resume` and `max_bytes`
    are accepted and ignored."""
    session_dir = session_directory(path)
    state = read_json_object(session_dir / "state.json") or {}
    base = SessionRecord(
        source="kimi",
        session_id=str(state.get("id") or session_dir.name),
        cwd=as_text(state.get("cwd")) or as_text(state.get("workDir")),
        started_at=iso_timestamp(state.get("createdAt")),
        title=as_text(state.get("title")) or None,
    )
    if (session_dir / "context.jsonl").is_file():
        return parse_kimi_cli(session_dir, base)
    agents = as_object(state.get("agents"))
    # The main agent first, so a merged outcome leads with the session itself.
    wires = sorted((session_dir / "agents").glob("*/wire.jsonl"), key=_main_agent_first)
    wires = wires or [session_dir / "wire.jsonl"]
    outcomes = [_parse_agent(wire, base, agents) for wire in wires if wire.is_file()]
    if not outcomes:  # a session folder created before its first wire line: the session alone
        return RecordSink("kimi", ResumeState(session=base), fallback_session_id=base.session_id).outcome(
            end_offset=0, resumable=False
        )
    return _merged(outcomes)


def _main_agent_first(wire: Path) -> tuple[bool, str]:
    return wire.parent.name != "main", wire.parent.name


def _parse_agent(wire: Path, base: SessionRecord, agents: dict[str, Any]) -> ParseOutcome:
    agent_id = wire.parent.name if wire.parent.parent.name == "agents" else "main"
    agent = as_object(agents.get(agent_id))
    session = base
    if agent_id != "main" and agent.get("type") != "main":
        parent = agent.get("parentAgentId")
        parent_id = base.session_id if parent in (None, "main") else f"{base.session_id}:{parent}"
        own_id = f"{base.session_id}:{agent_id}"
        session = SessionRecord("kimi", own_id, cwd=base.cwd, parent_session_id=parent_id)
    sink = RecordSink("kimi", ResumeState(session=session), fallback_session_id=session.session_id)
    if session is base and base.title:
        sink.add_summary("title", base.title, base.started_at)
    _Wire(sink).read(wire)
    return sink.outcome(end_offset=wire.stat().st_size, resumable=False)


class _Wire:
    """One agent's `wire.jsonl`: context messages, loop-event text, undo bookkeeping."""

    def __init__(self, sink: RecordSink) -> None:
        self.sink = sink
        self.turns: list[list[str]] = []
        self.appended_texts: set[str] = set()
        self.step_texts: dict[str, tuple[str | None, list[str]]] = {}

    def read(self, wire: Path) -> None:
        """Stream the wire file, then add loop-event text no appended message already holds."""
        lines = JsonLines(wire, start_offset=0, skipped=self.sink.skipped)
        for index, (_, record) in enumerate(lines):
            self._take(index, record)
        for step_uid, (timestamp, parts) in self.step_texts.items():
            text = "".join(parts)
            if text.strip() not in self.appended_texts:
                uid = content_uid("kimi", self.sink.session_id, step_uid)
                self.sink.add_message(uid, "assistant", timestamp, text)

    def _take(self, index: int, record: dict[str, Any]) -> None:
        kind = record.get("type")
        timestamp = iso_timestamp(record.get("time"))
        self.sink.note_time(timestamp)
        if kind == "metadata":
            self.sink.format_version = f"kimi-wire-{record.get('protocol_version')}"
        elif kind == "config.update":
            if self.sink.session.cwd is None and isinstance(record.get("cwd"), str):
                self.sink.update_session(cwd=record["cwd"])
        elif kind == "context.append_message" and isinstance(record.get("message"), dict):
            self._message(index, record["message"], timestamp)
        elif kind == "context.append_loop_event" and isinstance(record.get("event"), dict):
            self._loop_event(record["event"], timestamp)
        elif kind == "context.apply_compaction" and isinstance(record.get("summary"), str):
            self.sink.add_summary("compaction", record["summary"], timestamp)
        elif kind == "context.undo":
            self._undo(record.get("count"))
        elif kind in _IGNORED_RECORDS:
            return
        else:
            self.sink.skipped["unknown_type" if isinstance(kind, str) else "missing_fields"] += 1

    def _message(self, index: int, message: dict[str, Any], timestamp: str | None) -> None:
        role = message.get("role")
        text = block_text(message.get("content"))
        uid = as_text(message.get("id")) or content_uid("kimi", self.sink.session_id, index)
        if role == "user":
            self.turns.append([])
            self.sink.add_message(uid, "user", timestamp, text, is_meta=is_injected(text))
        elif role == "assistant":
            for call in message.get("toolCalls") or ():
                self._tool_call(call, timestamp)
            self.appended_texts.add(text.strip())
            self.sink.add_message(uid, "assistant", timestamp, text)
        elif role == "tool" and isinstance(message.get("toolCallId"), str):
            failed = bool(message.get("isError"))
            exit_code = exit_code_in(text, KIMI_EXIT) if failed else None
            self.sink.record_outcome(message["toolCallId"], is_error=failed, exit_code=exit_code, output=text)
            return
        elif role not in ("system",):
            self.sink.skipped["unknown_type"] += 1
            return
        if self.turns and role in ("user", "assistant"):
            self.turns[-1].append(uid)

    def _tool_call(self, call: object, timestamp: str | None) -> None:
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            self.sink.skipped["missing_fields"] += 1
            return
        function = as_object(call.get("function"))
        name = as_text(function.get("name"))
        self.sink.open_call_with_arguments(call["id"], name, function.get("arguments"), timestamp)

    def _loop_event(self, event: dict[str, Any], timestamp: str | None) -> None:
        part = event.get("part")
        if event.get("type") == "content.part" and isinstance(part, dict) and part.get("type") == "text":
            step = str(event.get("stepUuid") or event.get("uuid"))
            _, parts = self.step_texts.setdefault(step, (timestamp, []))
            parts.append(str(part.get("text") or ""))

    def _undo(self, count: object) -> None:
        for _ in range(count if isinstance(count, int) else 0):
            if self.turns:
                self.sink.drop_messages(self.turns.pop())


def _merged(outcomes: list[ParseOutcome]) -> ParseOutcome:
    """One outcome for a session directory whose agents were parsed one by one."""
    skipped: Counter[str] = Counter()
    for outcome in outcomes:
        skipped.update(outcome.skipped_records)
    versions = sorted({o.format_version for o in outcomes if o.format_version})
    return ParseOutcome(
        sessions=tuple(s for o in outcomes for s in o.sessions),
        messages=tuple(m for o in outcomes for m in o.messages),
        tool_calls=tuple(c for o in outcomes for c in o.tool_calls),
        summaries=tuple(s for o in outcomes for s in o.summaries),
        end_offset=sum(o.end_offset for o in outcomes),
        resumable=False,
        format_version=versions[0] if len(versions) == 1 else ",".join(versions) or "kimi",
        skipped_records=MappingProxyType(dict(skipped)),
        resume=ResumeState(session=outcomes[0].sessions[0]),
    )
