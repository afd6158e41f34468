"""Builds the pipeline's dependencies from owner-local state: the one place that does I/O setup."""

from contracts.config import AdmissionPolicy, Enablement, ProviderKind
from contracts.situation import ReplanSituation
from contracts.thresholds import RouteThresholds
from obelisk_session_evidence.loopx_adapters.host_session import without_invoking_session
from obelisk_session_evidence.state import StatePaths, digest_salt, load_policy
from obelisk_session_evidence.tokenizer import LazyEncoder
from obelisk_session_evidence import __version__
from providers.base import EvidenceProvider, UnavailableProvider
from stages.admit import matching_enablement
from stages.pipeline import PipelineDependencies


def pipeline_dependencies(
    paths: StatePaths,
    situation: ReplanSituation,
    *,
    provider_kind: ProviderKind | None = None,
) -> PipelineDependencies:
    """Policy, provider, encoder, thresholds and salt for one situation."""
    policy = load_policy(paths)
    return PipelineDependencies(
        policy=policy,
        # The invoking host session is not history: its items never reach the comparison.
        provider=without_invoking_session(
            _provider_for(paths, policy, situation, provider_kind), situation.invoking_session
        ),
        encoder=LazyEncoder(paths.cache_dir / "tiktoken"),
        thresholds=RouteThresholds(),
        digest_salt=digest_salt(paths),
    )


def _provider_for(
    paths: StatePaths,
    policy: AdmissionPolicy,
    situation: ReplanSituation,
    provider_kind: ProviderKind | None,
) -> EvidenceProvider | None:
    """The backend the matching enablement names (or the override); None when none matches."""
    if policy.config is None:
        return None
    enablement, _ = matching_enablement(policy.config.enablements, situation)
    if enablement is None:
        return None
    kind = provider_kind or enablement.provider
    try:
        return build_provider(paths, enablement, kind)
    except Exception as error:  # noqa: BLE001 - a backend that cannot start fails open, typed
        return UnavailableProvider(f"{__version__} {kind}", f"{kind}:{type(error).__name__}")


def build_provider(paths: StatePaths, enablement: Enablement, kind: ProviderKind) -> EvidenceProvider:
    """The native index provider or the Obelisk adapter, bound to one enablement."""
    if kind == "obelisk":
        from providers.obelisk.provider import ObeliskProvider

        return ObeliskProvider(
            enablement,
            binary=enablement.obelisk_bin,
            work_dir=paths.root / "obelisk-queries",
            probe_cache_dir=paths.cache_dir,
        )
    from providers.native.provider import NativeIndexProvider

    return NativeIndexProvider(paths.index_dir, enablement)
