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

from obelisk_session_evidence.providers.redaction import secret_filters
from obelisk_session_evidence.providers.redaction.secret_patterns import load_patterns

MARKER: Final = "[REDACTED:{kind}]"
_PEM_END: Final = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_SECRET_NAME: Final = (
    r"[\w.-]*?(?:password|passwd|passphrase|_pwd|secret|token|credentials?"
    r"|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|auth[_-]?key|client[_-]?key"
    r"|signing[_-]?key|encryption[_-]?key|master[_-]?key)"
)
"""A key or variable named like a secret: the name must end with the secret word (`max_tokens`,
`TOKENIZERS_PARALLELISM`, `secret_key_base` and `PWD` are not secrets)."""
_VALUE: Final = r"""(?P<secret>"[^"\n]*"|'[^'\n]*'|[^\s"'`,;]+)"""
"""A value: quoted (quotes included), or one unquoted word up to a space, quote, comma or semicolon."""
_EXTRA_PATTERNS: Final[tuple[tuple[str, str, bool], ...]] = (
    # (kind, pattern, needs an assignment hint word). Each starts with a literal or a lookbehind
    # that lets it start only where a token starts, and masks the whole token body; a minimum of
    # 16 (not the full length) still masks a body an excerpt cut short.
    ("anthropic-key", r"sk-ant-[a-z]+\d{2}-[A-Za-z0-9_-]{40,}", False),
    ("openai-key", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}", False),
    ("github-token", r"(?<![A-Za-z0-9_])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{16,}", False),
    ("github-token", r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{16,}", False),
    (
        "gitlab-token",
        r"(?<![A-Za-z0-9_-])(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-[A-Za-z0-9_-]{16,}",
        False,
    ),
    ("slack-token", r"(?<![A-Za-z0-9_-])(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}", False),
    ("stripe-access-key", r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}", False),
    ("stripe-access-key", r"(?<![A-Za-z0-9_])whsec_[0-9A-Za-z]{16,}", False),
    ("google-api-key", r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])", False),
    ("private-key", r"BEGIN [A-Z0-9]+(?: [A-Z0-9]+){0,3} PRIVATE KEY", False),
    ("bearer-token", r"(?i)\bbearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)", False),
    (
        "authorization-header",
        r"(?i)(?<![\w-])(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<scheme>(?:basic|bearer|token|digest|negotiate|apikey|sso-key)[ \t]+)?"
        r"(?P<secret>[A-Za-z0-9._~+/=:-]{8,})",
        True,
    ),
    (
        "aws-secret-key",
        r"(?i)aws_?secret_?(?:access_?)?key[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        True,
    ),
    (
        "password-flag",
        r"(?i)(?<![\w-])--?(?:password|passwd|passphrase|pass|pw|secret|token|api-?key|access-?token|auth-?token"
        r"|client-?secret)(?:=|[ \t]+)" + _VALUE,
        True,
    ),
    (
        "url-credentials",
        r"(?<![\w-])(?:-u|--user)(?:=|[ \t]*)[^\s:'\"/]{1,256}:(?P<secret>[^\s'\"@]{1,256})(?![^\s'\"]{0,256}@)",
        False,
    ),
    (
        "secret-assignment",
        r"(?i)(?<![\w.-])(?P<quote>[\"']?)(?P<name>" + _SECRET_NAME + r")(?P=quote)"
        r"[ \t]*(?P<op>:=|=>|[:=])[ \t]*" + _VALUE,
        True,
    ),
)
"""Formats and shapes detect-secrets 1.5 lacks or masks only in part (its GitHub and GitLab
patterns report the prefix alone, and it knows no unquoted `--password=…`, `PGPASSWORD=…`, YAML
`api_token: …` or `Authorization: Basic …`). A pattern with a `secret` group masks only that group;
`_filtered_value` drops values that are code, placeholders or references, not secrets."""
_TOKEN_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ASSIGNMENT_HINT: Final = re.compile(r"key|pw|pass|token|secret|contrase|credential|auth", re.IGNORECASE)
"""Every assignment-style pattern (the keyword detector's, Cloudant, IBM, SoftLayer and AWS secret
keys, and the assignments, flags and headers above) needs one of these words, so those patterns
only run on lines that have one: they are the slow ones (the keyword patterns alone took 8 of 12
seconds on the real corpus)."""
HINT_LEAD: Final = 128
"""Characters before a hint word the assignment patterns see (a compared value: `"…" == password`)."""
HINT_TAIL: Final = 512
"""Characters after a hint word they see (the value; a longer one is masked up to here)."""
_ANCHORS: Final = {
    "json-web-token": re.compile("eyJ"),
    "npm-tokens": re.compile("_authToken"),
    "openai-token": re.compile("T3BlbkFJ"),
}
"""detect-secrets patterns that rescan a word from every start (quadratic on a long word of
repeats), run on windows around the literal each of their matches holds."""
_NOT_SECRETS: Final = frozenset(
    (  # noqa: SIM905 (one word list, not forty lines)
        "true false null none nil undefined yes no on off required optional str string int integer bool boolean"
        " bytes number any object secretstr text varchar uuid password secret token redacted hidden masked env"
        " async await function lambda def fn new self this"
    ).split()
)
"""Values that name a type, a flag state, a placeholder or code (`token: str`, `password: null`,
`getApiKey: async () => …`)."""
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_]\w*)*")
_PATH_START: Final = ("/", "./", "../", "~/")
_JWT_TAIL: Final = re.compile(r"[A-Za-z0-9_.+/=-]{0,8192}")
"""The rest of a JWT after the detector's lazy match, bounded (a token is far shorter)."""


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
    hinted = _hinted_windows(text) if _ASSIGNMENT_HINT.search(text) else []
    findings: list[Finding] = []
    checks = _checks()
    for check in (check for check in checks if not check.extra):
        findings.extend(_findings(check, text, hinted))
    for offset, line in hinted:
        findings.extend(_keyword_findings(line, offset))
    # The additions come last, so a span detect-secrets also found keeps its kind.
    for check in (check for check in checks if check.extra):
        findings.extend(_findings(check, text, hinted))
    return findings


def _findings(check: "_Check", text: str, hinted: list[tuple[int, str]]) -> Iterator[Finding]:
    """The check's findings: on the hinted windows, on windows around its anchor, or on the text."""
    if check.needs_hint:
        windows = hinted
    elif check.kind in _ANCHORS:
        windows = _windows(text, _ANCHORS[check.kind])
    elif check.pattern.search(text) is not None:
        windows = [(0, text)]
    else:
        return
    covered = 0
    for offset, window in windows:
        for found in _located(check, window, offset, text):
            if found.start >= covered or not check.is_jwt:  # a JWT is extended once, not from each dot
                covered = max(covered, found.end)
                yield found


@dataclass(frozen=True, slots=True)
class _Check:
    """One detector pattern, prepared once: what it reports and how its matches are finished."""

    kind: str
    pattern: re.Pattern[str]
    needs_hint: bool
    is_jwt: bool = False
    is_private_key: bool = False
    extra: bool = False
    """One of `_EXTRA_PATTERNS`: its `secret` group (or whole match) is masked, values filtered."""


@cache
def _checks() -> tuple[_Check, ...]:
    """Every pattern of the detect-secrets detectors we use, then the additions."""
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
    checks.extend(
        _Check(kind, re.compile(pattern), hinted, is_private_key=kind == "private-key", extra=True)
        for kind, pattern, hinted in _EXTRA_PATTERNS
    )
    return tuple(checks)


def _located(check: _Check, target: str, offset: int, text: str) -> Iterator[Finding]:
    """The check's findings in `target` (a line at `offset`, or the whole text at 0), finished."""
    spans = _extra_spans(check, target) if check.extra else _spans(check.pattern, target, check.kind)
    for found in spans:
        found = Finding(offset + found.start, offset + found.end, found.kind)
        if check.is_jwt:
            found = _whole_jwt(text, found)
            if not secret_filters.is_formally_valid_jwt(text[found.start : found.end]):
                continue
        if check.is_private_key:
            found = _whole_private_key(text, found)
        yield found


def _extra_spans(check: _Check, text: str) -> Iterator[Finding]:
    """An addition's spans: its `secret` group when it has one (values filtered), else the match,
    which must start a token (`task-output-…` holds `sk-` but is no key)."""
    grouped = "secret" in check.pattern.groupindex
    for match in check.pattern.finditer(text):
        if grouped:
            if not _filtered_value(check.kind, match):
                start, end = match.span("secret")
                quoted = _is_quoted(match["secret"])
                yield Finding(start + quoted, end - quoted, check.kind)  # a quoted value keeps its quotes
        elif match.start() == 0 or text[match.start() - 1] not in _TOKEN_CHARS:
            yield Finding(match.start(), match.end(), check.kind)


def _is_quoted(value: str) -> bool:
    return len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'"


def _filtered_value(kind: str, match: re.Match[str]) -> bool:
    """True when the matched value is no secret: empty, a marker, a placeholder or a reference,
    and, unquoted, code (`token=token.strip()`, `password: str`, `api_key=api_key`) or a path."""
    value = match["secret"]
    quoted = _is_quoted(value)
    inner = value[1:-1] if quoted else value
    if not inner.strip() or "REDACTED" in inner or "..." in inner or "…" in inner:
        return True
    if inner[0] in "$%<{" or secret_filters.is_not_alphanumeric_string(inner):
        return True  # `$TOKEN`, `%(password)s`, `<your key>`, `{{ secrets.X }}`, `****`
    if quoted:
        return secret_filters.is_sequential_string(inner) or secret_filters.is_potential_uuid(inner)
    if any(ch in inner for ch in "()[]{}<>") or inner.lower() in _NOT_SECRETS or inner.startswith(_PATH_START):
        return True
    if kind == "url-credentials":
        return inner.isdigit()  # `docker run -u 1000:1000` is a uid and gid
    identifier = _IDENTIFIER.fullmatch(inner) is not None
    if kind == "authorization-header":
        return identifier and not match["scheme"]  # `Authorization: auth_header` names a variable
    if kind != "secret-assignment":
        return False
    name = match["name"]
    if name.isupper() and match["op"] == "=":
        return False  # a shell or .env assignment (`PGPASSWORD=hunter`): any word is the value
    if inner.isdigit():
        return True  # a count or a port (`token: 12`)
    return identifier  # code or prose (`token=tok`, `{ _csrf_token: csrfToken }`, `Credentials: via`)


def _keyword_findings(line: str, offset: int) -> Iterator[Finding]:
    """The keyword detector's quoted assignments in any language, and unquoted `NAME=value`
    (shell and env files)."""
    for keyword in load_patterns().keywords:
        group = keyword.group
        for match in keyword.pattern.finditer(line):
            secret = match.group(group)
            if secret and not _filtered_keyword(secret, line, unquoted=keyword.unquoted):
                yield Finding(offset + match.start(group), offset + match.end(group), "secret-keyword")


def _hinted_windows(text: str) -> list[tuple[int, str]]:
    """Windows around the assignment hint words (`_windows`)."""
    return _windows(text, _ASSIGNMENT_HINT)


def _windows(text: str, anchor: re.Pattern[str]) -> list[tuple[int, str]]:
    """`(offset, window)` around each match of `anchor`, within its line and at most `HINT_LEAD`
    before and `HINT_TAIL` after it: the detect-secrets keyword patterns (and the JWT, npm and
    OpenAI ones, from each start in a word) rescan to the end of their line or word, so on a long
    line of hints they were quadratic; on bounded windows they are linear. A window starts again
    `HINT_LEAD` before the previous one ends, so a name near its end is seen again with its value."""
    windows: list[tuple[int, str]] = []
    position = 0
    while (match := anchor.search(text, position)) is not None:
        start = max(match.start() - HINT_LEAD, text.rfind("\n", max(0, match.start() - HINT_LEAD), match.start()) + 1)
        line_end = text.find("\n", match.end(), match.end() + HINT_TAIL)
        end = min(len(text), match.end() + HINT_TAIL) if line_end < 0 else line_end + 1
        windows.append((start, text[start:end]))
        position = end if end == len(text) or text[end - 1] == "\n" else end - HINT_LEAD
    return windows


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
    if "..." in secret or "…" in secret or "REDACTED" in secret:
        return True  # a documentation placeholder (`sk-ant-...`) or a redaction marker, not a value
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
