"""The composition root: the only code that builds a decision's dependencies and runs the pipeline.

The CLI, the Prefect flows, `batch` and the LoopX adapters all decide through `decide`. What a
decision depends on comes from the owner-local state (the policy in `config.json`, the digest
salt, the tokenizer cache) and from a provider factory: the real backends by default, a test's
own through `provider_factory`. The invoking host session is excluded here, once, whichever
provider answers.

A program that composes this application with another backend in a process it starts (a test
harness around the CLI, a Dask worker preload) names it once with `use_provider_factory`; code
that calls `decide` passes `provider_factory` instead. The Stage 0 qualification, which must vary
the policy, the provider, the thresholds, the encoder and the salt per case, passes each of them.
"""

from pathlib import Path

from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, ProviderKind
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.lifecycle.policy import load_policy
from obelisk_session_evidence.providers.base import EvidenceProvider, UnavailableProvider
from obelisk_session_evidence.providers.factory import BackendFolders, ProviderFactory, default_provider_factory
from obelisk_session_evidence.providers.git_revisions import RevisionChecking
from obelisk_session_evidence.providers.invoking_session import without_invoking_session
from obelisk_session_evidence.providers.version import PACKAGE_VERSION
from obelisk_session_evidence.stages.admit import matching_enablement
from obelisk_session_evidence.stages.cap_by_tokens import TokenEncoder
from obelisk_session_evidence.stages.pipeline import (
    PipelineDependencies,
    PipelineRun,
    StageCall,
    call_directly,
    run_pipeline,
)
from obelisk_session_evidence.state.paths import StatePaths, state_paths
from obelisk_session_evidence.state.salt import digest_salt as state_digest_salt
from obelisk_session_evidence.tokenizer import LazyEncoder

_process_provider_factory: ProviderFactory | None = None


def use_provider_factory(factory: ProviderFactory | None) -> None:
    """Make `factory` the backend of every decision in this process that names none (None
    restores the real backends)."""
    global _process_provider_factory
    _process_provider_factory = factory


def provider_factory_for(paths: StatePaths, factory: ProviderFactory | None = None) -> ProviderFactory:
    """`factory`, else this process's named one, else the real backends over the state's index."""
    return factory or _process_provider_factory or default_provider_factory(backend_folders(paths))


def decide(
    situation: ReplanSituation,
    *,
    paths: StatePaths | None = None,
    provider_factory: ProviderFactory | None = None,
    provider_kind: ProviderKind | None = None,
    policy: AdmissionPolicy | None = None,
    thresholds: RouteThresholds | None = None,
    encoder: TokenEncoder | None = None,
    digest_salt: str | None = None,
    call: StageCall = call_directly,
) -> PipelineRun:
    """Decide one situation under the owner's policy; `call` runs each stage (directly, or as a
    Prefect task). A failing stage raises `StageFailed`; a provider fault is a typed empty result.

    What is not given comes from the state at `paths` (default: the owner's, `state_paths()`):
    the policy from `config.json`, the backends over its index, the encoder from its tokenizer
    cache, the digest salt; the thresholds are `RouteThresholds()`'s defaults. A caller that
    decides many situations under one configuration (a batch, whose idempotency keys name that
    configuration) reads the policy once and passes it; a replay passes the encoder that remembers
    its token counts."""
    state = paths if paths is not None else state_paths()
    policy = policy if policy is not None else load_policy(state)
    factory = provider_factory_for(state, provider_factory)
    dependencies = PipelineDependencies(
        policy=policy,
        # The invoking host session is not history: its records never reach the comparison.
        provider=without_invoking_session(
            _provider_for(policy, situation, factory, provider_kind), situation.invoking_session
        ),
        encoder=encoder if encoder is not None else LazyEncoder(tokenizer_cache(state)),
        thresholds=thresholds if thresholds is not None else RouteThresholds(),
        digest_salt=digest_salt if digest_salt is not None else state_digest_salt(state),
    )
    return run_pipeline(situation, dependencies, call=call)


def backend_folders(paths: StatePaths) -> BackendFolders:
    """The state's folders the real backends use."""
    return BackendFolders(index_dir=paths.index_dir, obelisk_work_dir=paths.obelisk_work_dir, cache_dir=paths.cache_dir)


def tokenizer_cache(paths: StatePaths) -> Path:
    """Where the offline BPE files are seeded."""
    return paths.cache_dir / "tiktoken"


def backend_for(
    policy: AdmissionPolicy, situation: ReplanSituation, provider_kind: ProviderKind | None
) -> tuple[Enablement, ProviderKind] | None:
    """The enablement matching the situation and the backend kind to ask (the override, else the
    enablement's); None when no enablement matches."""
    if policy.config is None:
        return None
    enablement = matching_enablement(policy.config.enablements, situation)
    if isinstance(enablement, str):
        return None
    return enablement, provider_kind or enablement.provider


def _provider_for(
    policy: AdmissionPolicy,
    situation: ReplanSituation,
    factory: ProviderFactory,
    provider_kind: ProviderKind | None,
) -> EvidenceProvider | None:
    """The backend the matching enablement names (or the override); None when none matches."""
    backend = backend_for(policy, situation, provider_kind)
    if backend is None:
        return None
    enablement, kind = backend
    try:
        provider = factory(enablement, kind)
    except Exception as error:
        return UnavailableProvider(f"{PACKAGE_VERSION} {kind}", f"{kind}:{type(error).__name__}")
    # Whichever backend answers, git places the revisions its prior calls ran at (docs/revisions.md).
    return RevisionChecking(provider, enablement.repo_roots)
