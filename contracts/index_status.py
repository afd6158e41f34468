"""What `index refresh` and `index status` report about the native index: counts and codes only.

These read-backs are owner-local. They name the session roots the owner configured (folders, not
session content) and never carry a message, a command or a snippet.
"""

from typing import Annotated, Final, Literal

from pydantic import AwareDatetime, Field, StringConstraints

from obelisk_session_evidence.contracts.base import ContractModel, EvidenceType, Freshness
from obelisk_session_evidence.contracts.sources import SourceKind

Count = Annotated[int, Field(ge=0)]
IndexRevision = Annotated[str, StringConstraints(min_length=1, max_length=200)]
STATUS_TYPE_ORDER: Final[tuple[EvidenceType, ...]] = (
    "prior_failure",
    "tool_outcome",
    "file_history",
    "decision",
    "summary",
)
"""Failures first: what a reader of `index status` looks for."""
RootState = Literal["indexed", "missing", "unreadable"]
"""`missing`: the folder does not exist; `unreadable`: it exists but could not be listed (or is not
a folder). Either way the index is incomplete for it and keeps its rows: absence is never "no
history" (an unmounted home or a rename in progress looks like a deletion)."""


class IndexRootStatus(ContractModel):
    """One session root the index has read."""

    source: SourceKind
    """The agent whose sessions live under this root."""
    path: Annotated[str, StringConstraints(min_length=1, max_length=4096)]
    """The root folder, as given to the refresh."""
    state: RootState
    """How the last refresh found the folder."""
    files: Count
    """Session files (Kimi: session folders) indexed under it."""
    failed_files: Count
    """Files under it whose last parse failed."""
    refreshed_at: AwareDatetime | None
    """When a refresh last read it."""


class RefreshReport(ContractModel):
    """What one `refresh_index` call did: per-file work, rows written, and the resulting revision."""

    schema_version: Literal["obelisk_session_evidence_index_refresh_v0"] = "obelisk_session_evidence_index_refresh_v0"
    """This report's schema id."""
    roots: Count
    """Roots scanned."""
    unreadable_roots: Count
    """Roots that exist but could not be listed."""
    files_seen: Count
    """Session files (Kimi: session folders) found under the roots."""
    files_unchanged: Count
    """Files whose change signature matched the cursor: no bytes read."""
    files_added: Count
    """Files read for the first time."""
    files_appended: Count
    """Files that grew in place: only the new bytes were read."""
    files_reread: Count
    """Files shrunk, replaced or rewritten: re-read whole, their old rows replaced."""
    files_deleted: Count
    """Files gone from disk: their rows were removed."""
    files_failed: Count
    """Files that could not be read or parsed (their earlier rows are kept)."""
    bytes_read: Count
    """Bytes of session files read."""
    messages_written: Count
    """Message rows inserted or updated."""
    tool_calls_written: Count
    """Tool-call rows inserted or updated."""
    summaries_written: Count
    """Summary rows inserted or updated."""
    skipped_records: Count
    """Lines or records the parsers skipped in the bytes read."""
    parser_workers: Count = 0
    """Worker processes that parsed new files while the refresh wrote (0: every file parsed in process;
    only large builds on a machine with free cores use them)."""
    files_parsed_ahead: Count = 0
    """New files whose parse came from a worker; the others were parsed in process."""
    index_revision: IndexRevision
    """The index revision after the refresh."""
    content_changed: bool
    """True when the refresh changed indexed content (the revision moved)."""
    freshness: Freshness
    """`fresh`; `incomplete` when a root was missing or unreadable or a file failed; `stale` when a time
    budget stopped the refresh before every file was looked at (the next one carries on)."""
    seconds: Annotated[float, Field(ge=0)]
    """Wall time of the refresh."""


class IndexStatus(ContractModel):
    """`index status`: what the native index holds and how current it is."""

    schema_version: Literal["obelisk_session_evidence_index_status_v0"] = "obelisk_session_evidence_index_status_v0"
    """This report's schema id."""
    exists: bool
    """False when no index file exists yet (every count is then 0 and freshness `unknown`)."""
    files: Count
    """Session files (Kimi: session folders) indexed."""
    sessions: Count
    """Sessions (and sub-agent transcripts) indexed."""
    messages: Count
    """Message rows (the agent's and the user's own words; injected text is not indexed)."""
    tool_calls: Count
    """Tool-call rows."""
    summaries: Count
    """Title and summary rows."""
    failures: Count
    """Files whose last parse failed (files, not tool calls: see `failed_tool_calls`)."""
    failed_tool_calls: Count
    """Tool calls that reported an error or exited nonzero (the `prior_failure` evidence)."""
    evidence_type_counts: dict[EvidenceType, Count]
    """Indexed entries per evidence type, every type listed (0 when none), in `STATUS_TYPE_ORDER`."""
    skipped_records: Count
    """Lines or records the parsers skipped, over every indexed file."""
    skipped_by_reason: dict[Annotated[str, StringConstraints(max_length=40)], Count] = {}
    """Skipped records per reason (`invalid_json`, `unknown_type`, ...)."""
    freshness: Freshness
    """`fresh`, `stale` (files changed since the last refresh), `incomplete` or `unknown`."""
    index_revision: IndexRevision
    """Changes whenever the indexed content changes; `unknown` before the first refresh."""
    last_refresh_at: AwareDatetime | None
    """When the last refresh finished."""
    size_bytes: Count
    """Size on disk: the database with its WAL and shared-memory files."""
    roots: list[IndexRootStatus] = []
    """The roots the index has read."""
