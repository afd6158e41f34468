"""The cyclic garbage collector paused while a short command loads and runs.

Importing a command's modules creates tens of thousands of long-lived objects and no garbage, and
a `run` allocates bounded, acyclic values (records, rows, models); the collector's passes over
them are pure cost, about a tenth of a cold `run`. Reference counting still frees everything; the
collector resumes as it was when the block ends, so an in-process caller is left as it was.
"""

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic collection inside the block."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
