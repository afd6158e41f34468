"""obelisk-session-evidence: bounded evidence from an agent's own earlier sessions for Replan."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("obelisk-session-evidence")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.1.0"

__all__ = ["__version__"]
