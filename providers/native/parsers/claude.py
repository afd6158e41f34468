"""Claude Code transcripts: `~/.claude/projects/<encoded-cwd>/<sessionId>.jsonl` and sub-agent files.

One assistant API message is written as one record per content block, all sharing
`message.id`: the blocks are merged into one message whose uid is that id. User messages use
their `uuid`. Thinking blocks are skipped (reasoning is not a stated decision), and `progress`
records are skipped because they only echo what the sub-agent files hold.

A Bash call run in the background answers at once (`Command running in background with ID: X`):
it has no outcome then. A later `TaskOutput` (earlier `BashOutput`) that finds task X completed
gives it its exit code and output; one the agent stopped (`TaskStop`, earlier `KillShell`) has none.
"""

import re
from pathlib import Path
from typing import Any, Final

from obelisk_session_evidence.providers.native.parsers._reading import JsonLines
from obelisk_session_evidence.providers.native.parsers._sink import RecordSink
from obelisk_session_evidence.providers.native.parsers._text import (
    CLAUDE_EXIT,
    as_text,
    block_text,
    exit_code_in,
    is_injected,
    iso_timestamp,
)
from obelisk_session_evidence.providers.native.parsers.outcome import ParseOutcome, ResumeState

_IGNORED_TYPES: Final = frozenset({"progress", "file-history-snapshot", "queue-operation", "attachment"})
_BACKGROUND: Final = re.compile(r"\ACommand running in background with ID: ([\w-]+)")
_TASK_READERS: Final = frozenset({"TaskOutput", "BashOutput"})
_TASK_STOPPERS: Final = frozenset({"TaskStop", "KillShell", "KillBash"})
_TASK_ID_KEYS: Final = ("task_id", "bash_id", "shell_id")
_TASK_STATUS: Final = re.compile(r"<status>(\w+)</status>")
_TASK_EXIT: Final = re.compile(r"<exit_code>(-?\d+)</exit_code>")
_TASK_OUTPUT: Final = re.compile(r"<(output|stdout)>\n?")
_INJECTED_FLAGS: Final = ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")


def parse_claude(
    path: Path, *, start_offset: int = 0, resume: ResumeState | None = None, max_bytes: int | None = None
) -> ParseOutcome:
    """Parse one Claude Code transcript (main or sub-agent) from `start_offset`."""
    sink = RecordSink("claude", resume, fallback_session_id=path.stem)
    still_open = resume.open_messages[-1].record_uid if resume and resume.open_messages else None
    transcript = _Transcript(sink, last_assistant_uid=still_open, resume=resume or ResumeState())
    lines = JsonLines(path, start_offset=start_offset, skipped=sink.skipped, max_bytes=max_bytes)
    for _, record in lines:
        transcript.take(record)
    transcript.settle_title()
    open_uids = (transcript.last_assistant_uid,) if transcript.last_assistant_uid else ()
    return sink.outcome(
        end_offset=lines.end_offset,
        resumable=True,
        prefix_sha256=lines.prefix_sha256,
        open_message_uids=open_uids,
        process_calls=tuple(transcript.tasks.items()),
        stdin_calls=tuple(transcript.task_calls.items()),
    )


class _Transcript:
    """Per-file state: which session the lines belong to, uuids seen, titles offered."""

    def __init__(self, sink: RecordSink, *, last_assistant_uid: str | None, resume: ResumeState) -> None:
        self.sink = sink
        self.seen_uuids: set[str] = set()
        self.leaf_summaries: list[tuple[str, str]] = []
        self.last_assistant_uid = last_assistant_uid
        self.tasks: dict[str, str] = dict(resume.process_calls)
        """Background task id -> the Bash call that started it."""
        self.task_calls: dict[str, str] = dict(resume.stdin_calls)
        """A call reading or stopping a task, awaiting its result -> the Bash call it is about."""

    def take(self, record: dict[str, Any]) -> None:
        """Route one line by its `type`."""
        kind = record.get("type")
        if kind in ("user", "assistant"):
            self._conversation(kind, record)
        elif kind == "summary":
            text = record.get("summary")
            if isinstance(text, str):
                self.sink.add_summary("summary", text, None)
                self.leaf_summaries.append((str(record.get("leafUuid")), text))
        elif kind in ("ai-title", "custom-title"):
            self._title(kind, record)
        elif kind == "system":
            if record.get("subtype") == "away_summary" and isinstance(record.get("content"), str):
                self.sink.add_summary("away", record["content"], iso_timestamp(record.get("timestamp")))
        elif kind not in _IGNORED_TYPES:
            self.sink.skipped["unknown_type"] += 1

    def settle_title(self) -> None:
        """Fall back to a `summary` line whose leaf is in this file when no title record exists."""
        if self.sink.session.title is None:
            for leaf, text in reversed(self.leaf_summaries):
                if leaf in self.seen_uuids:
                    self.sink.update_session(title=text)
                    return

    def _title(self, kind: str, record: dict[str, Any]) -> None:
        text = record.get("customTitle" if kind == "custom-title" else "aiTitle")
        if not isinstance(text, str):
            self.sink.skipped["missing_fields"] += 1
            return
        self.sink.add_summary("title", text, iso_timestamp(record.get("timestamp")))
        # A title the user typed outranks the one the model suggested.
        if kind == "custom-title" or self.sink.session.title is None:
            self.sink.update_session(title=text)

    def _conversation(self, kind: str, record: dict[str, Any]) -> None:
        uuid, message = record.get("uuid"), record.get("message")
        if not isinstance(uuid, str) or not isinstance(message, dict):
            self.sink.skipped["missing_fields"] += 1
            return
        if uuid in self.seen_uuids:
            self.sink.skipped["duplicate"] += 1
            return
        self.seen_uuids.add(uuid)
        self._identify(record)
        timestamp = iso_timestamp(record.get("timestamp"))
        self.sink.note_time(timestamp)
        if kind == "user":
            self._user(uuid, record, message.get("content"), timestamp)
        else:
            # The line's cwd is where its tool calls ran: the Bash tool keeps a `cd` between calls.
            self._assistant(
                str(message.get("id") or uuid), message.get("content"), timestamp, as_text(record.get("cwd"))
            )

    def _identify(self, record: dict[str, Any]) -> None:
        """File the transcript under its session; a sidechain agent file gets its own id."""
        session_id, agent_id = record.get("sessionId"), record.get("agentId")
        if self.sink.identified or not isinstance(session_id, str):
            return
        branch = record.get("gitBranch")
        if record.get("isSidechain") and isinstance(agent_id, str):
            own_id, parent = f"{session_id}:agent-{agent_id}", session_id
        else:
            own_id, parent = session_id, None
        self.sink.update_session(
            session_id=own_id,
            parent_session_id=parent,
            cwd=as_text(record.get("cwd")),
            # `HEAD` is what a detached checkout reports: it names no branch.
            git_branch=branch if isinstance(branch, str) and branch not in ("", "HEAD") else None,
        )
        version = record.get("version")
        self.sink.format_version = f"claude-{version}" if isinstance(version, str) else "claude"

    def _user(self, uuid: str, record: dict[str, Any], content: object, timestamp: str | None) -> None:
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self._tool_result(block)
        text = block_text(content)
        if record.get("isCompactSummary"):
            self.sink.add_summary("compaction", text, timestamp)
        flagged = any(record.get(flag) for flag in _INJECTED_FLAGS)
        self.sink.add_message(uuid, "user", timestamp, text, is_meta=flagged or is_injected(text))

    def _assistant(self, message_id: str, content: object, timestamp: str | None, cwd: str | None) -> None:
        self.last_assistant_uid = message_id
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            self.sink.skipped["missing_fields"] += 1
            return
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                self.sink.extend_message(message_id, "assistant", timestamp, block["text"])
            elif block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                name = as_text(block.get("name"))
                self.sink.open_call_with_arguments(block["id"], name, block.get("input"), timestamp, cwd)
                if name in _TASK_READERS or name in _TASK_STOPPERS:
                    self._about_task(block["id"], name, block.get("input"))

    def _about_task(self, call_id: str, name: str, arguments: object) -> None:
        """A call reading or stopping a background task: a stopped task's Bash call keeps no
        outcome (what it ends with is the agent's doing, as Ctrl-C is in Codex)."""
        given = arguments if isinstance(arguments, dict) else {}
        task = next((str(given[key]) for key in _TASK_ID_KEYS if isinstance(given.get(key), str)), None)
        started_by = self.tasks.get(task) if task is not None else None
        if task is None or started_by is None:
            return
        if name in _TASK_STOPPERS:
            del self.tasks[task]
            self.sink.record_outcome(started_by)  # over, with no outcome
        else:
            self.task_calls[call_id] = started_by

    def _tool_result(self, block: dict[str, Any]) -> None:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str):
            self.sink.skipped["missing_fields"] += 1
            return
        output = block_text(block.get("content"))
        is_error = bool(block.get("is_error"))
        started_by = self.task_calls.pop(call_id, None)
        if started_by is not None and not is_error:
            self._task_result(started_by, output)
        background = None if is_error else _BACKGROUND.match(output)
        if background is not None:  # it runs on: no outcome yet
            self.tasks[background.group(1)] = call_id
            self.sink.record_outcome(call_id, output=output)
            self.sink.reopen_call(call_id)
            return
        exit_code = exit_code_in(output, CLAUDE_EXIT) if is_error else None
        self.sink.record_outcome(call_id, is_error=is_error, exit_code=exit_code, output=output)

    def _task_result(self, started_by: str, output: str) -> None:
        """A read of a background task: once it completed, its exit code and output are the outcome of
        the Bash call that started it."""
        opening = _TASK_OUTPUT.search(output)
        header = output[: opening.start()] if opening else output  # what the task printed is no status
        status, code = _TASK_STATUS.search(header), _TASK_EXIT.search(header)
        if status is None or status.group(1) != "completed" or code is None or started_by not in self.tasks.values():
            return
        self.tasks = {task: call for task, call in self.tasks.items() if call != started_by}
        exit_code = int(code.group(1))
        printed = (
            output[opening.end() :].rstrip().removesuffix(f"</{opening.group(1)}>").rstrip() if opening else output
        )
        self.sink.record_outcome(started_by, is_error=exit_code != 0, exit_code=exit_code, output=printed)
