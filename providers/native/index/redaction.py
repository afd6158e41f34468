"""Secret redaction for every snippet that leaves the provider, built on detect-secrets 1.5.

The detectors are detect-secrets' own, run on whole snippets (its ad-hoc `scan_line` was not
usable: in eager mode it reports every word as a high-entropy candidate, and it ran at about
23 KB/s on the real corpus):

- every regex detector it ships (AWS, Azure, GitHub, GitLab, JWT (formally valid only), OpenAI,
  Slack, Stripe, Twilio, private keys, passwords in URLs, npm, PyPI, SendGrid, ...), except the
  public-IP one, which is not a secret;
- its keyword detector (`password = "…"`, `api_key: …`), with its heuristic filters for templated
  values, `$VARIABLES`, uuids, sequences and non-alphanumeric values.

Its high-entropy detectors are not used: transcripts are full of commit hashes, uuids and base64
that they flag. A few narrow, documented formats detect-secrets lacks are added (Anthropic keys,
OpenAI project/service keys without the legacy marker, GitHub fine-grained tokens, Google API
keys, bearer tokens). A private-key header masks through its END line. Each finding becomes
`[REDACTED:<kind>]`; the surrounding text stays so the snippet remains readable.

detect-secrets stays the source of every pattern, but is not imported here: its patterns come
from the file `secret_patterns` exports from it, and its filters are restated in `secret_filters`
(importing it costs a cold process about 45 ms, most of it `requests`).
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Final

from obelisk_session_evidence.providers.native.index import secret_filters
from obelisk_session_evidence.providers.native.index.secret_patterns import load_patterns

MARKER: Final = "[REDACTED:{kind}]"
_PEM_END: Final = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_EXTRA_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("anthropic-key", re.compile(r"sk-ant-[a-z]+\d{2}-[A-Za-z0-9_-]{40,}")),
    ("openai-key", re.compile(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}")),
    ("github-token", re.compile(r"github_pat_[A-Za-z0-9_]{40,}")),
    ("google-api-key", re.compile(r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])")),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)")),
)
"""Formats detect-secrets 1.5 does not know. A match must also start a token (`_starts_token`), so
that an id containing the prefix (`task-output-…` contains `sk-`) cannot match; the patterns
start with their literal prefix, which keeps them fast."""
_TOKEN_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ASSIGNMENT_HINT: Final = re.compile(r"key|pw|pass|token|secret|contrase", re.IGNORECASE)
"""Every assignment-style pattern (the keyword detector's, and Cloudant, IBM, SoftLayer and AWS
secret keys) needs one of these words, so those patterns only run on lines that have one: they
are the slow ones (the keyword patterns alone took 8 of 12 seconds on the real corpus)."""
_JWT_TAIL: Final = re.compile(r"[A-Za-z0-9_.+/=-]*")


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret's span in the text and the kind it is reported as."""

    start: int
    end: int
    kind: str


def redact(text: str) -> str:
    """`text` with every detected secret replaced by `[REDACTED:<kind>]`."""
    findings = _merged(find_secrets(text))
    if not findings:
        return text
    parts, cursor = [], 0
    for finding in findings:
        parts.append(text[cursor : finding.start])
        parts.append(MARKER.format(kind=finding.kind))
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts)


def find_secrets(text: str) -> list[Finding]:
    """Every secret the detectors find in `text` (spans may overlap)."""
    hinted = _hinted_lines(text) if _ASSIGNMENT_HINT.search(text) else []
    findings: list[Finding] = []
    for check in _checks():
        if check.needs_hint:
            for offset, line in hinted:
                findings.extend(_located(check, line, offset, text))
        elif check.pattern.search(text) is not None:
            findings.extend(_located(check, text, 0, text))
    for offset, line in hinted:
        findings.extend(_keyword_findings(line, offset))
    return findings


@dataclass(frozen=True, slots=True)
class _Check:
    """One detector pattern, prepared once: what it reports and how its matches are finished."""

    kind: str
    pattern: re.Pattern[str]
    needs_hint: bool
    is_jwt: bool = False
    is_private_key: bool = False
    whole_token: bool = False


@cache
def _checks() -> tuple[_Check, ...]:
    """Every pattern of the detect-secrets detectors we use, then the narrow additions."""
    checks = [
        _Check(
            detector.kind,
            detector.pattern,
            _needs_hint(detector.pattern),
            is_jwt=detector.is_jwt,
            is_private_key=detector.is_private_key,
        )
        for detector in load_patterns().detectors
    ]
    checks.extend(_Check(kind, pattern, needs_hint=False, whole_token=True) for kind, pattern in _EXTRA_PATTERNS)
    return tuple(checks)


def _located(check: _Check, target: str, offset: int, text: str) -> Iterator[Finding]:
    """The check's findings in `target` (a line at `offset`, or the whole text at 0), finished."""
    for found in _spans(check.pattern, target, check.kind):
        found = Finding(offset + found.start, offset + found.end, found.kind)
        if check.whole_token and found.start > 0 and text[found.start - 1] in _TOKEN_CHARS and not check.pattern.groups:
            continue
        if check.is_jwt:
            found = _whole_jwt(text, found)
            if not secret_filters.is_formally_valid_jwt(text[found.start : found.end]):
                continue
        if check.is_private_key:
            found = _whole_private_key(text, found)
        yield found


def _keyword_findings(line: str, offset: int) -> Iterator[Finding]:
    """The keyword detector's quoted assignments in any language, and unquoted `NAME=value`
    (shell and env files)."""
    for keyword in load_patterns().keywords:
        group = keyword.group
        for match in keyword.pattern.finditer(line):
            secret = match.group(group)
            if secret and not _filtered_keyword(secret, line, unquoted=keyword.unquoted):
                yield Finding(offset + match.start(group), offset + match.end(group), "secret-keyword")


def _hinted_lines(text: str) -> list[tuple[int, str]]:
    """`(offset, line)` for each line holding an assignment hint word, found from the hints."""
    hinted: dict[int, str] = {}
    position = 0
    while (match := _ASSIGNMENT_HINT.search(text, position)) is not None:
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        end = len(text) if end < 0 else end + 1
        hinted.setdefault(start, text[start:end])
        position = end
    return list(hinted.items())


@cache
def _needs_hint(pattern: re.Pattern[str]) -> bool:
    """True for detect-secrets' assignment-style patterns (`<name>key = value`)."""
    return pattern.pattern.startswith("(?:(?<=\\W)|(?<=^))") or pattern.pattern.startswith("aws.")


def _filtered_keyword(secret: str, line: str, *, unquoted: bool) -> bool:
    """detect-secrets' heuristic filters: values that only look like secrets.

    An unquoted value must also be one token (`apiKey = await getKey(model)` is code), and a value
    with an ellipsis is a documentation placeholder (`export ANTHROPIC_API_KEY=sk-ant-...`).
    """
    if unquoted and (any(ch.isspace() for ch in secret.strip()) or "(" in secret):
        return True
    if "..." in secret or "…" in secret:
        return True  # a documentation placeholder (`sk-ant-...`), not a value
    return (
        secret_filters.is_templated_secret(secret)
        or secret_filters.is_prefixed_with_dollar_sign(secret)
        or secret_filters.is_not_alphanumeric_string(secret)
        or secret_filters.is_sequential_string(secret)
        or secret_filters.is_potential_uuid(secret)
        or secret_filters.is_indirect_reference(line)
    )


def _spans(pattern: re.Pattern[str], text: str, kind: str) -> Iterator[Finding]:
    """Spans of the secret in each match: the first non-empty group when the pattern has groups."""
    for match in pattern.finditer(text):
        group = next((i for i in range(1, (pattern.groups or 0) + 1) if match.group(i)), 0)
        if match.end(group) > match.start(group):
            yield Finding(match.start(group), match.end(group), kind)


def _whole_jwt(text: str, found: Finding) -> Finding:
    """The detector's lazy pattern stops before the signature: take the rest of the token too."""
    tail = _JWT_TAIL.match(text, found.end)
    return Finding(found.start, tail.end() if tail else found.end, found.kind)


def _whole_private_key(text: str, header: Finding) -> Finding:
    """From the `BEGIN … PRIVATE KEY` header through its END line (or the end of the text)."""
    line_start = text.rfind("\n", 0, header.start) + 1
    end = _PEM_END.search(text, header.end)
    return Finding(line_start, end.end() if end else len(text), header.kind)


def _merged(findings: list[Finding]) -> list[Finding]:
    """Overlapping or touching spans joined (the first kind wins), in text order."""
    merged: list[Finding] = []
    for finding in sorted(findings, key=lambda f: (f.start, -f.end)):
        if merged and finding.start <= merged[-1].end:
            last = merged[-1]
            merged[-1] = Finding(last.start, max(last.end, finding.end), last.kind)
        else:
            merged.append(finding)
    return merged
