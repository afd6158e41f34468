"""DeepSeek Harness sessions: `~/.dsh/sessions/--<cwd>--/<session-id>/session[.vN].jsonl[.zstd]`.

The highest `vN` is the canonical file of a session directory. Compressed files are read frame by
frame (a torn final frame keeps what decompressed) and always re-read whole; plain files resume
from a byte offset. A forked child's first `seedLength` events replay its parent and are skipped.
Plugin-injected user messages (runtime context) are meta; reasoning blocks are skipped.
"""

from pathlib import Path
from typing import Any, Final

from obelisk_session_evidence.providers.native.parsers._reading import JsonLines, ZstdJsonLines
from obelisk_session_evidence.providers.native.parsers._sink import RecordSink
from obelisk_session_evidence.providers.native.parsers._text import (
    as_array,
    as_object,
    as_text,
    block_text,
    content_uid,
    iso_timestamp,
)
from obelisk_session_evidence.providers.native.parsers.discovery import canonical_session_file
from obelisk_session_evidence.providers.native.parsers.outcome import ParseOutcome, ResumeState

_IGNORED_EVENTS: Final = frozenset(
    {
        "agent/inbox/spliced",
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        "assistant/chunk",
        "reasoning-chunks",
        "tool-call-chunks",
        "text-chunks",
        "request/header",
        "request/context",
        "subagent/descriptor",
        "approval/policy",
        "session/end-seed",
    }
)


def parse_dsh(
    path: Path, *, start_offset: int = 0, resume: ResumeState | None = None, max_bytes: int | None = None
) -> ParseOutcome:
    """Parse one DSH session file, or the canonical file of a session directory."""
    if path.is_dir():
        chosen = canonical_session_file(path)
        if chosen is None:
            raise FileNotFoundError(path)
        path = chosen
    compressed = path.name.endswith(".zstd")
    sink = RecordSink("dsh", resume, fallback_session_id=path.parent.name)
    if compressed:
        lines: JsonLines | ZstdJsonLines = ZstdJsonLines(path, skipped=sink.skipped)
    else:
        lines = JsonLines(path, start_offset=start_offset, skipped=sink.skipped, max_bytes=max_bytes)
    seed_length = 0
    for offset, event in lines:
        kind = event.get("type")
        if kind == "session":
            seed_length = _header(sink, event)
            continue
        if _sequence(event) < seed_length:
            continue
        timestamp = iso_timestamp(event.get("time", event.get("time0")))
        sink.note_time(timestamp)
        data = event.get("data")
        if not isinstance(data, dict):
            sink.skipped["missing_fields"] += 1
        elif kind in _HANDLERS:
            _HANDLERS[kind](sink, data, timestamp, offset)
        elif kind not in _IGNORED_EVENTS:
            sink.skipped["unknown_type"] += 1
    prefix = lines.prefix_sha256 if isinstance(lines, JsonLines) else None
    return sink.outcome(end_offset=lines.end_offset, resumable=not compressed, prefix_sha256=prefix)


def _header(sink: RecordSink, header: dict[str, Any]) -> int:
    """Take the session header; returns how many leading events replay a parent (fork seed)."""
    version = header.get("version")
    sink.format_version = f"dsh-v{version}" if isinstance(version, int) else "dsh"
    seed = header.get("seedLength")
    parent = as_text(header.get("parentSession"))
    sink.update_session(
        session_id=as_text(header.get("id")),
        cwd=as_text(header.get("cwd")),
        parent_session_id=parent,
        forked_from=parent if isinstance(seed, int) else None,
    )
    sink.note_time(iso_timestamp(header.get("createdAt")))
    return seed if isinstance(seed, int) else 0


def _sequence(event: dict[str, Any]) -> int:
    seq = event.get("seq", event.get("seq0"))
    return seq if isinstance(seq, int) else 1 << 62


def _user_message(sink: RecordSink, data: dict[str, Any], timestamp: str | None, offset: int) -> None:
    text = block_text(data.get("content"))
    source = as_object(data.get("source"))
    uid = as_text(data.get("id")) or content_uid("dsh", timestamp, "user", text, offset)
    # Plugins (the runtime-context snapshot) speak with the user's role but not the user's voice.
    sink.add_message(uid, "user", timestamp, text, is_meta=source.get("kind") not in (None, "user"))


def _assistant_message(sink: RecordSink, data: dict[str, Any], timestamp: str | None, offset: int) -> None:
    message = data.get("message")
    if not isinstance(message, dict):
        sink.skipped["missing_fields"] += 1
        return
    content = message.get("content")
    text = block_text(content)
    uid = as_text(message.get("id")) or content_uid("dsh", timestamp, "assistant", text, offset)
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool-call" and isinstance(block.get("id"), str):
            name = as_text(block.get("name"))
            sink.open_call_with_arguments(block["id"], name, block.get("arguments"), timestamp)
    sink.add_message(uid, "assistant", timestamp, text)


def _tool_call(sink: RecordSink, data: dict[str, Any], timestamp: str | None, offset: int) -> None:
    if not isinstance(data.get("callId"), str):
        sink.skipped["missing_fields"] += 1
        return
    sink.open_call_with_arguments(data["callId"], as_text(data.get("name")), data.get("arguments"), timestamp)


def _tool_result(sink: RecordSink, data: dict[str, Any], timestamp: str | None, offset: int) -> None:
    message = as_object(data.get("message"))
    blocks = as_array(message.get("content"))
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool-result"]
    source = as_object(message.get("source"))
    if not results and isinstance(source.get("callId"), str):
        results = [{"toolCallId": source["callId"], "content": message.get("content")}]
    if not results:
        sink.skipped["missing_fields"] += 1
    for result in results:
        if isinstance(result.get("toolCallId"), str):
            failed = bool(result.get("isError")) or data.get("error") is not None
            output = block_text(result.get("content"))
            sink.record_outcome(result["toolCallId"], is_error=failed, output=output)


def _title(sink: RecordSink, data: dict[str, Any], timestamp: str | None, offset: int) -> None:
    if isinstance(data.get("title"), str):
        sink.add_summary("title", data["title"], timestamp)
        sink.update_session(title=data["title"])


def _compaction(sink: RecordSink, data: dict[str, Any], timestamp: str | None, offset: int) -> None:
    if isinstance(data.get("summary"), str):
        sink.add_summary("compaction", data["summary"], timestamp)


_HANDLERS: Final = {
    "user/message": _user_message,
    "assistant/message": _assistant_message,
    "tool/call": _tool_call,
    "tool/result": _tool_result,
    "session/title": _title,
    "session/compaction": _compaction,
}
