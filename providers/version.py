"""The distribution's version, as every backend reports it: the one place it is written (pyproject
reads it from here), so providers never import the application layer above them and no process
pays for reading package metadata."""

from typing import Final

DISTRIBUTION: Final = "obelisk-session-evidence"
PACKAGE_VERSION: Final = "0.1.0"
