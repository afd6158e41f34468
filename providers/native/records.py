"""Normalised records the native parsers emit: internal values, not public contracts.

Identity rules the index relies on:
- `SessionRecord.session_id` is the agent's own id; a sub-agent transcript that shares its
  parent's id gets `<parent id>:<agent id>` and names the parent in `parent_session_id`.
- `MessageRecord.record_uid` is stable across files: the agent's own message id where one exists
  (Claude `message.id` / `uuid`, DSH and Kimi message ids), else a content digest, so the same
  message copied into a resumed or forked file dedupes to one row.
- `ToolCallRecord` is keyed by `(session_id, call_id)`; a later incremental parse may emit the
  same call again with its outcome filled in, which the index upserts.
- Timestamps are ISO-8601 UTC strings with milliseconds and `Z`, so they sort as text.
"""

from dataclasses import dataclass
from typing import Final, Literal

from obelisk_session_evidence.contracts.base import EvidenceType
from obelisk_session_evidence.contracts.prior_calls import CallOutcome
from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.failure_causes import call_failed, call_outcome

Role = Literal["user", "assistant"]
SummaryKind = Literal["title", "compaction", "away", "summary"]

FILE_TOOL_NAMES: Final[frozenset[str]] = frozenset(
    {
        "read",
        "edit",
        "write",
        "multiedit",
        "notebookedit",
        "apply_patch",
        "readfile",
        "writefile",
        "strreplacefile",
    }
)
"""Lower-cased tool names whose successful calls are file history (Claude, Codex, Pi, Kimi, DSH)."""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One agent session (or sub-agent transcript) as its own records describe it."""

    source: SourceKind
    session_id: str
    cwd: str | None = None
    git_branch: str | None = None
    git_commit: str | None = None
    repository_url: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    title: str | None = None
    parent_session_id: str | None = None
    forked_from: str | None = None


@dataclass(frozen=True, slots=True)
class MessageRecord:
    """One visible user or assistant message; thinking and reasoning text are never included."""

    session_id: str
    record_uid: str
    role: Role
    timestamp: str | None
    text: str
    is_meta: bool = False

    @property
    def evidence_type(self) -> EvidenceType | None:
        """`decision` for the user's instructions and the agent's stated choices, else None."""
        if self.is_meta or not self.text.strip():
            return None
        return "decision"


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One tool call joined with its outcome (result, exit code, error flag) by call id."""

    session_id: str
    call_id: str
    name: str | None
    command_text: str | None = None
    file_paths: tuple[str, ...] = ()
    is_error: bool | None = None
    exit_code: int | None = None
    output_excerpt: str | None = None
    timestamp: str | None = None
    cwd: str | None = None
    """The folder this call ran in, where the source records one per call (Codex's `workdir`,
    the `cwd` of the Claude Code line holding the call); None when it records none, and the
    session's cwd then stands for it."""
    escalated: bool = False
    """It asked to run outside the agent's sandbox (`parsers._text.runs_escalated`): after a
    sandbox's denial, an escalated run is another route than the sandboxed one."""

    @property
    def failed(self) -> bool:
        """True when the tool reported an error or the command exited nonzero (as recorded)."""
        return bool(self.is_error) or (self.exit_code is not None and self.exit_code != 0)

    @property
    def outcome(self) -> CallOutcome:
        """What the call did (`failure_causes.call_outcome`): a rejected, cancelled or aborted call
        never ran, a search that found nothing answered, a filter's status hid a failure."""
        return call_outcome(
            self.command_text or "", exit_code=self.exit_code, is_error=self.is_error, output=self.output_excerpt or ""
        )

    @property
    def evidence_type(self) -> EvidenceType:
        """`prior_failure` when the call failed (`outcome == "failed"`), `file_history` for successful
        file tools, else `tool_outcome`."""
        command, output = self.command_text or "", self.output_excerpt or ""
        if call_failed(command, exit_code=self.exit_code, is_error=self.is_error, output=output):
            return "prior_failure"
        if (self.name or "").lower() in FILE_TOOL_NAMES:
            return "file_history"
        return "tool_outcome"


@dataclass(frozen=True, slots=True)
class SummaryRecord:
    """A title, compaction summary, away summary or session summary written by the agent."""

    session_id: str
    kind: SummaryKind
    text: str
    timestamp: str | None = None

    @property
    def evidence_type(self) -> EvidenceType:
        """Always `summary`."""
        return "summary"
