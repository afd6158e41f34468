"""Builds the backend an enablement names: the one place that knows every provider's constructor."""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from obelisk_session_evidence.contracts.config import Enablement, ProviderKind
from obelisk_session_evidence.providers.base import EvidenceProvider

ProviderFactory = Callable[[Enablement, ProviderKind], EvidenceProvider]
"""Builds the provider of one kind for one enablement (tests inject their own)."""


@dataclass(frozen=True, slots=True)
class BackendFolders:
    """The owner's private folders the real backends use."""

    index_dir: Path
    """The native index."""
    obelisk_work_dir: Path
    """Where the Obelisk adapter writes its query files (0700, removed after each query)."""
    cache_dir: Path
    """Where the Obelisk adapter caches its probe of a binary."""


def default_provider_factory(folders: BackendFolders) -> ProviderFactory:
    """The real backends: the native index, or the Obelisk CLI adapter."""

    def build(enablement: Enablement, kind: ProviderKind) -> EvidenceProvider:
        if kind == "obelisk":
            from obelisk_session_evidence.providers.obelisk.provider import ObeliskProvider

            return ObeliskProvider(
                enablement,
                binary=enablement.obelisk_bin,
                work_dir=folders.obelisk_work_dir,
                probe_cache_dir=folders.cache_dir,
            )
        from obelisk_session_evidence.providers.native.provider import NativeIndexProvider

        return NativeIndexProvider(folders.index_dir, enablement)

    return build
