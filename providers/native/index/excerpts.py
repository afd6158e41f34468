"""Snippet windows: at most `max_chars` characters around the hit, redacted before they are cut.

Redaction runs on a region somewhat larger than the window, widened out to whitespace (so a
secret straddling the window's edge is still recognised whole, and detectors that need the
`password =` before a value see it), then the window is cut from the redacted region. A cut is marked
with `…` inside the budget. Tool calls keep the `contracts.snippets` layout (`$ command`, outcome
line, output excerpt) so comparators can read the command back; the window then moves over the
output only.
"""

import re
from collections.abc import Sequence
from typing import Final

from obelisk_session_evidence.contracts.snippets import ELLIPSIS, canonical_outcome_line, tool_snippet
from obelisk_session_evidence.providers.native.index.fts import token_words
from obelisk_session_evidence.providers.redaction.redaction import redact

REDACTION_MARGIN: Final = 128
"""Characters beyond each side of the window that redaction also sees."""
REGION_REACH: Final = 2048
"""How much further the region may grow to reach whitespace (tokens never contain any)."""
PEM_HINT: Final = "PRIVATE KEY"
_MARKER: Final = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
MIN_EXCERPT_CHARS: Final = 24
"""A shorter output excerpt than this is dropped rather than shown as a stub."""
LEAD_FRACTION: Final = 0.25
"""Where the hit sits in the window: a quarter of the way in, so what follows it is visible."""


def needles_for(terms: Sequence[str]) -> tuple[str, ...]:
    """What to look for when placing a window: whole terms, then words, then tokens, longest first."""
    found: dict[str, None] = {}
    for term in sorted(terms, key=len, reverse=True):
        found.setdefault(" ".join(term.split()).lower(), None)
    words = {word.lower() for term in terms for word in term.split()}
    tokens = {token for term in terms for token in token_words(term) if len(token) > 1}
    for candidate in sorted(words, key=lambda w: (-len(w), w)) + sorted(tokens, key=lambda t: (-len(t), t)):
        found.setdefault(candidate, None)
    return tuple(needle for needle in found if needle)


def hit_span(text: str, needles: Sequence[str]) -> tuple[int, int] | None:
    """The first occurrence of the most specific needle in `text` (case-insensitive)."""
    lowered = text.lower()
    if len(lowered) != len(text):
        lowered = "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)
    for needle in needles:
        position = lowered.find(needle)
        if position >= 0:
            return position, position + len(needle)
    return None


def text_snippet(text: str, needles: Sequence[str], max_chars: int) -> tuple[str, bool]:
    """A redacted window of `text` around the hit; the flag says whether anything was cut."""
    if max_chars <= 0:
        return "", bool(text)
    if PEM_HINT in text:
        # A key block can be far longer than any margin: redact it whole before choosing the window.
        text = redact(text)
    hit = hit_span(text, needles) or (0, 0)
    start, end = _bounds(len(text), hit, max_chars)
    region_start, region_end = _region(text, start, end)
    region = redact(text[region_start:region_end])
    local_hit = hit_span(region, needles) or (0, 0)
    return _window(region, local_hit, max_chars, cut_before=region_start > 0, cut_after=region_end < len(text))


def _bounds(length: int, hit: tuple[int, int], max_chars: int) -> tuple[int, int]:
    """The window `[start, end)` of at most `max_chars` that puts the hit a quarter of the way in."""
    lead = int(max_chars * LEAD_FRACTION)
    start = max(0, min(hit[0] - lead, length - max_chars))
    return start, min(length, start + max_chars)


def _region(text: str, start: int, end: int) -> tuple[int, int]:
    """The window widened by `REDACTION_MARGIN`, then out to whitespace: a token that straddles
    the window's edge is seen whole by the detectors (within `REGION_REACH`)."""
    region_start = max(0, start - REDACTION_MARGIN)
    region_end = min(len(text), end + REDACTION_MARGIN)
    floor = max(0, region_start - REGION_REACH)
    while region_start > floor and not text[region_start - 1].isspace():
        region_start -= 1
    ceiling = min(len(text), region_end + REGION_REACH)
    while region_end < ceiling and not text[region_end].isspace():
        region_end += 1
    return region_start, region_end


def _window(text: str, hit: tuple[int, int], max_chars: int, *, cut_before: bool, cut_after: bool) -> tuple[str, bool]:
    if len(text) <= max_chars and not (cut_before or cut_after):
        return text, False
    if len(text) <= max_chars - cut_before - cut_after:
        return ELLIPSIS * cut_before + text + ELLIPSIS * cut_after, True
    budget = max(1, max_chars - 2)  # room for a mark at each end
    lead = int(budget * LEAD_FRACTION)
    start = max(0, min(hit[0] - lead, len(text) - budget))
    end = min(len(text), start + budget)
    start, end = _outside_markers(text, start, end)
    head = ELLIPSIS if start > 0 or cut_before else ""
    tail = ELLIPSIS if end < len(text) or cut_after else ""
    window = text[start:end].strip()
    return (head + window + tail)[:max_chars], True


def _outside_markers(text: str, start: int, end: int) -> tuple[int, int]:
    """Move the window's edges off any redaction marker, so a marker is shown whole or not at all."""
    for marker in _MARKER.finditer(text, max(0, start - 64), min(len(text), end + 64)):
        if marker.start() < start < marker.end():
            shift = start - marker.start()
            start, end = marker.start(), max(marker.start(), end - shift)
        if marker.start() < end < marker.end():
            end = marker.start()
    return start, end


def call_snippet(command: str, outcome: str, output: str, needles: Sequence[str], max_chars: int) -> tuple[str, bool]:
    """A redacted tool snippet of at most `max_chars`: command first, then outcome, then an output window."""
    line = " ".join(redact(command).split())
    outcome_text = canonical_outcome_line(outcome)
    head_room = max_chars - len(outcome_text) - 3  # "$ ", "\n" before the outcome
    if head_room < 1:
        # No room for an outcome line: the cut command alone, which reads back as truncated.
        return (f"$ {line}"[: max(0, max_chars - 1)] + ELLIPSIS)[:max_chars], True
    cut = len(line) > head_room
    if cut:
        line = line[: head_room - 1] + ELLIPSIS
    room = max_chars - len(tool_snippet(line, outcome_text, "")) - 1
    excerpt = ""
    if output.strip() and room >= MIN_EXCERPT_CHARS:
        excerpt, excerpt_cut = text_snippet(output, needles, room)
        cut = cut or excerpt_cut
    elif output.strip():
        cut = True
    snippet = tool_snippet(line, outcome_text, excerpt)
    return snippet[:max_chars], cut or len(snippet) > max_chars
