"""Canonical digests: the capability's `sha256:` house style and LoopX's observation fingerprint."""

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, non-ASCII kept: the digest input of agent-turn-recall."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_digest(value: Any) -> str:
    """`sha256:` + 64 hex over the canonical JSON of `value` in UTF-8."""
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def salted_digest(value: Any, *, salt: str) -> str:
    """A canonical digest keyed by an owner-local salt.

    Query terms and snippets are often low-entropy (`pytest -x`): a plain digest of them could
    be reversed by guessing, so public receipts digest them together with a secret salt.
    """
    return canonical_digest({"salt": salt, "value": value})


def observation_fingerprint(identity_fields: Mapping[str, Any]) -> str:
    """LoopX's 16-hex fingerprint: SHA-256 over compact, sorted, ASCII-escaped JSON."""
    text = json.dumps(dict(identity_fields), sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def agent_digest(agent_id: str | None) -> str | None:
    """The first 8 hex of sha256(agent_id): groups an agent's runs without naming it."""
    return hashlib.sha256(agent_id.encode("utf-8")).hexdigest()[:8] if agent_id else None
