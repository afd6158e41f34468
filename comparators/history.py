"""Retrieved evidence items read back as prior steps: what ran, how it ended, what it touched.

The result of a tool snippet comes from its outcome line (see `contracts.snippets`) and its
evidence type; a `prior_failure` item is a failure even when its outcome line was cut off.
Items that are not tool calls (decisions, summaries, failure prose) carry only text.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from comparators.commands import CommandShape, cd_roots, command_shapes
from comparators.paths import looks_like_path, repository_path
from contracts.base import EvidenceType
from contracts.evidence import EvidenceItem
from contracts.snippets import parse_tool_snippet

StepResult = Literal["failed", "succeeded", "unknown"]

EDIT_TOOLS: Final = frozenset(
    {"edit", "write", "multiedit", "notebookedit", "apply_patch", "writefile", "strreplacefile",
     "str_replace", "create", "replace", "insert"}
)  # fmt: skip
"""Lower-cased file tools that change the files they name."""
_SHELL_EDITS: Final = re.compile(
    r"^(?:sed -i|perl -i|patch|git apply|git checkout --|git restore|git stash pop|tee|cp|mv|"
    r"truncate|touch|rm)\b"
)


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
    """True when the step changed the files it names."""
    text: str
    """Prose to compare hypotheses and blockers with (for a tool call: its output excerpt)."""
    observed_at: datetime | None
    """When it happened, when known."""
    revision_ref: str | None
    """The revision it ran at, when known."""

    @property
    def is_tool_call(self) -> bool:
        """True when the step ran a command or file tool."""
        return bool(self.shapes)


def prior_steps(items: Iterable[EvidenceItem], *, roots: Iterable[str] = ()) -> tuple[PriorStep, ...]:
    """Every item as a `PriorStep`, in result order."""
    items = list(items)
    all_roots = (*roots, *_cd_roots_of(items))
    return tuple(_prior_step(index, item, all_roots) for index, item in enumerate(items))


def _cd_roots_of(items: list[EvidenceItem]) -> list[str]:
    roots: list[str] = []
    for item in items:
        snippet = parse_tool_snippet(item.snippet)
        if snippet is not None:
            roots.extend(cd_roots(snippet.command))
    return roots


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
        )
    words = snippet.command.split()
    tool = words[0].lower() if words else ""
    is_file_tool = (tool in EDIT_TOOLS or tool in {"read", "readfile", "view"}) and not any(
        word.startswith("-") or word in ("<", ">", "|", "&&") for word in words[1:]
    )
    if is_file_tool and len(words) > 1:
        files = tuple(repository_path(word, roots=roots) for word in words[1:])
        shapes: tuple[CommandShape, ...] = (
            CommandShape(program=tool, flags=(), targets=tuple(sorted(files))),
        )
    else:
        shapes = command_shapes(snippet.command, roots=roots)
        files = tuple(dict.fromkeys(path for shape in shapes for path in shape.paths))
    failed = snippet.failed
    if item.evidence_type == "prior_failure" or failed is True:
        result: StepResult = "failed"
    elif failed is False or item.evidence_type in ("tool_outcome", "file_history"):
        result = "succeeded"
    else:
        result = "unknown"
    is_edit = (tool in EDIT_TOOLS and result != "failed") or bool(
        _SHELL_EDITS.match(snippet.command) and result == "succeeded"
    )
    return PriorStep(
        index=index,
        evidence_type=item.evidence_type,
        shapes=shapes,
        result=result,
        files=files,
        is_edit=is_edit,
        text=snippet.output_excerpt,
        observed_at=item.observed_at,
        revision_ref=item.revision_ref,
    )


def _paths_in_text(text: str, roots: tuple[str, ...]) -> tuple[str, ...]:
    words = (word.strip("`'\"(),:;") for word in text.split())
    return tuple(
        dict.fromkeys(
            repository_path(word, roots=roots)
            for word in words
            if "/" in word and looks_like_path(word) and not word.startswith("<")
        )
    )
