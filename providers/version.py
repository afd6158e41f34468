"""The installed distribution's version, as every backend reports it (read from package metadata,
so providers never import the application layer above them)."""

from importlib.metadata import PackageNotFoundError, version
from typing import Final

DISTRIBUTION: Final = "obelisk-session-evidence"

try:
    PACKAGE_VERSION: Final = version(DISTRIBUTION)
except PackageNotFoundError:  # a source tree that was never installed
    PACKAGE_VERSION = "0.1.0"  # type: ignore[misc]
