"""Codex rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread-uuid>.jsonl`.

Each visible message is usually written twice (`event_msg` and `response_item`, either order):
the first copy is kept and its twin dropped. Calls are joined to `function_call_output` and
`exec_command_end` by `call_id`; a `write_stdin` call is folded into the exec call whose process
it continues, so a long-running command is one record with its final exit code. In code mode a
JavaScript cell (`custom_tool_call` `exec`) runs the commands: a cell with one literal
`tools.exec_command` call is that shell call, with its `wait` polls and, when it printed the
`SESSION_ID` of a command left running, the cells that poll it (`tools.write_stdin`) folded in; a
cell with several stays one `exec` call (its output cannot be split between them) beside one shell
call per literal command, whose outcome is unknown. An exit code is read only from a result object
a cell printed whole ("Script completed" says nothing of the command). Reasoning is skipped (not
a stated decision), and so are developer messages (harness instructions).
"""

import json
import re
from pathlib import Path
from typing import Any, Final

from obelisk_session_evidence.contracts.prior_calls import SHELL_TOOL_NAMES
from obelisk_session_evidence.providers.native.parsers._code_mode import (
    SCRIPT_COMPLETED,
    SCRIPT_RUNNING,
    UNKNOWN,
    cell_tool_calls,
    reported_exit_code,
    reported_process,
)
from obelisk_session_evidence.providers.native.parsers._reading import JsonLines
from obelisk_session_evidence.providers.native.parsers._sink import RecordSink
from obelisk_session_evidence.providers.native.parsers._text import (
    CODEX_EXIT,
    CODEX_RUNNING,
    as_object,
    as_text,
    block_text,
    content_uid,
    exit_code_in,
    is_injected,
    iso_timestamp,
    parse_arguments,
    shell_command,
)
from obelisk_session_evidence.providers.native.parsers.outcome import ParseOutcome, ResumeState
from obelisk_session_evidence.providers.native.records import Role

UNPAIRED_KEPT: Final = 64
_IGNORED_EVENTS: Final = frozenset(
    {
        "task_started",
        "task_complete",
        "token_count",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "agent_reasoning_section_break",
        "exec_command_begin",
        "exec_command_output_delta",
        "patch_apply_begin",
        "web_search_begin",
        "web_search_end",
        "mcp_tool_call_begin",
        "mcp_tool_call_end",
        "turn_aborted",
        "turn_diff",
        "plan_update",
        "context_compacted",
        "entered_review_mode",
        "exited_review_mode",
        "view_image_tool_call",
        "item_completed",
        "thread_rolled_back",
        "undo_started",
        "undo_completed",
        "stream_error",
        "error",
        "background_event",
        "session_configured",
        "mcp_startup_update",
        "mcp_startup_complete",
        "user_message_edit",
        "shutdown_complete",
    }
)
_IGNORED_RECORDS: Final = frozenset({"world_state", "state"})
"""0.142: what the model was shown of its instructions and environments (the cwd comes from other
records); a legacy rollout's `record_type: state` lines."""
_LEGACY_ITEMS: Final = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "local_shell_call",
        "custom_tool_call",
        "custom_tool_call_output",
        "reasoning",
        "web_search_call",
    }
)
"""The response items a legacy rollout (before `session_meta`, mid-2025) writes as lines of their own."""
_ENVIRONMENT_CWD: Final = re.compile(
    r"^(?:Current working directory: (?P<legacy>/[^\n]+)|[ \t]*<cwd>(?P<cwd>/[^<\n]+)</cwd>)", re.M
)
"""The folder an `<environment_context>` message names (legacy: `Current working directory: /x`)."""
_IGNORED_ITEMS: Final = frozenset({"reasoning", "web_search_call", "image_generation_call", "ghost_snapshot"})
_MESSAGE_TEXT_KINDS: Final = ("input_text", "output_text", "text")
_OTHER_CHANNEL: Final = {"event": "item", "item": "event"}
_EXEC_FAILURE: Final = re.compile(
    r"\A(?:failed in sandbox \S+ with )?execution error: (?:sandbox denied exec error, exit code: (-?\d+), stdout: )?"
)
"""Older Codex's (0.2x-0.5x) whole output for a command that failed inside its sandbox: "denied", with
the command's exit code and streams, for any non-zero exit there (a failing test too), or timed out,
or killed by a signal; or that it could not start at all (`execution error: No such file …`)."""
_PATCH_PROGRAMS: Final = ("apply_patch", "applypatch")
_HERE_DOCUMENT: Final = re.compile(r"\A\s*(?:<<-?[ \t]*(['\"]?)(?P<end>\w+)\1\s*)?\Z")
_PATCH_START: Final = "*** Begin Patch"
_PATCH_END: Final = "*** End Patch"
_OUTPUT_MARKER: Final = "\nOutput:\n"
_HEADER_LIMIT: Final = 2000
_CTRL_C: Final = "\x03"


def parse_codex(
    path: Path, *, start_offset: int = 0, resume: ResumeState | None = None, max_bytes: int | None = None
) -> ParseOutcome:
    """Parse one Codex rollout from `start_offset`."""
    sink = RecordSink("codex", resume, fallback_session_id=path.stem[-36:])
    rollout = _Rollout(sink, resume or ResumeState())
    lines = JsonLines(path, start_offset=start_offset, skipped=sink.skipped, max_bytes=max_bytes)
    for _, record in lines:
        rollout.take(record)
    return sink.outcome(
        end_offset=lines.end_offset,
        resumable=True,
        prefix_sha256=lines.prefix_sha256,
        process_calls=tuple(rollout.process_calls.items()),
        stdin_calls=tuple(rollout.stdin_calls.items()),
        interrupted_calls=tuple(rollout.interrupted),
        unpaired_messages=tuple(rollout.unpaired)[-UNPAIRED_KEPT:],
    )


def read_thread_names(index_path: Path) -> dict[str, str]:
    """Titles from `~/.codex/session_index.jsonl` (`{id, thread_name}`), later lines winning."""
    names: dict[str, str] = {}
    try:
        with open(index_path, "rb") as lines:
            for raw in lines:
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry.get("thread_name"):
                    names[entry["id"]] = str(entry["thread_name"])
    except OSError:
        return {}
    return names


_PATCH_OPERATIONS: Final = {"add": "Add", "delete": "Delete", "update": "Update"}
"""`patch_apply_end` change types, as an `apply_patch` text's file lines name them."""


class _Rollout:
    """Per-file state: running processes, `write_stdin` calls, messages awaiting their twin."""

    def __init__(self, sink: RecordSink, resume: ResumeState) -> None:
        self.sink = sink
        self.process_calls: dict[str, str] = dict(resume.process_calls)
        self.unpaired: dict[str, None] = dict.fromkeys(resume.unpaired_messages)
        self.stdin_calls: dict[str, str] = dict(resume.stdin_calls)
        self.interrupted: set[str] = set(resume.interrupted_calls)

    def take(self, record: dict[str, Any]) -> None:
        """Route one line by `type` and `payload.type` (a legacy line by its own `type`)."""
        kind, payload = record.get("type"), record.get("payload")
        if not isinstance(payload, dict):
            kind, payload = _legacy_line(record)
        if payload is None:
            self.sink.skipped["missing_fields"] += 1
            return
        timestamp = iso_timestamp(record.get("timestamp"))
        self.sink.note_time(timestamp)
        if kind == "session_meta":
            self._session_meta(payload)
        elif kind == "turn_context":
            self._first_cwd(payload.get("cwd"))
        elif kind == "event_msg":
            self._event(payload, timestamp)
        elif kind == "response_item":
            self._item(payload, timestamp)
        elif kind == "compacted":
            if isinstance(payload.get("message"), str):
                self.sink.add_summary("compaction", payload["message"], timestamp)
        elif kind not in _IGNORED_RECORDS:
            self.sink.skipped["unknown_type"] += 1

    def _first_cwd(self, cwd: object) -> None:
        """A turn's folder is the session's when no earlier record named one."""
        if self.sink.session.cwd is None and isinstance(cwd, str):
            self.sink.update_session(cwd=cwd)

    def _session_meta(self, payload: dict[str, Any]) -> None:
        # Later session_meta lines (compacted or forked histories) repeat other threads' headers.
        if self.sink.identified or not isinstance(payload.get("id"), str):
            return
        git = as_object(payload.get("git"))
        source = payload.get("source")
        parent = _find_key(source, "parent_thread_id") if isinstance(source, dict) else None
        self.sink.update_session(
            session_id=payload["id"],
            cwd=as_text(payload.get("cwd")),
            git_branch=as_text(git.get("branch")),
            git_commit=as_text(git.get("commit_hash")),
            repository_url=as_text(git.get("repository_url")),
            forked_from=as_text(payload.get("forked_from_id")),
            parent_session_id=as_text(parent),
        )
        version = payload.get("cli_version")
        self.sink.format_version = f"codex-{version}" if isinstance(version, str) else "codex"

    def _event(self, payload: dict[str, Any], timestamp: str | None) -> None:
        kind = payload.get("type")
        if kind in ("user_message", "agent_message"):
            text = payload.get("message")
            if isinstance(text, str):
                self._visible("event", "user" if kind == "user_message" else "assistant", text, timestamp)
        elif kind == "exec_command_end" and isinstance(payload.get("call_id"), str):
            status, code = payload.get("status"), payload.get("exit_code")
            output = payload.get("aggregated_output")
            ended = status in ("completed", "failed") and payload["call_id"] not in self.interrupted
            self.sink.record_outcome(
                payload["call_id"],
                is_error=(status == "failed") if ended else None,
                exit_code=self._status(payload["call_id"], code if isinstance(code, int) else None),
                output=output if isinstance(output, str) else None,
                cwd=self._place(payload.get("cwd")),
            )
        elif kind == "patch_apply_end" and isinstance(payload.get("call_id"), str):
            if self.sink.call_name(payload["call_id"]) is None:
                self._cell_patch(payload["call_id"], payload.get("changes"), timestamp)
            success = payload.get("success")
            self.sink.record_outcome(payload["call_id"], is_error=None if success is None else not success)
        elif kind == "thread_settings_applied":  # 0.142: a turn's settings, its folder among them
            self._first_cwd(as_object(payload.get("thread_settings")).get("cwd"))
        elif kind not in _IGNORED_EVENTS:
            self.sink.skipped["unknown_type"] += 1

    def _item(self, payload: dict[str, Any], timestamp: str | None) -> None:
        kind = payload.get("type")
        if kind == "message":
            role = payload.get("role")
            if role in ("user", "assistant"):
                text = block_text(payload.get("content"), kinds=_MESSAGE_TEXT_KINDS)
                if role == "user" and self.sink.session.cwd is None:  # only a legacy rollout needs it
                    self._first_cwd(_environment_cwd(text))
                self._visible("item", role, text, timestamp)
        elif kind in ("function_call", "local_shell_call"):
            self._function_call(payload, timestamp)
        elif kind == "custom_tool_call" and isinstance(payload.get("call_id"), str):
            self._custom_call(payload["call_id"], as_text(payload.get("name")), payload.get("input"), timestamp)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._call_output(payload)
        elif kind not in _IGNORED_ITEMS:
            self.sink.skipped["unknown_type"] += 1

    def _cell_patch(self, call_id: str, changes: object, timestamp: str | None) -> None:
        """An `apply_patch` a code-mode cell ran: no call names it, and its event lists the files it
        changed. It is an `apply_patch` call whose patch is those files' header lines (the diff itself
        is not kept), so the files read as an edit's, as every `apply_patch`'s do."""
        if not isinstance(changes, dict):
            return
        lines = []
        for path, change in changes.items():
            described = change if isinstance(change, dict) else {}
            operation = described.get("type")
            verb = _PATCH_OPERATIONS.get(operation, "Update") if isinstance(operation, str) else "Update"
            lines.append(f"*** {verb} File: {path}")
            if isinstance(described.get("move_path"), str):
                lines.append(f"*** Move to: {described['move_path']}")
        patch = "\n".join(("*** Begin Patch", *lines, "*** End Patch"))
        self.sink.open_call_with_arguments(call_id, "apply_patch", {"input": patch}, timestamp)

    def _visible(self, channel: str, role: str, text: str, timestamp: str | None) -> None:
        """Keep the first copy of a visible message; drop the twin from the other channel."""
        digest = content_uid("codex", role, text.strip())
        twin = f"{_OTHER_CHANNEL[channel]}:{digest}"
        if twin in self.unpaired:
            del self.unpaired[twin]
            return
        self.unpaired[f"{channel}:{digest}"] = None
        uid = content_uid("codex", role, timestamp, text)
        kept_role: Role = "user" if role == "user" else "assistant"
        self.sink.add_message(uid, kept_role, timestamp, text, is_meta=is_injected(text))

    def _function_call(self, payload: dict[str, Any], timestamp: str | None) -> None:
        call_id = payload.get("call_id") or payload.get("id")
        if not isinstance(call_id, str):
            self.sink.skipped["missing_fields"] += 1
            return
        named = as_text(payload.get("name"))
        name = "local_shell" if named is None else named
        arguments = parse_arguments(payload.get("arguments") or payload.get("action"))
        if name in ("write_stdin", "wait"):
            process = f"cell:{arguments.get('cell_id')}" if name == "wait" else str(arguments.get("session_id"))
            started_by = self.process_calls.get(process)
            if started_by is not None:
                self._continue(call_id, started_by, arguments.get("chars"))
                return
        self._open(call_id, name, arguments, timestamp)

    def _custom_call(self, call_id: str, name: str | None, source: object, timestamp: str | None) -> None:
        """A freeform call: apply_patch's input is the patch text itself (its file paths live only
        inside it); a code-mode cell's `exec_command` calls with a literal `cmd` are shell calls, and
        a cell polling one running command (`write_stdin`) continues it."""
        if name != "exec" or not isinstance(source, str):
            arguments = {"input": source} if isinstance(source, str) else {}
            self.sink.open_call_with_arguments(call_id, name, arguments, timestamp)
            return
        calls = cell_tool_calls(source, "exec_command")
        polls = () if calls else cell_tool_calls(source, "write_stdin")
        started_by = self.process_calls.get(str(polls[0].get("session_id"))) if len(polls) == 1 else None
        if started_by is not None:
            self._continue(call_id, started_by, polls[0].get("chars"))
            return
        readable = [
            {key: value for key, value in call.items() if value is not UNKNOWN}
            for call in calls
            if isinstance(call.get("cmd"), str)
        ]
        if len(calls) == 1 and readable:
            self._open(call_id, "exec_command", readable[0], timestamp)
            return
        self.sink.open_call_with_arguments(call_id, name, {"input": source}, timestamp)
        for number, arguments in enumerate(readable, 1):
            self._open(f"{call_id}#{number}", "exec_command", arguments, timestamp)

    def _continue(self, call_id: str, started_by: str, chars: object) -> None:
        """`call_id` polls or writes to the process `started_by` left running. Ctrl-C written to it
        is the agent stopping that process itself: the status it then ends with (130, or a wrapper's
        1, as npm's) is the agent's doing, not the program's outcome."""
        self.stdin_calls[call_id] = started_by
        if isinstance(chars, str) and _CTRL_C in chars:
            self.interrupted.add(started_by)

    def _status(self, call_id: str, exit_code: int | None) -> int | None:
        """The exit code to record for `call_id`: none for a process the agent interrupted (both its
        `exec_command_end` and the output of the poll that saw it end may carry the status)."""
        return None if call_id in self.interrupted else exit_code

    def _open(self, call_id: str, name: str, arguments: dict[str, Any], timestamp: str | None) -> None:
        cwd = self._place(arguments.get("workdir") or arguments.get("working_directory"))
        patch = _shell_patch(arguments) if name.lower() in SHELL_TOOL_NAMES else None
        if patch is not None:  # an edit, as the freeform `apply_patch` call's: never a command to repeat
            self.sink.open_call_with_arguments(call_id, "apply_patch", {"input": patch}, timestamp, cwd)
            return
        self.sink.open_call_with_arguments(call_id, name, arguments, timestamp, cwd)

    def _place(self, folder: object) -> str | None:
        """The folder a shell call names to run in; a relative one is under the session's cwd (as
        Codex resolves it), and is unknown without that."""
        if not isinstance(folder, str) or not folder.strip():
            return None
        if folder.startswith("/"):
            return folder
        base = self.sink.session.cwd
        return f"{base.rstrip('/')}/{folder}" if base and base.startswith("/") else None

    def _call_output(self, payload: dict[str, Any]) -> None:
        call_id = payload.get("call_id")
        if not isinstance(call_id, str):
            self.sink.skipped["missing_fields"] += 1
            return
        target = self.stdin_calls.pop(call_id, call_id)
        text, metadata_exit = _output_text(payload.get("output"))
        exec_failure = _EXEC_FAILURE.match(text)
        if exec_failure is not None and metadata_exit is None:
            code = exec_failure.group(1)
            printed = _printed(text[exec_failure.end() :]) if code is not None else text
            self.sink.record_outcome(target, is_error=True, exit_code=int(code) if code else None, output=printed)
            return
        # Exec outputs open with a status header ("Chunk ID… Process exited with code N… Output:"),
        # code-mode cells' with "Script completed" or "Script running with cell ID N".
        marker = text.find(_OUTPUT_MARKER, 0, _HEADER_LIMIT)
        header, body_start = (text[:marker], marker + len(_OUTPUT_MARKER)) if marker != -1 else ("", 0)
        running = CODEX_RUNNING.search(header) or SCRIPT_RUNNING.search(header)
        exit_code = metadata_exit if metadata_exit is not None else exit_code_in(header, CODEX_EXIT)
        cell_done = SCRIPT_COMPLETED.search(header) is not None
        process = None
        if exit_code is None and cell_done and self.sink.call_name(target) == "exec_command":
            printed = text[body_start:]
            exit_code = reported_exit_code(printed)
            process = reported_process(printed) if exit_code is None else None
        continued = target != call_id
        body_is_empty = len(text) - body_start < _HEADER_LIMIT and not text[body_start:].strip()
        if continued and body_is_empty and exit_code is None and not cell_done and running is None:
            return
        output = None if body_is_empty else text
        self.sink.record_outcome(
            target,
            exit_code=self._status(target, exit_code),
            output=output,
            output_start=body_start,
            append_output=continued,
        )
        if running:
            started = running.group(1)
            self.process_calls[f"cell:{started}" if running.re is SCRIPT_RUNNING else started] = target
            self.sink.reopen_call(target)
        elif exit_code is not None:
            self.process_calls = {pid: call for pid, call in self.process_calls.items() if call != target}
        elif cell_done:
            # The cell is over; a command it left running (printed, or polled before) runs on.
            self.process_calls = {
                pid: call for pid, call in self.process_calls.items() if call != target or not pid.startswith("cell:")
            }
            if process is not None:
                self.process_calls[process] = target
                self.sink.reopen_call(target)


def _legacy_line(record: dict[str, Any]) -> tuple[object, dict[str, Any] | None]:
    """A legacy rollout's line (no `payload`) as the record it stands for: its first line
    (`{id, timestamp, instructions, git}`) is the session's meta, a `record_type` line its state, and
    any other line a response item itself."""
    if "record_type" in record:
        return "state", record
    kind = record.get("type")
    if kind is None and isinstance(record.get("id"), str) and "instructions" in record:
        return "session_meta", record
    return ("response_item", record) if kind in _LEGACY_ITEMS else (kind, None)


def _environment_cwd(text: str) -> str | None:
    """The working folder an injected `<environment_context>` message states, if any."""
    if not text.lstrip().startswith("<environment_context>"):
        return None
    found = _ENVIRONMENT_CWD.search(text)
    return (found.group("legacy") or found.group("cwd")).strip() if found else None


def _printed(streams: str) -> str:
    """A sandbox failure's `STDOUT, stderr: STDERR`, as the terminal showed them."""
    stdout, separator, stderr = streams.rpartition(", stderr: ")
    return f"{stdout}\n{stderr}" if separator else streams


def _shell_patch(arguments: dict[str, Any]) -> str | None:
    """The patch of a shell call that only runs `apply_patch` (older Codex: `["apply_patch", PATCH]`,
    or `apply_patch <<'EOF'` … `EOF`); None for any other command."""
    argv = arguments.get("command")
    if isinstance(argv, list) and len(argv) == 2 and argv[0] in _PATCH_PROGRAMS and isinstance(argv[1], str):
        return argv[1]  # as given, well formed or not: the tool read it as a patch
    command = shell_command(arguments)
    if command is None or not command.lstrip().startswith(_PATCH_PROGRAMS):
        return None
    start, end = command.find(_PATCH_START), command.rfind(_PATCH_END)
    if start == -1 or end < start:
        return None
    program = command.split(None, 1)[0]
    here_document = _HERE_DOCUMENT.match(command[command.find(program) + len(program) : start])
    if program not in _PATCH_PROGRAMS or here_document is None:
        return None
    after = command[end + len(_PATCH_END) :].split()
    # A here-document whose delimiter line is missing runs to the end of the command: the shell
    # warns ("delimited by end-of-file") and the tool still reads the patch.
    return command[start : end + len(_PATCH_END)] if after in ([], [here_document.group("end")]) else None


def _output_text(output: object) -> tuple[str, int | None]:
    """A call output's text, and the exit code when it is the `{output, metadata}` JSON shape."""
    if isinstance(output, list):
        return block_text(output, kinds=_MESSAGE_TEXT_KINDS), None
    if not isinstance(output, str):
        return "", None
    if output.startswith('{"output"'):
        try:
            wrapped = json.loads(output)
        except ValueError:
            return output, None
        metadata = wrapped.get("metadata") if isinstance(wrapped, dict) else None
        code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        return str(wrapped.get("output", "")), code if isinstance(code, int) else None
    return output, None


def _find_key(value: object, key: str) -> object:
    """The first value stored under `key` anywhere inside nested dicts."""
    if isinstance(value, dict):
        if key in value:
            return value[key]
        for nested in value.values():
            found = _find_key(nested, key)
            if found is not None:
                return found
    return None
