"""Enable, status, disable (RFC §8): explicit, scoped, default-off, and never destructive.

Writers serialise on `config.json.lock` (`fcntl.flock`), read-modify-write under it and replace the
file atomically (mode 0600), so concurrent `enable`s never lose or corrupt an enablement. Disabling
removes configuration entries only: the index, the agents' session files and Obelisk's data stay
as they are (`index_drop.drop_index` is the separate, explicit way to delete the native index).
"""

import fcntl
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, TypedDict

from pydantic import TypeAdapter, ValidationError

from obelisk_session_evidence.contracts.base import TRIGGERS, OpaqueId
from obelisk_session_evidence.contracts.config import (
    DEFAULT_HISTORY_WINDOW_DAYS,
    STAGE_1_TRIGGERS,
    Enablement,
    EnablementConfig,
)
from obelisk_session_evidence.contracts.errors import ConfigInvalid, InvalidInput, ScopeBroadeningNotQualified
from obelisk_session_evidence.contracts.json_input import describe_validation_error
from obelisk_session_evidence.contracts.lifecycle import (
    DENIED_SCOPES,
    AllowedScope,
    DeniedScope,
    DisableOutcome,
    EnableChange,
    EnableOutcome,
    IndexHealth,
    LifecycleStatus,
    ProviderHealth,
    ScopeStatus,
    SkippedSource,
)
from obelisk_session_evidence.contracts.reason_codes import StatusCode
from obelisk_session_evidence.contracts.sources import SOURCE_KINDS, SourceKind
from obelisk_session_evidence.lifecycle.policy import load_config
from obelisk_session_evidence.lifecycle.scope_guard import scopes_reading_the_same_sessions
from obelisk_session_evidence.lifecycle.trigger_gate import kept_qualification
from obelisk_session_evidence.providers.health import index_health, provider_health
from obelisk_session_evidence.providers.native.parsers import default_roots
from obelisk_session_evidence.providers.obelisk.environment import default_obelisk_home
from obelisk_session_evidence.providers.version import PACKAGE_VERSION
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import private_dir, write_private
from obelisk_session_evidence.state.spool import held_count, retention_seconds

ProviderProbe = Callable[[Path, Enablement], ProviderHealth]
"""Probes a backend given the native index folder."""
IndexProbe = Callable[[Path, Enablement], IndexHealth]
CONFIG_HINT: Final = "fix or remove config.json; admission stays off until then"
_HISTORICAL_HINT: Final = "declare a worktree that is gone with --historical-repo-root"
_OPAQUE_ID: Final = TypeAdapter(OpaqueId)


@dataclass(frozen=True, slots=True)
class EnableRequest:
    """`enable`'s options as given; `enable` validates every one of them."""

    agent_ids: Sequence[str]
    project_ids: Sequence[str]
    repository_ids: Sequence[str]
    surface: str = "replan-history"
    repo_roots: Sequence[Path] = ()
    historical_repo_roots: Sequence[Path] = ()
    sources: Sequence[str] = ()
    source_roots: Sequence[str] = ()
    """`SOURCE=PATH` pairs."""
    provider: str = "native"
    obelisk_bin: Path | None = None
    obelisk_home: Path | None = None
    """Where the operator's Obelisk keeps its index (`--provider obelisk` only)."""
    triggers: Sequence[str] = ()
    history_window_days: int | None = None
    """None: the default window (`DEFAULT_HISTORY_WINDOW_DAYS`)."""
    allow_cross_agent: bool = False
    allow_cross_project: bool = False
    foreign_archives: Sequence[Path] = ()


def enable(
    request: EnableRequest,
    *,
    paths: StatePaths,
    now: datetime | None = None,
    probe: ProviderProbe = provider_health,
    home: Path | None = None,
) -> EnableOutcome:
    """Record one same-agent, same-project, same-repository enablement (idempotent)."""
    reject_scope_broadening(request)
    candidate, skipped = _enablement_from(request, now or datetime.now(UTC), home=home or Path.home())
    change: EnableChange
    with _locked_config(paths) as current:
        enablements = list(current.enablements) if current else []
        position = next((i for i, e in enumerate(enablements) if e.scope_key == candidate.scope_key), None)
        if position is not None:
            candidate = kept_qualification(enablements[position], candidate)
        if position is not None and _settings(enablements[position]) == _settings(candidate):
            recorded, change = enablements[position], "unchanged"
        else:
            recorded, change = candidate, "created" if position is None else "updated"
            if position is None:
                enablements.append(candidate)
            else:
                enablements[position] = candidate
            _save(paths, _config_of(enablements))
    return EnableOutcome(
        change=change, enablement=recorded, provider=probe(paths.index_dir, recorded), skipped_sources=skipped
    )


def update_enablement(
    paths: StatePaths, scope_key: tuple[str, str, str], change: Callable[[Enablement], Enablement]
) -> Enablement | None:
    """Apply `change` to the enablement of `scope_key` under the writers' lock; None when it is gone."""
    with _locked_config(paths) as current:
        enablements = list(current.enablements) if current else []
        position = next((i for i, e in enumerate(enablements) if e.scope_key == scope_key), None)
        if position is None:
            return None
        enablements[position] = change(enablements[position])
        _save(paths, _config_of(enablements))
        return enablements[position]


def disable(project_id: str, *, agent_id: str | None = None, paths: StatePaths) -> DisableOutcome:
    """Remove the project's (or one agent's) enablements; admission stops at its next read."""
    _check_ids(project_id=project_id, agent_id=agent_id)
    with _locked_config(paths) as current:
        enablements = list(current.enablements) if current else []
        removed = [e for e in enablements if _matches(e, project_id, agent_id)]
        remaining = [e for e in enablements if not _matches(e, project_id, agent_id)]
        if removed:
            _save(paths, _config_of(remaining))
    return DisableOutcome(
        project_id=project_id,
        agent_id=agent_id,
        removed=[allowed_scope(e) for e in removed],
        remaining_enablements=len(remaining),
        reason_code="disabled" if removed else "not_enabled",
    )


class _Reported(TypedDict):
    """What `status` reports whatever the configuration says."""

    version: str
    project_id: str
    agent_id: str | None
    denied_scopes: list[DeniedScope]
    spooled_situations: int
    spool_retention_hours: int


def status(
    project_id: str,
    *,
    agent_id: str | None = None,
    paths: StatePaths,
    probe: ProviderProbe = provider_health,
    index_probe: IndexProbe = index_health,
) -> LifecycleStatus:
    """Configuration, provider and index health, and allowed and denied scope for a project."""
    _check_ids(project_id=project_id, agent_id=agent_id)
    report: _Reported = {
        "version": PACKAGE_VERSION,
        "project_id": project_id,
        "agent_id": agent_id,
        "denied_scopes": [DeniedScope(scope=scope) for scope in DENIED_SCOPES],
        "spooled_situations": held_count(paths, "situations"),
        "spool_retention_hours": round(retention_seconds(paths) / 3600),
    }
    try:
        config = load_config(paths)
    except ConfigInvalid as error:
        return LifecycleStatus(
            **report,
            config_state="config_invalid",
            config_detail=f"{error.detail}; {CONFIG_HINT}"[:400],
            enabled=False,
            healthy=False,
            reason_code="config_invalid",
            scopes=[],
        )
    enablements = [e for e in (config.enablements if config else []) if _matches(e, project_id, agent_id)]
    scopes = [_scope_status(paths, e, probe, index_probe) for e in enablements]
    unhealthy = next((scope for scope in scopes if not scope.healthy), None)
    return LifecycleStatus(
        **report,
        config_state="config_loaded" if config else "config_absent",
        enabled=bool(scopes),
        healthy=bool(scopes) and unhealthy is None,
        reason_code="not_enabled" if not scopes else unhealthy.reason_code if unhealthy else "healthy",
        scopes=scopes,
    )


def reject_scope_broadening(request: EnableRequest) -> None:
    """Raise `ScopeBroadeningNotQualified` for any cross-agent, cross-project or archive scope."""
    attempts = [
        (request.allow_cross_agent, "--allow-cross-agent"),
        (request.allow_cross_project, "--allow-cross-project"),
        (bool(request.foreign_archives), "--foreign-archive"),
        (len(set(request.agent_ids)) > 1, "more than one --agent-id"),
        (len(set(request.project_ids)) > 1, "more than one --project-id"),
        (len(set(request.repository_ids)) > 1, "more than one --repository-id"),
    ]
    for attempted, what in attempts:
        if attempted:
            raise ScopeBroadeningNotQualified(f"{what}: v0 enables one agent, project and repository")


def allowed_scope(enablement: Enablement) -> AllowedScope:
    """What admission may read under one enablement."""
    return AllowedScope(
        agent_id=enablement.agent_id,
        project_id=enablement.project_id,
        repository_id=enablement.repository_id,
        sources=list(enablement.sources),
        triggers=list(enablement.triggers),
    )


def _scope_status(
    paths: StatePaths, enablement: Enablement, probe: ProviderProbe, index_probe: IndexProbe
) -> ScopeStatus:
    provider = probe(paths.index_dir, enablement)
    index = index_probe(paths.index_dir, enablement)
    reason_code: StatusCode
    if provider.state != "available":
        reason_code = provider.reason_code
    elif not index.usable or index.freshness == "stale":
        # A stale index still answers (the next lookup refreshes it), but healthy means current.
        reason_code = index.reason_code
    else:
        reason_code = "healthy"
    return ScopeStatus(
        enablement=enablement,
        allowed_scope=allowed_scope(enablement),
        denied_triggers=[t for t in TRIGGERS if t not in enablement.triggers],
        provider=provider,
        index=index,
        healthy=reason_code == "healthy",
        reason_code=reason_code,
    )


def _enablement_from(request: EnableRequest, now: datetime, *, home: Path) -> tuple[Enablement, list[SkippedSource]]:
    """Validate the request's values (folders exist, ids well formed) into one enablement, and
    the sources left out for lack of a session folder."""
    unknown = set(request.sources) - set(SOURCE_KINDS) | set(request.triggers) - set(TRIGGERS)
    if unknown:
        raise InvalidInput(f"{len(unknown)} unknown --source or --trigger value(s)")
    if not request.repo_roots and not request.historical_repo_roots:
        raise InvalidInput("--repo-root or --historical-repo-root is required: a scope names its repository")
    repo_roots = [
        _existing_folder(path, f"--repo-root #{number}", _HISTORICAL_HINT)
        for number, path in enumerate(request.repo_roots, 1)
    ]
    historical = [_historical_root(path, n) for n, path in enumerate(request.historical_repo_roots, 1)]
    sources, found, skipped = _chosen_sources(request, home)
    document = {
        "surface": request.surface,
        "agent_id": _single(request.agent_ids, "--agent-id"),
        "project_id": _single(request.project_ids, "--project-id"),
        "repository_id": _single(request.repository_ids, "--repository-id"),
        "repo_roots": _unique([*repo_roots, *historical]),
        "historical_repo_roots": _unique(historical),
        "sources": sources,
        "source_roots": _source_roots(request.source_roots, sources),
        "sources_found": found,
        "provider": request.provider,
        "obelisk_bin": str(Path(os.path.abspath(request.obelisk_bin))) if request.obelisk_bin else None,
        "obelisk_home": _obelisk_home(request),
        "triggers": [t for t in TRIGGERS if t in request.triggers] if request.triggers else list(STAGE_1_TRIGGERS),
        "trigger_grant": "operator" if request.triggers else "stage_1",
        "history_window_days": request.history_window_days or DEFAULT_HISTORY_WINDOW_DAYS,
        "enabled_at": now,
    }
    try:
        return Enablement.model_validate(document), skipped
    except ValidationError as error:
        raise InvalidInput(describe_validation_error(error)) from None


def _chosen_sources(
    request: EnableRequest, home: Path
) -> tuple[list[SourceKind], list[SourceKind], list[SkippedSource]]:
    """`(sources, found, skipped)`. The sources asked for with `--source`, else those whose
    session folder (`--source-root`, else the agent's standard one) exists; when none does, all
    of them, each unused until its folder appears. `found`: the chosen sources whose folder
    exists now (a folder that disappears later makes the index incomplete; one that never
    existed does not)."""
    defaults = default_roots(home)
    given = {
        source: Path(folder).expanduser() for source, _, folder in (p.partition("=") for p in request.source_roots)
    }
    folders = {source: given.get(source, defaults[source]) for source in SOURCE_KINDS}
    present = [source for source in SOURCE_KINDS if folders[source].is_dir()]
    if request.sources:
        sources = [source for source in SOURCE_KINDS if source in request.sources]
        skipped: list[SkippedSource] = []
    else:
        sources = present or list(SOURCE_KINDS)
        skipped = [
            SkippedSource(source=s, folder=str(folders[s])) for s in SOURCE_KINDS if present and s not in present
        ]
    return sources, [source for source in sources if source in present], skipped


def _existing_folder(path: Path, label: str, hint: str) -> str:
    resolved = path.expanduser().resolve()
    if not resolved.is_dir():
        raise InvalidInput(f"{label} is not an existing folder; {hint}")
    if resolved in (Path("/"), Path.home().resolve()):
        # Every session on the machine (or of the user) lies under it: no scope at all.
        raise InvalidInput(f"{label} is / or the home folder; name the repository or session folder")
    return str(resolved)


def _obelisk_home(request: EnableRequest) -> str | None:
    """The Obelisk index folder for `--provider obelisk` (given, else Obelisk's own default);
    it need not exist yet: `status` says whether an index is there."""
    if request.provider != "obelisk":
        if request.obelisk_home is not None:
            raise InvalidInput("--obelisk-home applies to --provider obelisk only")
        return None
    if request.obelisk_home is None:
        return str(default_obelisk_home())
    return os.path.abspath(request.obelisk_home.expanduser())


def _historical_root(path: Path, number: int) -> str:
    resolved = path.expanduser().resolve()
    if resolved.exists():
        raise InvalidInput(f"--historical-repo-root #{number} exists; pass it as --repo-root")
    return str(resolved)


def _source_roots(pairs: Sequence[str], sources: Sequence[str]) -> dict[str, str]:
    roots: dict[str, str] = {}
    for number, pair in enumerate(pairs, 1):
        source, separator, folder = pair.partition("=")
        label = f"--source-root #{number}"
        if not separator or not folder:
            raise InvalidInput(f"{label} must be SOURCE=PATH")
        if source not in sources:
            raise InvalidInput(f"{label} names a source that is not enabled (see --source)")
        if source in roots:
            raise InvalidInput(f"{label} repeats a source")
        roots[source] = _existing_folder(Path(folder), label, "session folders must exist")
    return roots


def _single(values: Sequence[str], option: str) -> str:
    if not values:
        raise InvalidInput(f"{option} is required")
    return values[0]


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _settings(enablement: Enablement) -> dict[str, object]:
    """Everything but the timestamp: re-enabling with these unchanged changes nothing."""
    return enablement.model_dump(mode="json", exclude={"enabled_at"})


def _config_of(enablements: list[Enablement]) -> EnablementConfig:
    shared = scopes_reading_the_same_sessions(enablements)
    if shared is not None:
        raise ScopeBroadeningNotQualified(
            "this scope would read the same sessions as another enabled scope; separate them"
            " with --source, --source-root or --repo-root"
        )
    try:
        return EnablementConfig(enablements=enablements)
    except ValidationError as error:
        raise InvalidInput(describe_validation_error(error)) from None


def _matches(enablement: Enablement, project_id: str, agent_id: str | None) -> bool:
    return enablement.project_id == project_id and agent_id in (None, enablement.agent_id)


def _check_ids(*, project_id: str, agent_id: str | None) -> None:
    for option, value in (("--project-id", project_id), ("--agent-id", agent_id)):
        if value is None:
            continue
        try:
            _OPAQUE_ID.validate_python(value)
        except ValidationError:
            raise InvalidInput(f"{option} is not an opaque id") from None


@contextmanager
def _locked_config(paths: StatePaths) -> Iterator[EnablementConfig | None]:
    """Hold the writers' lock while the caller reads, changes and saves the configuration."""
    private_dir(paths.root)
    lock_file = paths.config_file.with_name(paths.config_file.name + ".lock")
    descriptor = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        try:
            current = load_config(paths)
        except ConfigInvalid as error:
            raise ConfigInvalid(f"{error.detail}; {CONFIG_HINT}") from None
        yield current
    finally:
        os.close(descriptor)  # closing releases the lock


def _save(paths: StatePaths, config: EnablementConfig) -> None:
    write_private(paths.config_file, (config.model_dump_json(indent=2) + "\n").encode("utf-8"))
