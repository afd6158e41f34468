"""detect-secrets' detector patterns, exported once into a file this project owns.

Redaction needs detect-secrets' regular expressions, not detect-secrets itself: importing it costs
a cold process about 45 ms, most of it `requests` (its plugins can verify secrets online). So
`build_patterns()` reads every pattern from detect-secrets (the source of truth) into
`secret_patterns.json`, and `load_patterns()` compiles that file (about 6 ms). Regenerate it after
upgrading detect-secrets:

    .venv/bin/python -m providers.redaction.secret_patterns

`tests/providers/redaction/test_secret_patterns.py` builds the file fresh and compares.
"""

import json
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

PATTERNS_FILE: Final = Path(__file__).with_name("secret_patterns.json")
EXCLUDED_DETECTORS: Final = frozenset({"IPPublicDetector"})
"""A public IP address is not a secret."""


@dataclass(frozen=True, slots=True)
class DetectorPattern:
    """One pattern of a detect-secrets regex detector, and what reports it."""

    kind: str
    pattern: re.Pattern[str]
    is_jwt: bool
    is_private_key: bool


@dataclass(frozen=True, slots=True)
class KeywordPattern:
    """One of the keyword detector's assignment patterns and the group holding the value."""

    pattern: re.Pattern[str]
    group: int
    unquoted: bool


@dataclass(frozen=True, slots=True)
class SecretPatterns:
    """Everything redaction reads from detect-secrets, compiled."""

    detectors: tuple[DetectorPattern, ...]
    keywords: tuple[KeywordPattern, ...]
    uuid: re.Pattern[str]
    indirect_reference: re.Pattern[str]


@cache
def load_patterns() -> SecretPatterns:
    """The exported patterns, compiled once per process."""
    data = json.loads(PATTERNS_FILE.read_text(encoding="utf-8"))
    return SecretPatterns(
        detectors=tuple(
            DetectorPattern(d["kind"], _compiled(d["regex"]), d["is_jwt"], d["is_private_key"])
            for d in data["detectors"]
        ),
        keywords=tuple(KeywordPattern(_compiled(k["regex"]), k["group"], k["unquoted"]) for k in data["keywords"]),
        uuid=_compiled(data["heuristics"]["uuid"]),
        indirect_reference=_compiled(data["heuristics"]["indirect_reference"]),
    )


def build_patterns() -> dict[str, Any]:
    """The patterns as detect-secrets defines them, in a stable order (imports detect-secrets)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.private_key import PrivateKeyDetector

    # detect-secrets annotates the mapping with an unbound TypeVar; its values are plugin classes.
    plugin_classes: list[type[BasePlugin]] = list(get_mapping_from_secret_type_to_class().values())
    regex_detectors = [
        detector_class()
        for detector_class in plugin_classes
        if issubclass(detector_class, RegexBasedDetector) and detector_class.__name__ not in EXCLUDED_DETECTORS
    ]
    detectors = sorted(
        ((_kind(detector.secret_type), detector) for detector in regex_detectors), key=lambda pair: pair[0]
    )
    keywords = {**keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP, keyword.FOLLOWED_BY_EQUAL_SIGNS_REGEX: 5}
    return {
        "source": f"detect-secrets {_detect_secrets_version()}",
        "detectors": [
            {
                "kind": kind,
                "regex": _exported(pattern),
                "is_jwt": isinstance(detector, JwtTokenDetector),
                "is_private_key": isinstance(detector, PrivateKeyDetector),
            }
            for kind, detector in detectors
            for pattern in detector.denylist
        ],
        "keywords": [
            {
                "regex": _exported(pattern),
                "group": group,
                "unquoted": pattern is keyword.FOLLOWED_BY_EQUAL_SIGNS_REGEX,
            }
            for pattern, group in keywords.items()
        ],
        "heuristics": {
            "uuid": _exported(heuristic._get_uuid_regex()),
            "indirect_reference": _exported(heuristic._get_indirect_reference_regex()),
        },
    }


def patterns_text(patterns: dict[str, Any]) -> str:
    """The file's exact text for `patterns`."""
    return json.dumps(patterns, indent=1, ensure_ascii=False) + "\n"


def _exported(pattern: re.Pattern[str]) -> dict[str, Any]:
    return {"pattern": pattern.pattern, "flags": pattern.flags}


_CUBIC_SEPARATOR: Final = "(?: *)(?:=|:|:=|=>| +|::)(?: *)"
_LINEAR_SEPARATOR: Final = "(?: *+(?:=>|:=|::|=|:) *+| ++)"
"""The Cloudant, IBM and SoftLayer patterns' separator tries three overlapping runs of spaces (cubic
on a long run); the rewrite matches the same separators (spaces, an operator between optional
spaces) with each run taken once: no character after it can be a space."""


def _compiled(regex: dict[str, Any]) -> re.Pattern[str]:
    return re.compile(regex["pattern"].replace(_CUBIC_SEPARATOR, _LINEAR_SEPARATOR), regex["flags"])


def _kind(secret_type: str) -> str:
    """`AWS Access Key` -> `aws-access-key`."""
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def _detect_secrets_version() -> str:
    from detect_secrets.__version__ import VERSION

    return VERSION


if __name__ == "__main__":
    PATTERNS_FILE.write_text(patterns_text(build_patterns()), encoding="utf-8")
    print(f"wrote {PATTERNS_FILE}", file=sys.stderr)
