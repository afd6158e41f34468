"""The old Python kimi-cli session layout: `context.jsonl` plus a `{timestamp, message}` `wire.jsonl`.

`context.jsonl` holds the conversation (roles user / assistant / tool, `tool_calls`,
`tool_call_id`) without timestamps; `wire.jsonl` holds timestamped UI events (`TurnBegin`,
`ToolCall`, `ToolResult{return_value{is_error}}`). Messages and calls come from the context;
the wire supplies timestamps and error flags by tool call id. The working directory is not
recorded in this layout (the folder name is a digest of it), so `cwd` stays unknown.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from obelisk_session_evidence.providers.native.parsers._reading import JsonLines
from obelisk_session_evidence.providers.native.parsers._sink import RecordSink
from obelisk_session_evidence.providers.native.parsers._text import (
    KIMI_EXIT,
    as_array,
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

_CONTEXT_BOOKKEEPING: Final = frozenset({"_system_prompt", "_checkpoint", "_usage", "system"})
_ERROR_PREFIX: Final = "<system>ERROR"
_WIRE_EVENTS: Final = frozenset(
    {
        "TurnBegin",
        "TurnEnd",
        "StepBegin",
        "StepInterrupted",
        "ContentPart",
        "ToolCall",
        "ToolCallPart",
        "ToolResult",
        "StatusUpdate",
        "ApprovalRequest",
        "ApprovalResponse",
        "CompactionBegin",
        "CompactionEnd",
        "SubagentEvent",
    }
)


@dataclass
class _WireFacts:
    """What the wire log adds to the context: when things happened and which calls failed."""

    protocol: str | None = None
    turn_times: list[str | None] = field(default_factory=list)
    call_times: dict[str, str | None] = field(default_factory=dict)
    call_errors: dict[str, tuple[bool, str]] = field(default_factory=dict)


def parse_kimi_cli(session_dir: Path, base: SessionRecord) -> ParseOutcome:
    """Parse an old kimi-cli session directory."""
    sink = RecordSink("kimi", ResumeState(session=base), fallback_session_id=base.session_id)
    wire = _read_wire(session_dir / "wire.jsonl", sink)
    sink.format_version = f"kimi-cli-{wire.protocol}" if wire.protocol else "kimi-cli"
    context = JsonLines(session_dir / "context.jsonl", start_offset=0, skipped=sink.skipped)
    turns = iter(wire.turn_times)
    last_time: str | None = None
    for index, (_, entry) in enumerate(context):
        role = entry.get("role")
        if role in _CONTEXT_BOOKKEEPING:
            continue
        text = block_text(entry.get("content"))
        uid = content_uid("kimi", base.session_id, index, role)
        if role == "user":
            last_time = next(turns, None) or last_time
            sink.add_message(uid, "user", last_time, text, is_meta=is_injected(text))
        elif role == "assistant":
            calls = _tool_calls(entry)
            # The context has no clocks: an assistant turn happened when its first call did.
            call_times = (wire.call_times.get(call["id"]) for call in calls)
            last_time = next((t for t in call_times if t), last_time)
            for call in calls:
                function = as_object(call.get("function"))
                name, arguments = as_text(function.get("name")), function.get("arguments")
                timestamp = wire.call_times.get(call["id"]) or last_time
                sink.open_call_with_arguments(call["id"], name, arguments, timestamp)
            sink.add_message(uid, "assistant", last_time, text)
        elif role == "tool" and isinstance(entry.get("tool_call_id"), str):
            _record_result(sink, entry["tool_call_id"], text, wire)
        else:
            sink.skipped["unknown_type"] += 1
    return sink.outcome(end_offset=context.end_offset, resumable=False)


def _tool_calls(entry: dict[str, Any]) -> list[dict[str, Any]]:
    calls = as_array(entry.get("tool_calls"))
    return [call for call in calls if isinstance(call, dict) and isinstance(call.get("id"), str)]


def _record_result(sink: RecordSink, call_id: str, text: str, wire: _WireFacts) -> None:
    known = wire.call_errors.get(call_id)
    # Calls the wire log does not reach fall back to kimi-cli's own "<system>ERROR: …" marker.
    is_error, message = known if known is not None else (text.startswith(_ERROR_PREFIX), text[:600])
    exit_code = exit_code_in(message, KIMI_EXIT) if is_error else None
    sink.record_outcome(call_id, is_error=is_error, exit_code=exit_code, output=text)


def _read_wire(path: Path, sink: RecordSink) -> _WireFacts:
    facts = _WireFacts()
    if not path.is_file():
        return facts
    for _, line in JsonLines(path, start_offset=0, skipped=sink.skipped):
        if line.get("type") == "metadata":
            facts.protocol = str(line.get("protocol_version") or "") or None
            continue
        message = as_object(line.get("message"))
        payload = message.get("payload")
        if not isinstance(payload, dict):
            sink.skipped["missing_fields"] += 1
            continue
        timestamp = iso_timestamp(line.get("timestamp"))
        sink.note_time(timestamp)
        kind = message.get("type")
        if kind == "TurnBegin":
            facts.turn_times.append(timestamp)
        elif kind == "ToolCall" and isinstance(payload.get("id"), str):
            facts.call_times[payload["id"]] = timestamp
        elif kind == "ToolResult" and isinstance(payload.get("tool_call_id"), str):
            returned = as_object(payload.get("return_value"))
            failed, message_text = bool(returned.get("is_error")), str(returned.get("message") or "")
            facts.call_errors[payload["tool_call_id"]] = (failed, message_text)
        elif kind not in _WIRE_EVENTS:
            sink.skipped["unknown_type"] += 1
    return facts
