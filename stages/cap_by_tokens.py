"""cap-by-tokens: bound what reaches a prompt, dropping the lowest-ranked items first."""

from typing import Protocol

from contracts.digests import canonical_json
from contracts.evidence import EvidenceItem
from contracts.stage_values import Admission, CappedEvidence, Retrieval

ELLIPSIS = "…"


class TokenEncoder(Protocol):
    """The part of a tiktoken `Encoding` the cap needs."""

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, special-token text treated as plain text."""
        ...


def cap_by_tokens(
    admission: Admission, retrieval: Retrieval, *, encoder: TokenEncoder
) -> CappedEvidence:
    """Shorten snippets, then keep the longest ranked prefix within every limit."""
    if admission.status == "not_admitted" or retrieval.status == "not_admitted":
        return CappedEvidence(result=None, token_count=0)
    result, limits = retrieval.result, admission.request.limits
    shortened = [_shorten(item, limits.max_snippet_chars) for item in result.items]
    kept: list[EvidenceItem] = []
    sessions: set[str] = set()
    total_chars = total_tokens = 0
    for item in shortened:
        item_tokens = item_token_count(item, encoder)
        new_sessions = sessions | {item.session_ref}
        if (
            len(kept) + 1 > limits.max_items
            or len(new_sessions) > limits.max_sessions
            or total_chars + len(item.snippet) > limits.max_total_chars
            or total_tokens + item_tokens > admission.token_budget
        ):
            break
        kept.append(item)
        sessions = new_sessions
        total_chars += len(item.snippet)
        total_tokens += item_tokens
    dropped = len(shortened) - len(kept)
    any_shortened = any(a.snippet != b.snippet for a, b in zip(result.items, shortened))
    capped = result.model_copy(
        update={
            "items": kept,
            "truncated": result.truncated or dropped > 0 or any_shortened,
            "omitted_count": result.omitted_count + dropped,
        }
    )
    prior_calls = retrieval.prior_calls if retrieval.status == "retrieved" else []
    return CappedEvidence(result=capped, prior_calls=prior_calls, token_count=total_tokens)


def item_token_count(item: EvidenceItem, encoder: TokenEncoder) -> int:
    """Tokens of the item as it is written into the private result (compact JSON)."""
    return len(encoder.encode_ordinary(canonical_json(item.model_dump(mode="json", exclude_none=True))))


def _shorten(item: EvidenceItem, max_chars: int) -> EvidenceItem:
    """The item with its snippet cut to `max_chars`, marked with an ellipsis when cut."""
    if len(item.snippet) <= max_chars:
        return item
    return item.model_copy(update={"snippet": item.snippet[: max_chars - 1] + ELLIPSIS})
