"""What git says about the revisions prior calls ran at, against the situation's revision. Private.

A prior call carries the commit its session recorded (`PriorToolCall.revision_ref`: Codex records
one, Claude Code does not). For a live repository, `providers.git_revisions` asks git whether each
such commit is an ancestor of the situation's `revision.current` (or of its `merge_base`), and
which paths the commits after it changed; compare-route reads the answer (docs/revisions.md).
Revisions and paths are private like the calls: the receipt counts calls per relation, nothing else.
"""

from typing import Annotated, Final, Literal, Self

from pydantic import AwareDatetime, Field, StringConstraints, model_validator

from obelisk_session_evidence.contracts.base import ContractModel

MAX_REVISION_COMMITS: Final = 256
"""Most commits listed per checked revision (the newest: those most likely after a failure)."""
MAX_COMMIT_PATHS: Final = 256
"""Most paths listed per commit."""
MAX_REVISION_PATH_CHARS: Final = 1024

RevisionRelation = Literal["ancestor", "not_ancestor", "unknown"]
"""A recorded revision against the situation's: on its line (an ancestor of `current` or of
`merge_base`), on neither (another branch, rewritten history), or not known."""
UncheckedReason = Literal[
    "no_situation_revision",
    "invalid_revision",
    "no_live_repository",
    "unknown_commit",
    "timeout",
    "git_unavailable",
    "git_failed",
    "too_many_revisions",
]
"""Why a relation is `unknown`: the situation names no revision; the recorded one is not a commit
id; no repository root is a git work tree here; git knows neither commit in any root; git ran out
of time, could not be started, or failed otherwise; past the bound of revisions checked."""


class RevisionCommit(ContractModel):
    """One commit on the line from a checked revision to the situation's. Private."""

    committed_at: AwareDatetime
    """When it was committed (landed on that line)."""
    paths: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=MAX_REVISION_PATH_CHARS)]],
        Field(max_length=MAX_COMMIT_PATHS),
    ] = []
    """Repository paths it changed against its first parent."""
    paths_truncated: bool = False
    """True when it changed more paths than listed (or one too long to keep)."""


class RevisionCheck(ContractModel):
    """One recorded revision, as git places it. Private."""

    revision: Annotated[str, StringConstraints(min_length=1, max_length=80)]
    """The revision as the prior calls recorded it (`PriorToolCall.revision_ref`)."""
    relation: RevisionRelation
    """Where it lies against the situation's revision."""
    unchecked_reason: UncheckedReason | None = None
    """Why the relation is `unknown`; None otherwise."""
    commits: Annotated[list[RevisionCommit], Field(max_length=MAX_REVISION_COMMITS)] = []
    """For an ancestor: the commits after it up to the situation's revision (first-parent line,
    newest first); empty otherwise."""
    commits_truncated: bool = False
    """True when older commits than those listed exist on that line (or their list was cut)."""

    @model_validator(mode="after")
    def _reason_iff_unknown(self) -> Self:
        if (self.relation == "unknown") != (self.unchecked_reason is not None):
            raise ValueError("an unknown relation, and only it, names why")
        if self.relation != "ancestor" and (self.commits or self.commits_truncated):
            raise ValueError("only an ancestor lists the commits after it")
        return self
