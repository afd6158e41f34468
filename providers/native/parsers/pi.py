"""Pi coding-agent sessions: `<sessions root>/--<cwd with / as ->--/<file>.jsonl`.

Reads both layouts and reports which it saw: version 3 (header `version: 3`, entries with
`id`/`parentId` forming a tree) and the old version 1 (no `version`, no entry ids). Message
uids are the entry id plus its timestamp in v3 and a digest of timestamp, role and text in v1,
so entries a branched file copies from its parent dedupe across files. Tool calls come from
assistant `toolCall` blocks; a user's `!command` (`bashExecution`) is a call of its own.
"""

from pathlib import Path
from typing import Any, Final

from obelisk_session_evidence.providers.native.parsers._reading import JsonLines
from obelisk_session_evidence.providers.native.parsers._sink import RecordSink
from obelisk_session_evidence.providers.native.parsers._text import (
    PI_EXIT,
    as_text,
    block_text,
    content_uid,
    exit_code_in,
    is_injected,
    iso_timestamp,
)
from obelisk_session_evidence.providers.native.parsers.outcome import ParseOutcome, ResumeState
from obelisk_session_evidence.providers.native.records import SummaryKind

_IGNORED_ENTRIES: Final = frozenset({"model_change", "thinking_level_change", "label", "custom", "custom_message"})
_SUMMARY_ROLES: Final[dict[str, SummaryKind]] = {"compactionSummary": "compaction", "branchSummary": "summary"}


def parse_pi(
    path: Path, *, start_offset: int = 0, resume: ResumeState | None = None, max_bytes: int | None = None
) -> ParseOutcome:
    """Parse one pi session file (v1 or v3) from `start_offset`."""
    sink = RecordSink("pi", resume, fallback_session_id=path.stem.rpartition("_")[2] or path.stem)
    lines = JsonLines(path, start_offset=start_offset, skipped=sink.skipped, max_bytes=max_bytes)
    for offset, entry in lines:
        kind = entry.get("type")
        timestamp = iso_timestamp(entry.get("timestamp"))
        sink.note_time(timestamp)
        if kind == "session":
            _header(sink, entry)
        elif kind == "message" and isinstance(entry.get("message"), dict):
            _message(sink, entry, entry["message"], timestamp, offset)
        elif kind == "compaction" and isinstance(entry.get("summary"), str):
            sink.add_summary("compaction", entry["summary"], timestamp)
        elif kind == "branch_summary" and isinstance(entry.get("summary"), str):
            sink.add_summary("summary", entry["summary"], timestamp)
        elif kind == "session_info" and isinstance(entry.get("name"), str):
            sink.add_summary("title", entry["name"], timestamp)
            sink.update_session(title=entry["name"])
        elif kind == "message":
            sink.skipped["missing_fields"] += 1
        elif kind not in _IGNORED_ENTRIES:
            sink.skipped["unknown_type"] += 1
    return sink.outcome(end_offset=lines.end_offset, resumable=True, prefix_sha256=lines.prefix_sha256)


def _header(sink: RecordSink, entry: dict[str, Any]) -> None:
    version = entry.get("version")
    sink.format_version = f"pi-v{version}" if isinstance(version, int) else "pi-v1"
    branched_from = entry.get("branchedFrom") or entry.get("parentSession")
    sink.update_session(
        session_id=as_text(entry.get("id")),
        cwd=as_text(entry.get("cwd")),
        forked_from=_session_id_of(branched_from) if isinstance(branched_from, str) else None,
    )


def _session_id_of(reference: str) -> str:
    """A parent session named by file path (`…/<time>_<id>.jsonl`) or by id."""
    return Path(reference).stem.rpartition("_")[2] if reference.endswith(".jsonl") else reference


def _message(
    sink: RecordSink, entry: dict[str, Any], message: dict[str, Any], timestamp: str | None, offset: int
) -> None:
    role = message.get("role")
    content = message.get("content")
    entry_id = entry.get("id")
    if role in ("user", "assistant"):
        text = block_text(content)
        if isinstance(entry_id, str):
            uid = f"pi:{entry_id}:{timestamp}"
        else:
            uid = content_uid("pi", timestamp, role, text, offset if not text.strip() else "")
        if role == "assistant" and isinstance(content, list):
            _tool_calls(sink, content, timestamp)
        sink.add_message(uid, role, timestamp, text, is_meta=role == "user" and is_injected(text))
    elif role == "toolResult" and isinstance(message.get("toolCallId"), str):
        output = block_text(content)
        exit_code = exit_code_in(output, PI_EXIT) if message.get("toolName") == "bash" else None
        failed = bool(message.get("isError"))
        sink.record_outcome(message["toolCallId"], is_error=failed, exit_code=exit_code, output=output)
    elif role == "bashExecution" and isinstance(message.get("command"), str):
        _bash_execution(sink, entry, message, timestamp)
    elif role in _SUMMARY_ROLES and isinstance(message.get("summary"), str):
        sink.add_summary(_SUMMARY_ROLES[role], message["summary"], timestamp)
    elif role != "custom":
        sink.skipped["unknown_type" if isinstance(role, str) else "missing_fields"] += 1


def _tool_calls(sink: RecordSink, content: list[Any], timestamp: str | None) -> None:
    for block in content:
        if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str):
            name = as_text(block.get("name"))
            sink.open_call_with_arguments(block["id"], name, block.get("arguments"), timestamp)


def _bash_execution(sink: RecordSink, entry: dict[str, Any], message: dict[str, Any], timestamp: str | None) -> None:
    """A command the user ran with `!`: no call id exists, so one is derived from the entry."""
    command = message["command"]
    call_id = as_text(entry.get("id")) or content_uid("pi-bash", timestamp, command)
    code = message.get("exitCode")
    sink.open_call(call_id, "bash", command_text=command, file_paths=(), timestamp=timestamp)
    output = message.get("output") if isinstance(message.get("output"), str) else None
    sink.record_outcome(
        call_id,
        is_error=bool(message.get("cancelled")) or (isinstance(code, int) and code != 0),
        exit_code=code if isinstance(code, int) else None,
        output=output,
    )
