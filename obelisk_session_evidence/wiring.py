"""Builds the pipeline's dependencies from owner-local state: the one place that does I/O setup."""

from contracts.config import AdmissionPolicy, Enablement, ProviderKind
from contracts.situation import ReplanSituation
from contracts.thresholds import RouteThresholds
from obelisk_session_evidence.state import StatePaths, digest_salt, load_policy
from obelisk_session_evidence.tokenizer import load_encoder
from providers.base import EvidenceProvider
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
        provider=_provider_for(paths, policy, situation, provider_kind),
        encoder=load_encoder(paths.cache_dir / "tiktoken"),
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
    return build_provider(paths, enablement, provider_kind or enablement.provider)


def build_provider(paths: StatePaths, enablement: Enablement, kind: ProviderKind) -> EvidenceProvider:
    """The native index provider or the Obelisk adapter, bound to one enablement."""
    if kind == "obelisk":
        from providers.obelisk.provider import ObeliskProvider

        return ObeliskProvider(enablement, binary=enablement.obelisk_bin)
    from providers.native.provider import NativeIndexProvider

    return NativeIndexProvider(paths.index_dir, enablement)
