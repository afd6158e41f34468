"""What one parse returns, and the state a caller hands back to resume an append-only file."""

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from obelisk_session_evidence.providers.native.records import (
    MessageRecord,
    SessionRecord,
    SummaryRecord,
    ToolCallRecord,
)

SKIP_REASONS = (
    "invalid_json",
    "not_an_object",
    "bad_encoding",
    "unknown_type",
    "missing_fields",
    "duplicate",
    "torn_frame",
    "oversize_record",
)
"""Reasons a line or record is counted in `ParseOutcome.skipped_records`.

`bad_encoding` counts lines that held invalid UTF-8: they are decoded with U+FFFD replacement
and still parsed, so the count flags damage without losing the rest of the record.
`oversize_record` counts lines longer than `_reading.MAX_RECORD_BYTES`, skipped unread so memory
stays bounded. It is not damage: the file is intact, one record is deliberately not indexed.
"""
DAMAGE_REASONS = frozenset({"invalid_json", "not_an_object", "bad_encoding", "torn_frame"})
"""Skips that mean the file itself is damaged (not merely a record type we do not use):
the index reports `incomplete` while any of them stands."""


@dataclass(frozen=True, slots=True)
class ResumeState:
    """Context a parse leaves behind so the next parse from `end_offset` can continue it.

    Resuming mid-file loses the header (Codex `session_meta`, Pi/DSH headers), calls still
    waiting for their output, and Claude blocks still arriving for one `message.id`; this
    carries them. Every field is a plain value, so the index may persist it. After a restart
    without it, `ResumeState(session=row)` rebuilt from the index is enough for correct ids.
    """

    session: SessionRecord | None = None
    open_calls: tuple[ToolCallRecord, ...] = ()
    """Calls that may still receive outcome lines: those without a result, plus the last few."""
    open_messages: tuple[MessageRecord, ...] = ()
    """Claude assistant messages that may still receive content blocks."""
    process_calls: tuple[tuple[str, str], ...] = ()
    """A running process id -> the call that started it: Codex's (for `write_stdin`), a Claude Code
    background task's (for `TaskOutput`)."""
    stdin_calls: tuple[tuple[str, str], ...] = ()
    """Calls still awaiting output -> the call they continue: Codex `write_stdin`, Claude Code `TaskOutput`."""
    interrupted_calls: tuple[str, ...] = ()
    """Codex exec calls whose running process the agent sent Ctrl-C."""
    unpaired_messages: tuple[str, ...] = ()
    """Codex visible messages seen on one channel and still expected on the other."""
    format_version: str | None = None

    def to_json(self) -> str:
        """The state as compact JSON, for an index to store beside its cursor."""
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "ResumeState | None":
        """The state `to_json` wrote; None when it is not one (then parse from offset 0)."""
        try:
            raw: dict[str, Any] = json.loads(text)
            session = raw.get("session")
            return cls(
                session=SessionRecord(**session) if session else None,
                open_calls=tuple(
                    ToolCallRecord(**call | {"file_paths": tuple(call.get("file_paths") or ())})
                    for call in raw.get("open_calls") or ()
                ),
                open_messages=tuple(MessageRecord(**message) for message in raw.get("open_messages") or ()),
                process_calls=tuple((str(a), str(b)) for a, b in raw.get("process_calls") or ()),
                stdin_calls=tuple((str(a), str(b)) for a, b in raw.get("stdin_calls") or ()),
                interrupted_calls=tuple(str(call) for call in raw.get("interrupted_calls") or ()),
                unpaired_messages=tuple(str(key) for key in raw.get("unpaired_messages") or ()),
                format_version=raw.get("format_version"),
            )
        except (TypeError, ValueError, AttributeError):
            return None


@dataclass(frozen=True, slots=True)
class ParseOutcome:
    """The records one parse produced, where it stopped, and what it skipped."""

    sessions: tuple[SessionRecord, ...]
    messages: tuple[MessageRecord, ...]
    tool_calls: tuple[ToolCallRecord, ...]
    summaries: tuple[SummaryRecord, ...]
    end_offset: int
    """Byte offset just after the last complete line; a half-written last line is not consumed."""
    resumable: bool
    """False when the next parse must re-read from 0 (zstd DSH files, Kimi session directories)."""
    format_version: str | None
    """e.g. `pi-v1`, `pi-v3`, `dsh-v0`, `kimi-wire-1.1`, `kimi-cli-1.4`, `codex-0.125.0`."""
    skipped_records: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    resume: ResumeState = field(default_factory=ResumeState)
    prefix_sha256: str | None = None
    """The sha256 of the bytes `[0, end_offset)`, hashed while they were parsed; None after a parse
    that started past 0 (or one that reads no single file)."""

    @property
    def skipped_total(self) -> int:
        """All skipped or damaged lines and records, over every reason."""
        return sum(self.skipped_records.values())
