"""detect-secrets 1.5's heuristic filters for keyword findings and its JWT check, restated.

Its modules cannot be imported without `requests` (`detect_secrets.plugins.base` imports it), so
these few functions are restated from `detect_secrets/filters/heuristic.py` and
`detect_secrets/plugins/jwt.py` (Apache-2.0), with their regexes read from the exported pattern
file. `tests/providers/redaction/test_secret_patterns.py` checks each against detect-secrets'
own on generated and real inputs.
"""

import base64
import json
import string
from typing import Final

from obelisk_session_evidence.providers.redaction.secret_patterns import load_patterns

_SEQUENCES: Final = (
    string.ascii_uppercase + string.ascii_uppercase + string.digits + "+/",
    string.digits + string.ascii_uppercase + string.ascii_uppercase + "+/",
    (string.digits + string.ascii_uppercase) * 2,
    string.digits * 2,
    string.hexdigits.upper() + string.hexdigits.upper(),
    string.ascii_uppercase + "=/",
)
"""Base64 alphabets (letters or digits first), alphanumerics, digits and hex, each doubled so a
run that wraps around is still inside one."""
_LETTERS: Final = frozenset(string.ascii_letters)
_JWT_PADDING: Final = {0: b"", 2: b"==", 3: b"==="}
"""detect-secrets' padding per remainder (three `=` for 3: decoding ignores the extra one)."""
MAX_INDIRECT_LINE: Final = 1000
"""detect-secrets skips longer lines: its indirect-reference regex backtracks badly on them."""


def is_sequential_string(secret: str) -> bool:
    """`abcdef`, `123456`, `ABCDEF0123`: a run out of a known alphabet."""
    upper = secret.upper()
    return any(upper in sequence for sequence in _SEQUENCES)


def is_potential_uuid(secret: str) -> bool:
    return load_patterns().uuid.search(secret) is not None


def is_templated_secret(secret: str) -> bool:
    """`{secret}`, `<secret>`, `${secret}`; also `` and `$` (detect-secrets' IndexError case)."""
    if not secret or secret == "$":
        return True
    return (
        (secret[0] == "{" and secret[-1] == "}")
        or (secret[0] == "<" and secret[-1] == ">")
        or (secret[0] == "$" and secret[1] == "{" and secret[-1] == "}")
    )


def is_prefixed_with_dollar_sign(secret: str) -> bool:
    return secret.startswith("$")


def is_not_alphanumeric_string(secret: str) -> bool:
    """No ASCII letter at all (`*****`)."""
    return not _LETTERS.intersection(secret)


def is_indirect_reference(line: str) -> bool:
    """`secret = get_secret_key()`, `secret = request.headers['apikey']`."""
    if len(line) > MAX_INDIRECT_LINE:
        return False
    return load_patterns().indirect_reference.search(line) is not None


def is_formally_valid_jwt(token: str) -> bool:
    """Every dot-separated part is base64url; the first two decode to JSON."""
    for index, part_text in enumerate(token.split(".")):
        try:
            part = part_text.encode("ascii")
            remainder = len(part) % 4
            if remainder == 1:
                return False
            part += _JWT_PADDING[remainder]
            decoded = base64.urlsafe_b64decode(part)
            if index < 2:
                json.loads(decoded.decode("utf-8"))
        except (TypeError, ValueError):  # binascii, JSON and Unicode errors are ValueErrors
            return False
    return True
