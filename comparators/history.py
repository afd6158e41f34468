"""Prior tool calls and retrieved evidence read back as prior steps: what ran, how it ended.

The provider's structured prior calls (`contracts.prior_calls.PriorToolCall`) are read first:
the full command, its exit code, where it ran and its output. Without them (a provider that
gives none) the capped tool snippets are read instead: the result comes from the outcome line
(see `contracts.snippets`) and the evidence type; a `prior_failure` item is a failure even when
its outcome line was cut off. Either way the outcome is attributed to one simple command
(`comparators.attribution`). Items that are not tool calls (decisions, summaries, failure
prose) carry only text.
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final, Literal

from obelisk_session_evidence.comparators.attribution import attribute
from obelisk_session_evidence.comparators.changes import TREE_CHANGERS, changed_paths, reformats
from obelisk_session_evidence.comparators.commands import CommandShape, ParsedCommand, cd_roots, parse_command
from obelisk_session_evidence.comparators.paths import (
    mask_temp_paths,
    names_file,
    repository_path,
    without_position,
)
from obelisk_session_evidence.contracts.base import EvidenceType
from obelisk_session_evidence.contracts.evidence import EvidenceItem
from obelisk_session_evidence.contracts.prior_calls import SHELL_TOOL_NAMES, FailureCause, PriorToolCall
from obelisk_session_evidence.contracts.snippets import parse_tool_snippet

StepResult = Literal["failed", "succeeded", "unknown"]

EDIT_TOOLS: Final = frozenset(
    {
        "edit",
        "write",
        "multiedit",
        "notebookedit",
        "apply_patch",
        "writefile",
        "strreplacefile",
        "str_replace",
        "create",
        "replace",
        "insert",
    }
)
"""Lower-cased file tools that change the files they name."""
FILE_READ_TOOLS: Final = frozenset({"read", "readfile", "view"})
NEVER_RAN: Final = re.compile(r"\A\s*(?:<tool_use_error>)?Sibling tool call errored")
"""Claude Code's result for a parallel call it cancelled because a sibling call failed: it never ran."""


@dataclass(frozen=True, slots=True)
class PriorStep:
    """One retrieved item, read back for comparison."""

    index: int
    """Position in the capped result (its rank)."""
    evidence_type: EvidenceType
    """The item's evidence type."""
    shapes: tuple[CommandShape, ...]
    """The simple commands it ran, canonical; empty when it is not a tool call."""
    result: StepResult
    """How the call ended; `unknown` for prose."""
    files: tuple[str, ...]
    """Repository paths it named or touched."""
    is_edit: bool
    """True when the step changed files (`changed`, or files it does not name when empty)."""
    text: str
    """Prose to compare hypotheses and blockers with (for a tool call: its output excerpt)."""
    observed_at: datetime | None
    """When it happened, when known."""
    revision_ref: str | None
    """The revision it ran at, when known."""
    failing: int | None = None
    """Index in `shapes` of the simple command that failed; None unless it failed."""
    skipped: frozenset[int] = frozenset()
    """Shapes that never ran (after the failing one, joined by `&&`)."""
    not_found: bool = False
    """True when the failing program was not found (exit 127, `command not found`)."""
    culprits: tuple[str, ...] = ()
    """Arguments its failure names (an ignored path, an unknown flag)."""
    masked: bool = False
    """True when its exit code hid the failure and the output showed it."""
    fallback: bool = False
    """True when the shell grammar could not read its command (token comparison)."""
    truncated: bool = False
    """True when its command was compared in part (cut by the provider or the work bounds)."""
    changed: tuple[str, ...] = ()
    """Repository paths it changed, when it is an edit and they are known (`comparators.changes`)."""
    output_paths: tuple[str, ...] = ()
    """Repository paths its output names (the file a failure points at)."""
    checkout: str | None = None
    """The checkout (repository root or worktree) it ran in, when known: a change made in one
    worktree does not change what a command sees in another."""
    cause: FailureCause | None = None
    """Why it failed, when it failed and the provider typed it."""
    escalated: bool | None = None
    """It ran outside the agent's sandbox (a prior call says; None for a step read from a snippet)."""
    installs: bool = False
    """It installed or synced dependencies."""
    reformats: bool = False
    """Every file change it made was a formatter's or fixer's (`changes.reformats`)."""
    failed_in_view: bool = False
    """The failing shape's output filter failed, not the shape (`attribution.Attribution.in_view`)."""
    ref: str | None = None
    """The opaque ref of the item or call it reads (`message:<hex>`), when the provider gave one:
    how the private result names it."""

    @property
    def is_tool_call(self) -> bool:
        """True when the step ran a command or file tool."""
        return bool(self.shapes)


def prior_steps(items: Iterable[EvidenceItem], *, roots: Iterable[str] = ()) -> tuple[PriorStep, ...]:
    """Every item as a `PriorStep`, in result order (the snippet reading)."""
    items = list(items)
    all_roots = (*roots, *_cd_roots_of(items))
    return tuple(replace(_prior_step(index, item, all_roots), ref=item.message_ref) for index, item in enumerate(items))


def prior_steps_from_calls(
    calls: Sequence[PriorToolCall], items: Iterable[EvidenceItem], *, roots: Iterable[str] = ()
) -> tuple[PriorStep, ...]:
    """The structured calls as steps (ranks 0..n-1), then the items that are not tool calls."""
    call_roots = (*roots, *call_repository_roots(calls))
    steps = [_call_step(index, call, call_roots) for index, call in enumerate(calls)]
    prose = [item for item in items if parse_tool_snippet(item.snippet) is None]
    steps.extend(_prior_step(len(steps) + offset, item, call_roots) for offset, item in enumerate(prose))
    return tuple(steps)


def call_repository_roots(calls: Iterable[PriorToolCall]) -> tuple[str, ...]:
    """The checkout folders the calls ran in: `cwd` without its `repository_cwd` tail."""
    return tuple(dict.fromkeys(root for call in calls if (root := _checkout(call)) is not None))


def _checkout(call: PriorToolCall) -> str | None:
    """The checkout folder the call ran in; None when it ran outside the repository or is unknown."""
    if call.cwd is None or call.repository_cwd is None or not call.cwd.startswith("/"):
        return None
    cwd = call.cwd.rstrip("/") or "/"
    tail = call.repository_cwd.strip("/")
    if not tail:
        return cwd
    return (cwd[: -len(tail) - 1] or "/") if cwd.endswith("/" + tail) else None


def _start_cwd(call: PriorToolCall) -> str | None:
    """Where the call started, relative to the repository; absolute outside it; None unknown."""
    if call.repository_cwd is not None:
        return call.repository_cwd.strip("/")
    if call.cwd is not None and call.cwd.startswith("/"):
        return mask_temp_paths(call.cwd.rstrip("/") or "/")
    return None


def _call_step(index: int, call: PriorToolCall, roots: tuple[str, ...]) -> PriorStep:
    tool = call.tool_name.lower()
    files = tuple(repository_path(path, roots=roots) for path in call.files)
    recorded = _recorded(call)
    if _is_file_tool(tool, call.command.split()):
        if not files and call.command.strip():
            files = (repository_path(call.command, roots=roots),)  # a file tool's command is its target
        shape = CommandShape(program=tool, flags=(), targets=tuple(sorted(files)))
        parsed = ParsedCommand((shape,), fallback=False, truncated=False)
    else:
        parsed = parse_command(call.command, roots=roots, cwd=_start_cwd(call))
        if tool not in SHELL_TOOL_NAMES:  # a non-shell tool's input is not a script the grammar missed
            parsed = replace(parsed, fallback=False)
        files = tuple(dict.fromkeys((*files, *(path for shape in parsed.shapes for path in shape.paths))))
    step = _step(
        index=index,
        evidence_type="prior_failure" if recorded else ("file_history" if tool in EDIT_TOOLS else "tool_outcome"),
        parsed=parsed,
        recorded=recorded,
        exit_code=call.exit_code,
        output=call.output_excerpt,
        tool=tool,
        files=files,
        observed_at=call.observed_at,
        revision_ref=call.revision_ref,
        truncated=call.command_truncated,
        roots=roots,
        never_ran=call.outcome == "not_run",
        outcome_known=call.outcome is not None,
        ref=call.message_ref,
    )
    cause = call.cause if step.result == "failed" else None
    return replace(step, checkout=_checkout(call), cause=cause, escalated=call.escalated)


def _recorded(call: PriorToolCall) -> bool | None:
    """Whether the call failed, as the provider's outcome says (a search with no match did not,
    a pipeline whose filter hid a failure did); None when unknown or it never ran."""
    if call.outcome is not None:
        return {"failed": True, "succeeded": False, "no_match": False}.get(call.outcome)
    if call.is_error is None and call.exit_code is None:
        return None
    return bool(call.is_error) or (call.exit_code is not None and call.exit_code != 0)


def _cd_roots_of(items: list[EvidenceItem]) -> list[str]:
    roots: list[str] = []
    for item in items:
        snippet = parse_tool_snippet(item.snippet)
        if snippet is not None:
            roots.extend(cd_roots(snippet.command))
    return roots


def _is_file_tool(tool: str, words: list[str]) -> bool:
    return (tool in EDIT_TOOLS or tool in FILE_READ_TOOLS) and not any(
        word.startswith("-") or word in ("<", ">", "|", "&&") for word in words[1:]
    )


def _prior_step(index: int, item: EvidenceItem, roots: tuple[str, ...]) -> PriorStep:
    snippet = parse_tool_snippet(item.snippet)
    if snippet is None:
        return PriorStep(
            index=index,
            evidence_type=item.evidence_type,
            shapes=(),
            result="failed" if item.evidence_type == "prior_failure" else "unknown",
            files=_paths_in_text(item.snippet.split("\n", 1)[0], roots),
            is_edit=False,
            text=item.snippet,
            observed_at=item.observed_at,
            revision_ref=item.revision_ref,
            ref=item.message_ref,
        )
    words = snippet.command.split()
    tool = words[0].lower() if words else ""
    if _is_file_tool(tool, words) and len(words) > 1:
        files = tuple(repository_path(word, roots=roots) for word in words[1:])
        parsed = ParsedCommand(
            (CommandShape(program=tool, flags=(), targets=tuple(sorted(files))),), fallback=False, truncated=False
        )
    else:
        parsed = parse_command(snippet.command, roots=roots)
        files = tuple(dict.fromkeys(path for shape in parsed.shapes for path in shape.paths))
    recorded = True if item.evidence_type == "prior_failure" else snippet.failed
    if recorded is None and item.evidence_type in ("tool_outcome", "file_history"):
        recorded = False
    return _step(
        index=index,
        evidence_type=item.evidence_type,
        parsed=parsed,
        recorded=recorded,
        exit_code=snippet.exit_code,
        output=snippet.output_excerpt,
        tool=tool,
        files=files,
        observed_at=item.observed_at,
        revision_ref=item.revision_ref,
        truncated=snippet.command_truncated,
        roots=roots,
        ref=item.message_ref,
    )


def _step(
    *,
    index: int,
    evidence_type: EvidenceType,
    parsed: ParsedCommand,
    recorded: bool | None,
    exit_code: int | None,
    output: str,
    tool: str,
    files: tuple[str, ...],
    observed_at: datetime | None,
    revision_ref: str | None,
    truncated: bool,
    roots: tuple[str, ...],
    never_ran: bool = False,
    outcome_known: bool = False,
    ref: str | None = None,
) -> PriorStep:
    """A tool-call step: its outcome attributed to the simple command that failed."""
    if never_ran or NEVER_RAN.match(output):
        # The agent cancelled it before it started: no outcome, and nothing of it to repeat.
        return PriorStep(
            index=index,
            evidence_type=evidence_type,
            shapes=parsed.shapes,
            result="unknown",
            files=files,
            is_edit=False,
            text="",
            observed_at=observed_at,
            revision_ref=revision_ref,
            skipped=frozenset(range(len(parsed.shapes))),
            fallback=parsed.fallback,
            truncated=truncated or parsed.truncated,
            ref=ref,
        )
    attribution = attribute(
        parsed.shapes,
        output,
        failed=recorded,
        exit_code=exit_code,
        outcome_known=outcome_known,
        errexit=parsed.errexit,
    )
    if attribution.failed:
        result: StepResult = "failed"
    elif recorded is False:
        result = "succeeded"
    else:
        result = "unknown"
    ran = [shape for index, shape in enumerate(parsed.shapes) if index not in attribution.skipped]
    writes = _writes(ran, result)
    changed = _changed_by(writes)
    is_edit = (tool in EDIT_TOOLS and result != "failed") or changed is not None
    if tool in EDIT_TOOLS:
        changed = files
    return PriorStep(
        index=index,
        evidence_type=evidence_type,
        shapes=parsed.shapes,
        result=result,
        files=files,
        is_edit=is_edit,
        text=output,
        observed_at=observed_at,
        revision_ref=revision_ref,
        failing=attribution.failing,
        skipped=attribution.skipped,
        not_found=attribution.not_found,
        culprits=attribution.culprits,
        masked=attribution.masked,
        failed_in_view=attribution.in_view,
        fallback=parsed.fallback,
        truncated=truncated or parsed.truncated,
        changed=changed or (),
        output_paths=_paths_in_text(output, roots) if result == "failed" else (),
        installs=result == "succeeded" and any(_installs(shape) for shape in parsed.shapes),
        reformats=tool not in EDIT_TOOLS and bool(writes) and all(reformats(shape) for shape, _ in writes),
        ref=ref,
    )


def _installs(shape: CommandShape) -> bool:
    return shape.program in TREE_CHANGERS or shape.program.startswith(("mix deps.", "brew install", "apt"))


def _writes(shapes: Sequence[CommandShape], result: StepResult) -> list[tuple[CommandShape, tuple[str, ...]]]:
    """The simple commands of a call that ran and changed files, each with the paths it changed
    (`changes.changed_paths`; `()`: files it does not name).

    A call that failed is an aborted attempt: what its earlier segments did (`git add -A` before a
    rejected commit) is what the next attempt does again, so it counts as no change, except a
    formatter's or fixer's rewrite, which stays when it reports what it could not fix. A call whose
    outcome is unknown (`fix | tail`) ran: its changes count."""
    writes = [(shape, paths) for shape in shapes if (paths := changed_paths(shape)) is not None]
    if result == "failed":
        return [(shape, paths) for shape, paths in writes if reformats(shape)]
    return writes


def _changed_by(writes: Sequence[tuple[CommandShape, tuple[str, ...]]]) -> tuple[str, ...] | None:
    """The paths `writes` changed (`()`: unnamed files); None when there are none."""
    if not writes:
        return None
    if any(not paths for _, paths in writes):
        return ()
    return tuple(dict.fromkeys(path for _, paths in writes for path in paths))


def _paths_in_text(text: str, roots: tuple[str, ...]) -> tuple[str, ...]:
    """The files an output names, without the line and column it points at."""
    words = (without_position(word.strip("`'\"(),:;[]")) for word in text.split())
    named = (word for word in words if "/" in word and names_file(word))
    return tuple(dict.fromkeys(repository_path(word, roots=roots) for word in named))
