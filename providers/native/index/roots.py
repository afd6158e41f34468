"""Session roots as a refresh reads them and the index stores them.

Apart from `refresh` so that a lookup, which only names roots (scope filters, freshness), does not
load the refresh machinery (parsers, parser workers, row writers) unless its refresh is due.
"""

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.native.index.repository import normalise_path

Roots = Mapping[SourceKind, Sequence[Path]]
"""Each source's session roots."""


def root_text(root: Path | str) -> str:
    """A root as the index stores it: absolute and normalised."""
    return normalise_path(os.path.abspath(root))
