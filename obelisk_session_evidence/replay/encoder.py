"""A token encoder that remembers its counts: a replay caps the same snippets again and again."""

from collections import OrderedDict
from typing import Final

from obelisk_session_evidence.stages.cap_by_tokens import TokenEncoder

REMEMBERED_TEXTS: Final = 8192
"""Most texts remembered (least recently used forgotten first): a bound on memory."""


class RememberingEncoder:
    """`encoder`'s token ids by text, remembered for the `REMEMBERED_TEXTS` last texts."""

    def __init__(self, encoder: TokenEncoder) -> None:
        self._encoder = encoder
        self._ids: OrderedDict[str, tuple[int, ...]] = OrderedDict()

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text` (a fresh list: a caller may change it)."""
        ids = self._ids.get(text)
        if ids is None:
            ids = tuple(self._encoder.encode_ordinary(text))
            self._ids[text] = ids
            if len(self._ids) > REMEMBERED_TEXTS:
                self._ids.popitem(last=False)
        else:
            self._ids.move_to_end(text)
        return list(ids)
