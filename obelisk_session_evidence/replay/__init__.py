"""`replay`: judge every verdict by what really happened next, on the owner's own history.

For each enabled scope (optionally one project or agent), `replay_scope` walks the scope's tool
calls in time order and decides each shell call on the history strictly before it, through the
composition root; `tally` judges the verdicts, and the naive rule beside them, by the calls'
recorded outcomes. Public output is `replay_report_v0` (counts, rates, opaque references); the
listed calls' text goes only to the owner's private file.
"""

from datetime import UTC, datetime

from obelisk_session_evidence.compose import decide, tokenizer_cache
from obelisk_session_evidence.contracts.base import Freshness
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, EnablementConfig, ProviderKind
from obelisk_session_evidence.contracts.errors import InvalidInput, UnsupportedOption
from obelisk_session_evidence.contracts.replay import REPLAY_TARGETS, ReplayFigures, ReplayReport
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.lifecycle.policy import load_policy
from obelisk_session_evidence.providers.base import EvidenceProvider
from obelisk_session_evidence.providers.native.index.history_size import Count
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.replay.encoder import RememberingEncoder
from obelisk_session_evidence.replay.run import Decide, PrivateCall, Progress, ScopeRun, merged, replay_scope
from obelisk_session_evidence.replay.tally import figures
from obelisk_session_evidence.stages.pipeline import PipelineRun
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.salt import digest_salt
from obelisk_session_evidence.tokenizer import LazyEncoder

__all__ = [
    "PrivateCall",
    "ScopeRun",
    "check_replayable",
    "decider",
    "merged",
    "prepare_scope",
    "replay_history",
    "replay_one_scope",
    "scopes_to_replay",
    "targets_met",
]


def scopes_to_replay(paths: StatePaths, *, project_id: str | None, agent_id: str | None) -> list[Enablement]:
    """The enabled scopes the replay covers; refuses when none is enabled (or none matches)."""
    policy = load_policy(paths)
    if policy.config is None:
        raise InvalidInput(f"nothing to replay: {policy.load_reason_code}")
    chosen = [
        enablement
        for enablement in policy.config.enablements
        if (project_id is None or enablement.project_id == project_id)
        and (agent_id is None or enablement.agent_id == agent_id)
    ]
    if not chosen:
        raise InvalidInput("nothing to replay: no enabled scope matches --project-id/--agent-id")
    return chosen


def replay_one_scope(
    paths: StatePaths,
    enablement: Enablement,
    *,
    provider_kind: ProviderKind | None = None,
    progress: Progress | None = None,
    private: list[PrivateCall] | None = None,
    part: range | None = None,
    freshness: Freshness | None = None,
    arms: Count | None = None,
) -> ScopeRun:
    """Replay one enabled scope on the native index (`provider_kind` must be native); `part`,
    `freshness` and `arms` as in `replay_scope`."""
    source = _native_source(paths, enablement, provider_kind)
    return replay_scope(
        enablement,
        source,
        decide=decider(paths, enablement),
        salt=digest_salt(paths),
        progress=progress,
        private=private,
        part=part,
        freshness=freshness,
        arms=arms,
    )


def prepare_scope(
    paths: StatePaths, enablement: Enablement, *, provider_kind: ProviderKind | None = None
) -> tuple[Freshness, int]:
    """A replay's one refresh of the scope, and how many calls its timeline holds (to split it)."""
    source = _native_source(paths, enablement, provider_kind)
    freshness = source.refresh()
    return freshness, len(source.timeline().call_keys)


def check_replayable(enablement: Enablement, provider_kind: ProviderKind | None = None) -> None:
    """Refuse, typed, a scope whose backend cannot answer as of a call (before any work starts)."""
    if (provider_kind or enablement.provider) != "native":
        # Obelisk's index keeps no order of a session's calls to cut at: say so, typed.
        raise UnsupportedOption("as_of_cut: the Obelisk provider cannot answer as of an earlier call")


def _native_source(
    paths: StatePaths, enablement: Enablement, provider_kind: ProviderKind | None
) -> NativeIndexProvider:
    check_replayable(enablement, provider_kind)
    return NativeIndexProvider(paths.index_dir, enablement)


def replay_history(runs: list[ScopeRun]) -> ReplayReport:
    """The report over replayed scopes, judged against the targets."""
    total = figures([call for run in runs for call in run.judged]) if runs else None
    return ReplayReport(
        generated_at=datetime.now(UTC),
        scopes=[run.report for run in runs],
        total=total,
        targets=dict(REPLAY_TARGETS),
        targets_met=total is not None and targets_met(total),
    )


def targets_met(found: ReplayFigures) -> bool:
    """Both figures at their targets, and alarms right above the naive rule's on the same calls.

    The naive rule alarms at every re-run of a failed command, so it catches every dead end by
    construction (1.0): recall can only tie it, and is judged against its target alone."""
    right, caught = found.verdict.alarms_right, found.verdict.dead_ends_caught_rate
    if right is None or caught is None:
        return False
    naive_right = found.naive.alarms_right or 0.0
    at_targets = right >= REPLAY_TARGETS["alarms_right"] and caught >= REPLAY_TARGETS["dead_ends_caught"]
    return at_targets and right > naive_right


def decider(paths: StatePaths, enablement: Enablement) -> Decide:
    """Decisions under the scope's own enablement, admitted as an operator's request for history."""
    triggers = list(dict.fromkeys([*enablement.triggers, "operator_requested_history"]))
    admitted = enablement.model_copy(update={"triggers": triggers})
    policy = AdmissionPolicy(config=EnablementConfig(enablements=[admitted]), load_reason_code="config_loaded")
    encoder = RememberingEncoder(LazyEncoder(tokenizer_cache(paths)))

    def decide_with(situation: ReplanSituation, provider: EvidenceProvider) -> PipelineRun:
        return decide(
            situation,
            paths=paths,
            provider_factory=lambda _enablement, _kind: provider,
            policy=policy,
            encoder=encoder,
        )

    return decide_with
