"""cap-by-tokens: bound what reaches a prompt, dropping the lowest-ranked items first."""

from typing import Protocol

from obelisk_session_evidence.contracts.digests import canonical_json
from obelisk_session_evidence.contracts.evidence import EvidenceItem
from obelisk_session_evidence.contracts.limits import LimitTally
from obelisk_session_evidence.contracts.stage_values import Admission, CappedEvidence, Retrieval

ELLIPSIS = "…"


class TokenEncoder(Protocol):
    """The part of a tiktoken `Encoding` the cap needs."""

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, special-token text treated as plain text."""
        ...


def cap_by_tokens(admission: Admission, retrieval: Retrieval, *, encoder: TokenEncoder) -> CappedEvidence:
    """Shorten snippets, then keep the longest ranked prefix within every limit."""
    if admission.status == "not_admitted" or retrieval.status == "not_admitted":
        return CappedEvidence(result=None, token_count=0)
    result, limits = retrieval.result, admission.request.limits
    shortened = [_shorten(item, limits.max_snippet_chars) for item in result.items]
    kept: list[EvidenceItem] = []
    tally = LimitTally(limits)
    tokens = TokenTally(encoder, admission.token_budget)
    for item in shortened:
        text = item_text(item)
        if not tally.fits(item.session_ref, len(item.snippet)) or not tokens.fits(text):
            break
        kept.append(item)
        tally.take(item.session_ref, len(item.snippet))
        tokens.add(text)
    dropped = len(shortened) - len(kept)
    any_shortened = any(a.snippet != b.snippet for a, b in zip(result.items, shortened, strict=False))
    capped = result.model_copy(
        update={
            "items": kept,
            "truncated": result.truncated or dropped > 0 or any_shortened,
            "omitted_count": result.omitted_count + dropped,
        }
    )
    retrieved = retrieval if retrieval.status == "retrieved" else None
    return CappedEvidence(
        result=capped,
        prior_calls=retrieved.prior_calls if retrieved else [],
        revision_checks=retrieved.revision_checks if retrieved else [],
        token_count=tokens.total,
        token_count_exact=tokens.exact,
    )


class TokenTally:
    """The kept items' tokens against the budget, counted only when a cut depends on them.

    A BPE token is at least one byte, so texts whose UTF-8 length fits the budget fit it in
    tokens too: until the bytes exceed the budget the tally holds their byte length (an upper
    bound) and never calls the encoder. From the first text that could cross the budget on, it
    counts exactly (the kept texts once, then each new one), so every cut is decided on exact
    counts.
    """

    def __init__(self, encoder: TokenEncoder, budget: int) -> None:
        self._encoder = encoder
        self._budget = budget
        self._kept: list[str] = []
        self._bytes = 0
        self._tokens: int | None = None
        self._last_count = 0

    @property
    def exact(self) -> bool:
        """True once the tally counts tokens (or when nothing was kept)."""
        return self._tokens is not None or not self._kept

    @property
    def total(self) -> int:
        """Exact tokens of the kept texts when `exact`, else their UTF-8 byte length."""
        return self._bytes if self._tokens is None else self._tokens

    def fits(self, text: str) -> bool:
        """Whether `text` added to the kept texts stays within the budget."""
        if self._tokens is None:
            if self._bytes + utf8_length(text) <= self._budget:
                return True
            self._tokens = sum(self._count(kept) for kept in self._kept)
        self._last_count = self._count(text)
        return self._tokens + self._last_count <= self._budget

    def add(self, text: str) -> None:
        """Keep `text`, the one `fits` was just asked about."""
        self._kept.append(text)
        self._bytes += utf8_length(text)
        if self._tokens is not None:
            self._tokens += self._last_count

    def _count(self, text: str) -> int:
        return len(self._encoder.encode_ordinary(text))


def utf8_length(text: str) -> int:
    """Bytes of `text` in UTF-8; a lone surrogate counts 3, as the U+FFFD tiktoken encodes for it."""
    return len(text.encode("utf-8", "surrogatepass"))


def item_text(item: EvidenceItem) -> str:
    """The item as it is written into the private result (compact JSON)."""
    return canonical_json(item.model_dump(mode="json", exclude_none=True))


def item_token_count(item: EvidenceItem, encoder: TokenEncoder) -> int:
    """Exact tokens of the item as it is written into the private result."""
    return len(encoder.encode_ordinary(item_text(item)))


def _shorten(item: EvidenceItem, max_chars: int) -> EvidenceItem:
    """The item with its snippet cut to `max_chars`, marked with an ellipsis when cut."""
    if len(item.snippet) <= max_chars:
        return item
    return item.model_copy(update={"snippet": item.snippet[: max_chars - 1] + ELLIPSIS})
