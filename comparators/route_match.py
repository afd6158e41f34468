"""How closely a proposed route repeats the commands in retrieved history."""

from dataclasses import dataclass

from rapidfuzz import fuzz

from comparators.commands import normalise_command
from contracts.evidence import EvidenceItem
from contracts.snippets import command_of_snippet


@dataclass(frozen=True, slots=True)
class CommandMatch:
    """The best similarity (0–100) of the proposed commands to history, per outcome kind."""

    failure_similarity: int
    """Best similarity to a command that failed."""
    attempt_similarity: int
    """Best similarity to a command that ran without failing."""
    failure_matches: int
    """Failed historical commands at or above the threshold."""
    attempt_matches: int
    """Other historical commands at or above the threshold."""


def command_match(commands: list[str], items: list[EvidenceItem], *, threshold: int) -> CommandMatch:
    """Score each proposed command against each historical tool command (`fuzz.ratio`)."""
    proposed = [normalise_command(command) for command in commands]
    best = {"prior_failure": 0, "tool_outcome": 0}
    matches = {"prior_failure": 0, "tool_outcome": 0}
    for item in items:
        historical = command_of_snippet(item.snippet)
        if item.evidence_type not in best or historical is None or not proposed:
            continue
        normalised = normalise_command(historical)
        # ratio on whole normalised commands: short strings, cheap, and a changed flag or
        # target lowers it instead of hiding inside a partial match.
        score = max(round(fuzz.ratio(p, normalised, processor=None)) for p in proposed)
        best[item.evidence_type] = max(best[item.evidence_type], score)
        matches[item.evidence_type] += score >= threshold
    return CommandMatch(
        failure_similarity=best["prior_failure"],
        attempt_similarity=best["tool_outcome"],
        failure_matches=matches["prior_failure"],
        attempt_matches=matches["tool_outcome"],
    )
