"""The optional Obelisk adapter: runs an independently installed `obelisk` CLI, never its code."""

from obelisk_session_evidence.providers.obelisk.provider import ObeliskProvider

__all__ = ["ObeliskProvider"]
