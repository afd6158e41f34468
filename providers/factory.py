"""Builds the backend an enablement names: the one place that knows every provider's constructor."""

from collections.abc import Callable
from pathlib import Path

from contracts.config import Enablement, ProviderKind
from providers.base import EvidenceProvider

ProviderFactory = Callable[[Enablement, ProviderKind], EvidenceProvider]
"""Builds the provider of one kind for one enablement (tests inject their own)."""


def default_provider_factory(index_dir: Path) -> ProviderFactory:
    """The real backends: the native index under `index_dir`, or the Obelisk CLI adapter."""

    def build(enablement: Enablement, kind: ProviderKind) -> EvidenceProvider:
        if kind == "obelisk":
            from providers.obelisk.provider import ObeliskProvider

            return ObeliskProvider(enablement, binary=enablement.obelisk_bin)
        from providers.native.provider import NativeIndexProvider

        return NativeIndexProvider(index_dir, enablement)

    return build
