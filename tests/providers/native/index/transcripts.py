"""Claude Code transcripts written line by line, for index, provider and CLI tests."""

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ClaudeTranscript:
    """A Claude Code session file (`<root>/<encoded cwd>/<session>.jsonl`) built one record at a time."""

    root: Path
    session_id: str
    cwd: str
    minute: int = 0
    counter: int = 0
    lines: list[str] = field(default_factory=list)

    @property
    def path(self) -> Path:
        encoded = "".join(ch if ch.isalnum() else "-" for ch in self.cwd)
        return self.root / encoded / f"{self.session_id}.jsonl"

    def user(self, text: str) -> "ClaudeTranscript":
        self._record("user", {"role": "user", "content": text})
        return self

    def assistant(self, text: str) -> "ClaudeTranscript":
        self._record(
            "assistant", {"id": self._id("msg"), "role": "assistant", "content": [{"type": "text", "text": text}]}
        )
        return self

    def call(self, name: str, arguments: dict, output: str, *, is_error: bool = False) -> "ClaudeTranscript":
        call_id = self._id("toolu")
        self._record(
            "assistant",
            {
                "id": self._id("msg"),
                "role": "assistant",
                "content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}],
            },
        )
        self.result(call_id, output, is_error=is_error)
        return self

    def call_without_result(self, name: str, arguments: dict) -> str:
        call_id = self._id("toolu")
        self._record(
            "assistant",
            {
                "id": self._id("msg"),
                "role": "assistant",
                "content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}],
            },
        )
        return call_id

    def result(self, call_id: str, output: str, *, is_error: bool = False) -> "ClaudeTranscript":
        content = [{"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": is_error}]
        self._record("user", {"role": "user", "content": content})
        return self

    def bash(self, command: str, output: str, *, exit_code: int = 0) -> "ClaudeTranscript":
        failed = exit_code != 0
        text = f"Exit code {exit_code}\n{output}" if failed else output
        return self.call("Bash", {"command": command}, text, is_error=failed)

    def write(self) -> Path:
        """Write every pending line (appending to what is already on disk)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.writelines(line + "\n" for line in self.lines)
        self.lines.clear()
        return self.path

    def _record(self, kind: str, message: dict) -> None:
        self.minute += 1
        record = {
            "type": kind,
            "uuid": self._id("uuid"),
            "parentUuid": None,
            "isSidechain": False,
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "version": "2.1.0",
            "timestamp": f"2026-03-01T{10 + self.minute // 60:02d}:{self.minute % 60:02d}:00.000Z",
            "message": message,
        }
        self.lines.append(json.dumps(record))

    def _id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-{self.session_id}-{self.counter}"
