"""Provider faults through the full pipeline: a typed result within the timeout + 1 s, memory
bounded, no out-of-scope row, and no partial raw output in anything public.

The Obelisk adapter runs over the stand-in steered into each fault (absent, slow, hung, oversize,
malformed, crashing, out-of-scope rows, a broken probe, an old Node, a sandbox whose `sql()`
throws); the stand-in indexes a HOME of real-format Claude and Codex session files, as the real CLI
would. The native provider runs over a corrupt or unreachable index, a missing root, a budget too
small for a first build, another writer, and a named pipe in the sessions root; handler providers
crash or answer for another scope. The stand-in prints the canary in every error, log line and
flood, and every session holds it.
"""

import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fixtures.obelisk_stand_in import StandIn, install_stand_in
from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY, situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, EnablementConfig
from obelisk_session_evidence.contracts.evidence import (
    EvidenceItem,
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
    ScopeApplied,
)
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.prior_calls import ProviderAnswer
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.providers.base import EvidenceProvider, HandlerProvider
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file, writer_lock
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.providers.obelisk import ObeliskProvider
from obelisk_session_evidence.providers.obelisk.discovery import clear_probe_cache, find_binary, probe_cli
from obelisk_session_evidence.providers.obelisk.items import opaque_ref
from obelisk_session_evidence.providers.obelisk.process import Deadline
from tests.providers.native.index.transcripts import ClaudeTranscript
from tests.reliability.figures import FIGURES
from tests.reliability.leaks import assert_no_canary, error_texts
from tests.reliability.pipeline_runs import MeasuredRun, run_pipeline_measured
from tests.reliability.processes import process_alive, run_forked
from tests.reliability.worlds import failed_codex_run, write_config

pytestmark = pytest.mark.reliability

CANARY = "CANARY-FAULT-60b2"
SHORT_TIMEOUT_S = 0.5
"""For faults that can only end in a timeout (the test waits for it). The probe is remembered
beforehand, as in a long-lived process, so only the faulty call itself runs against this deadline."""
LONG_TIMEOUT_S = 4.0
"""For faults that answer at once: room for a loaded machine, so none is misread as a timeout."""
MAX_OUTPUT_BYTES = 1024 * 1024
MEMORY_BOUND_BYTES = 3 * MAX_OUTPUT_BYTES + 4 * 1024 * 1024
"""Peak traced allocation of one faulty lookup: a few times the stdout cap, never the flood."""
NATIVE_BUDGET_S = 2.0
WINDOW = {"after": "2026-08-01T09:01:30+00:00", "before": "2026-08-30T00:00:00+00:00"}
IN_SCOPE_SESSIONS = {("claude", "s-claude-1"), ("codex", "codex:s-codex-1")}
"""(Obelisk source, session id) of the planted sessions; the stand-in names Codex sessions
`codex:<thread>` as the recordings show. Obelisk 0.2.3 has no DSH provider, so `dsh` has none."""

OBELISK_FAULTS = [
    pytest.param({"binary": "absent"}, SHORT_TIMEOUT_S, "provider_unavailable", id="absent"),
    pytest.param({"binary": "not-executable"}, SHORT_TIMEOUT_S, "provider_unavailable", id="not-executable"),
    pytest.param({"identity_wait_s": 30}, SHORT_TIMEOUT_S, "provider_timeout", id="slow"),
    pytest.param({"mode": "hang"}, SHORT_TIMEOUT_S, "provider_timeout", id="hung"),
    pytest.param({"mode": "hang_with_child"}, SHORT_TIMEOUT_S, "provider_timeout", id="hung-with-child"),
    pytest.param({"mode": "hang_with_setsid_child"}, SHORT_TIMEOUT_S, "provider_timeout", id="hung-with-setsid-child"),
    pytest.param({"mode": "orphan_holds_stdout"}, SHORT_TIMEOUT_S, "provider_timeout", id="orphan-holds-stdout"),
    pytest.param({"version_mode": "hang"}, SHORT_TIMEOUT_S, "provider_unavailable", id="version-probe-hung"),
    pytest.param(
        {"mode": "huge", "huge_bytes": 100_000_000}, LONG_TIMEOUT_S, "provider_output_too_large", id="oversize-100MB"
    ),
    pytest.param({"mode": "malformed"}, LONG_TIMEOUT_S, "provider_output_malformed", id="malformed-json"),
    pytest.param({"mode": "stray_log"}, LONG_TIMEOUT_S, "provider_output_malformed", id="log-line-before-json"),
    pytest.param({"mode": "trailing_log"}, LONG_TIMEOUT_S, "provider_output_malformed", id="log-line-after-json"),
    pytest.param({"mode": "error"}, LONG_TIMEOUT_S, "provider_failed", id="error-envelope"),
    pytest.param({"mode": "crash"}, LONG_TIMEOUT_S, "provider_failed", id="crash"),
    pytest.param({"mode": "killed"}, LONG_TIMEOUT_S, "provider_failed", id="killed-by-signal"),
    pytest.param({"version_mode": "garbage"}, LONG_TIMEOUT_S, "provider_unavailable", id="version-probe-garbage"),
    pytest.param({"version_mode": "fail"}, LONG_TIMEOUT_S, "provider_unavailable", id="version-probe-fails"),
    pytest.param({"node": "20.11.1"}, LONG_TIMEOUT_S, "provider_unavailable", id="node-too-old"),
    pytest.param({"mode": "sql_fails"}, LONG_TIMEOUT_S, "retrieved", id="sandbox-sql-throws"),
    pytest.param({"mode": "other_source_row"}, LONG_TIMEOUT_S, "scope_violation", id="row-of-another-agent-source"),
    pytest.param({"mode": "foreign_call_row"}, LONG_TIMEOUT_S, "scope_violation", id="row-of-another-repository"),
    pytest.param({"mode": "foreign_row"}, LONG_TIMEOUT_S, "scope_violation", id="hit-of-another-repository"),
    pytest.param({"mode": "mixed_session_row"}, LONG_TIMEOUT_S, "scope_violation", id="row-of-a-foreign-session"),
    pytest.param({"mode": "orphan_call_row"}, LONG_TIMEOUT_S, "scope_violation", id="row-of-an-unknown-session"),
    pytest.param({"mode": "orphan_row"}, LONG_TIMEOUT_S, "scope_violation", id="hit-of-an-unknown-session"),
    pytest.param({"mode": "stderr_flood"}, LONG_TIMEOUT_S, "retrieved", id="stderr-flood-tolerated"),
    pytest.param({"options": WINDOW}, LONG_TIMEOUT_S, "unsupported_option", id="window-option-refused"),
]
"""The window options (`after`/`before`) are gone: the adapter refuses every provider option (the
last case), so no row can be outside a window. A row without a session identity (Obelisk's orphan
subagent rows, recording 2.14) is the out-of-scope case in its place."""
PARTIAL = {"sandbox-sql-throws"}
"""Cases answered from `search()` alone: the lookup could not finish, so freshness is not fresh
and no tool call (the prior failures) can be in it."""


class RecordingProvider:
    """Delegates to a provider and keeps what it raised: exception text is public output too."""

    def __init__(self, inner: EvidenceProvider) -> None:
        self.inner = inner
        self.errors: list[BaseException] = []

    @property
    def provider_version(self) -> str:
        return self.inner.provider_version

    def index_revision(self) -> str | None:
        return self.inner.index_revision()

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        try:
            return self.inner.search(request)
        except BaseException as error:
            self.errors.append(error)
            raise


PROBE_SETTINGS = frozenset({"version_mode", "node"})
"""Control keys the adapter's remembered probe depends on: a test changing one probes afresh."""


@pytest.fixture(scope="module")
def repo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("faults") / "work" / "repo"


def _lay_out_fault_home(home: Path, repo_root: Path) -> Path:
    """The planted sessions, as Claude Code and Codex write them: a failed `pytest -x tests/unit`
    in the repository (Claude, and Codex), and the same in another repository (out of scope)."""
    projects = home / ".claude" / "projects"
    for session, cwd in (("s-claude-1", repo_root), ("s-other-1", repo_root.parent / "other-repo")):
        transcript = ClaudeTranscript(projects, session, str(cwd))
        transcript.user(f"Run the flaky retry test again with pytest -x tests/unit {CANARY}")
        transcript.bash("pytest -x tests/unit", f"FAILED {CANARY}", exit_code=1).write()
    failed_codex_run(home / ".codex" / "sessions", "s-codex-1", str(repo_root), "pytest -x tests/unit", CANARY)
    return home


@pytest.fixture(scope="module")
def shared_stand_in(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Iterator[StandIn]:
    """One stand-in for the module, its index built: its probe is remembered between tests, as in a
    long-lived process."""
    clear_probe_cache()
    base = tmp_path_factory.mktemp("stand-in")
    installed = install_stand_in(base / "cli", home=_lay_out_fault_home(base / "home", repo_root))
    ObeliskProvider(
        _enablement(repo_root),
        binary=str(installed.executable),
        work_dir=base / "work",
        obelisk_home=installed.home / ".obelisk",
    ).build_index(timeout_s=60.0)
    yield installed
    clear_probe_cache()


@pytest.fixture
def stand_in(shared_stand_in: StandIn) -> Iterator[StandIn]:
    """The shared stand-in, answering normally (the canary in every error and log line), no reports yet."""
    base = {"report": str(shared_stand_in.report_path), "error_text": CANARY, "log_text": CANARY}
    shared_stand_in.control_path.write_text(json.dumps(base))
    shared_stand_in.report_path.unlink(missing_ok=True)
    yield shared_stand_in
    shared_stand_in.report_path.unlink(missing_ok=True)


def _steer(stand_in: StandIn, control: dict[str, Any], folder: Path) -> StandIn:
    """Set the fault; return the stand-in to run. A fault of the probe needs the probe to run again
    (and to be forgotten after); any other fault meets a probe already remembered. An old Node is
    a launcher of its own (`#!` naming a fake Node) over the same HOME."""
    if "node" in control:
        return install_stand_in(folder, home=stand_in.home, node=control["node"], error_text=CANARY, log_text=CANARY)
    if PROBE_SETTINGS & control.keys():
        clear_probe_cache()
    else:
        probe_cli(find_binary(str(stand_in.executable), None), deadline=Deadline(30.0))
    stand_in.control(**control)
    return stand_in


def _enablement(repo_root: Path, **overrides: Any) -> Enablement:
    return Enablement(
        **{
            "surface": "replan-history",
            "agent_id": FIXTURE_AGENT,
            "project_id": FIXTURE_PROJECT,
            "repository_id": FIXTURE_REPOSITORY,
            "repo_roots": [str(repo_root)],
            "sources": ["claude", "codex", "dsh"],
            "provider": "obelisk",
            "enabled_at": datetime(2026, 11, 29, tzinfo=UTC),
            **overrides,
        }
    )


def _policy(enablement: Enablement) -> AdmissionPolicy:
    return AdmissionPolicy(config=EnablementConfig(enablements=[enablement]), load_reason_code="config_loaded")


def _situation(commands: list[str]) -> ReplanSituation:
    return load_contract(ReplanSituation, json.dumps(situation(commands=commands, files=[])).encode())


def _gone_soon(pid: int, *, within_s: float = 3.0) -> bool:
    """SIGKILL was sent to the process group; the kernel ends each member shortly after."""
    deadline = time.monotonic() + within_s
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _outputs(run: MeasuredRun, provider: RecordingProvider | None, caplog: Any, capsys: Any) -> dict[str, Any]:
    """The run's decision and receipt, what its provider raised, logs, stdout and stderr."""
    captured = capsys.readouterr()
    errors = [text for error in (provider.errors if provider else []) for text in error_texts(error)]
    return {
        **run.public_outputs(),
        "errors": errors,
        "log": caplog.text,
        "stdout": captured.out,
        "stderr": captured.err,
    }


def _count_fault(case: str, run: MeasuredRun, timeout_s: float) -> None:
    """Record the case, its latency, how far past its timeout it answered, and its peak memory."""
    FIGURES.cases["provider_faults"] += 1
    FIGURES.fault_latency(case, run.seconds)
    overshoot = FIGURES.notes.setdefault("worst_fault_overshoot_past_timeout", {"seconds": -1e9, "case": ""})
    if run.seconds - timeout_s > overshoot["seconds"]:
        overshoot.update(seconds=round(run.seconds - timeout_s, 3), case=case)
    if run.peak_bytes is not None:
        FIGURES.peaks_mb[f"fault-{case}"] = run.peak_bytes / 2**20
    assert run.seconds < timeout_s + 1.0, f"{case}: {run.seconds:.2f}s"


@pytest.mark.parametrize(("control", "timeout_s", "reason_code"), OBELISK_FAULTS)
def test_run_pipeline_obelisk_fault_is_typed_in_time(
    control: dict[str, Any],
    timeout_s: float,
    reason_code: str,
    request: pytest.FixtureRequest,
    stand_in: StandIn,
    repo_root: Path,
    encoder,
    tmp_path: Path,
    caplog,
    capsys,
) -> None:
    caplog.set_level("DEBUG")
    target, options = stand_in, control.get("options", {})
    binary = str(stand_in.executable)
    if control.get("binary") == "absent":
        binary = str(tmp_path / "nowhere" / "obelisk")
    elif control.get("binary") == "not-executable":
        binary = str(stand_in.control_path)
    elif not options:
        target = _steer(stand_in, control, tmp_path / "old-node")
        binary = str(target.executable)
    enablement = _enablement(repo_root)
    work_dir = tmp_path / "obelisk-work"
    provider = RecordingProvider(
        ObeliskProvider(
            enablement,
            binary=binary,
            work_dir=work_dir,
            obelisk_home=stand_in.home / ".obelisk",
            timeout_s=timeout_s,
            max_output_bytes=MAX_OUTPUT_BYTES,
            options=options,
        )
    )
    run = run_pipeline_measured(
        _situation(["pytest -x tests/unit", "retry"]),
        provider=provider,
        policy=_policy(enablement),
        encoder=encoder,
        trace_memory=True,
    )
    case = f"obelisk:{request.node.callspec.id}"
    _count_fault(case, run, timeout_s)
    assert run.decision.retrieval.reason_code == reason_code
    assert run.peak_bytes is not None and run.peak_bytes < MEMORY_BOUND_BYTES
    in_scope = {opaque_ref("session", source, session) for source, session in IN_SCOPE_SESSIONS}
    stray = sum(item.session_ref not in in_scope for item in run.items)
    FIGURES.out_of_scope_rows += stray
    assert stray == 0
    if request.node.callspec.id in PARTIAL:
        assert run.items and {item.evidence_type for item in run.items} <= {"decision", "summary"}
        assert run.decision.receipt.freshness in ("unknown", "incomplete")
    elif reason_code == "retrieved":
        assert {item.evidence_type for item in run.items} >= {"prior_failure"}
        assert run.decision.receipt.freshness == "fresh"
    else:
        assert run.items == [] and run.decision.receipt.result_count == 0
        assert run.decision.receipt.freshness == "unknown"
    if reason_code in ("provider_unavailable", "unsupported_option"):
        assert target.queries() == [], "a query ran although the lookup could not"
    for report in target.reports():
        assert _gone_soon(report["pid"])
        if "child_pid" in report:
            assert _gone_soon(report["child_pid"])
    assert list(work_dir.glob("*")) == [], "a query folder outlived its run"
    if PROBE_SETTINGS & control.keys():
        clear_probe_cache()
    assert_no_canary(CANARY, tmp_path / "public", _outputs(run, provider, caplog, capsys))


def _native_sessions(root: Path, repo_root: Path) -> Path:
    claude = root / "claude"
    transcript = ClaudeTranscript(claude, "native-1", str(repo_root))
    transcript.user(f"Retry the flaky test {CANARY}").bash(
        "pytest -x tests/unit", f"FAILED {CANARY}", exit_code=1
    ).write()
    return claude


def _native_case(
    case: str, tmp_path: Path, repo_root: Path
) -> tuple[EvidenceProvider | None, Enablement, str, str, Any]:
    """`(provider, enablement, reason code, freshness, context)` for one native fault."""
    claude = _native_sessions(tmp_path / "sessions", repo_root)
    index_dir = tmp_path / "state" / "index"
    enablement = _enablement(repo_root, provider="native", sources=["claude"], source_roots={"claude": str(claude)})
    provider = NativeIndexProvider(index_dir, enablement, refresh_budget_s=NATIVE_BUDGET_S)
    context: Any = None
    if case == "corrupt-index-file":
        index_dir.mkdir(parents=True)
        index_file(index_dir).write_bytes(b"SQLite format 3\x00" + f"{CANARY} not a database".encode() * 500)
        return provider, enablement, "index_unavailable", "unknown", context
    if case == "index-folder-is-a-file":
        index_dir.parent.mkdir(parents=True)
        index_dir.write_text(CANARY)
        return provider, enablement, "index_unavailable", "unknown", context
    if case == "sessions-root-missing":
        enablement = enablement.model_copy(update={"source_roots": {"claude": str(tmp_path / "gone")}})
        # Absence is never "no history": a missing sessions folder makes the scope incomplete.
        return NativeIndexProvider(index_dir, enablement), enablement, "retrieved", "incomplete", context
    if case == "first-build-over-budget":
        provider = NativeIndexProvider(index_dir, enablement, refresh_budget_s=0.0)
        return provider, enablement, "retrieved", "stale", context
    if case == "another-writer-holds-the-lock":
        context = writer_lock(index_file(index_dir), wait_s=0)
        return provider, enablement, "retrieved", "unknown", context
    if case == "index-deleted-after-build":
        refresh_index(index_file(index_dir), {"claude": [claude]})
        for suffix in ("", "-wal", "-shm"):
            Path(f"{index_file(index_dir)}{suffix}").unlink(missing_ok=True)
        return provider, enablement, "retrieved", "fresh", context
    if case == "no-provider":
        return None, enablement, "provider_unavailable", "unknown", context
    raise AssertionError(case)


NATIVE_FAULTS = [
    "corrupt-index-file",
    "index-folder-is-a-file",
    "sessions-root-missing",
    "first-build-over-budget",
    "another-writer-holds-the-lock",
    "index-deleted-after-build",
    "no-provider",
]


@pytest.mark.parametrize("case", NATIVE_FAULTS)
def test_run_pipeline_native_fault_is_typed_in_time(case: str, encoder, tmp_path: Path, caplog, capsys) -> None:
    caplog.set_level("DEBUG")
    repo_root = tmp_path / "work" / "ledger"
    (repo_root / "src").mkdir(parents=True)
    inner, enablement, reason_code, freshness, context = _native_case(case, tmp_path, repo_root)
    provider = RecordingProvider(inner) if inner is not None else None
    if context is not None:
        assert context.__enter__() is True
    try:
        run = run_pipeline_measured(
            _situation(["pytest -x tests/unit"]),
            provider=provider,
            policy=_policy(enablement),
            encoder=encoder,
            trace_memory=True,
        )
    finally:
        if context is not None:
            context.__exit__(None, None, None)
    _count_fault(f"native:{case}", run, NATIVE_BUDGET_S)
    assert run.decision.retrieval.reason_code == reason_code
    assert run.decision.receipt.freshness == freshness
    assert run.peak_bytes is not None and run.peak_bytes < MEMORY_BOUND_BYTES
    assert_no_canary(CANARY, tmp_path / "public", _outputs(run, provider, caplog, capsys))


def _pipeline_in_child(
    report_progress: Any, index_dir: Path, enablement: Enablement, situation_model: ReplanSituation, encoder: Any
) -> str:
    provider = NativeIndexProvider(index_dir, enablement, refresh_budget_s=NATIVE_BUDGET_S)
    run = run_pipeline_measured(situation_model, provider=provider, policy=_policy(enablement), encoder=encoder)
    return run.decision.model_dump_json()


def test_run_pipeline_native_over_a_named_pipe_in_the_sessions_root(encoder, tmp_path: Path) -> None:
    """A FIFO where a session file should be must not block the lookup (run in a child: it could hang)."""
    repo_root = tmp_path / "work" / "ledger"
    (repo_root / "src").mkdir(parents=True)
    claude = _native_sessions(tmp_path / "sessions", repo_root)
    os.mkfifo(next(claude.iterdir()) / "pipe.jsonl")
    enablement = _enablement(repo_root, provider="native", sources=["claude"], source_roots={"claude": str(claude)})
    started = time.monotonic()
    status, decision = run_forked(
        _pipeline_in_child,
        tmp_path / "state" / "index",
        enablement,
        _situation(["pytest -x tests/unit"]),
        encoder,
        timeout_s=NATIVE_BUDGET_S + 10.0,
    )
    seconds = time.monotonic() - started
    FIGURES.cases["provider_faults"] += 1
    FIGURES.fault_latency("native:fifo-in-sessions-root", seconds)
    if status != "ok":
        FIGURES.crashes += 1
    assert status == "ok", f"the lookup ended with {status}"
    document = json.loads(decision)
    assert document["retrieval"]["reason_code"] == "retrieved"
    assert document["receipt"]["freshness"] == "incomplete" and document["receipt"]["result_count"] >= 1
    assert seconds < NATIVE_BUDGET_S + 1.0
    assert_no_canary(CANARY, tmp_path / "public", {"decision": decision})


def _crash(request: HistoricalEvidenceRequest) -> HistoricalEvidenceResult:
    raise RuntimeError(f"backend exploded near {CANARY}")


def _result(request: HistoricalEvidenceRequest, **changes: Any) -> HistoricalEvidenceResult:
    scope = request.scope
    fields: dict[str, Any] = {
        "request_id": request.request_id,
        "provider_version": "0.1.0 handler/1",
        "index_revision": "rev-1",
        "scope_applied": ScopeApplied(
            agent_id=scope.agent_id, project_id=scope.project_id, repository_id=scope.repository_id
        ),
        "freshness": "fresh",
        "items": [
            EvidenceItem(
                session_ref="session:" + "a" * 32, evidence_type="prior_failure", snippet=f"$ pytest\nexit 1\n{CANARY}"
            )
        ],
        "truncated": False,
        "omitted_count": 0,
    }
    fields.update(changes)
    return HistoricalEvidenceResult(**fields)


HANDLER_FAULTS = [
    pytest.param(_crash, "provider_crashed", id="raises-a-foreign-error"),
    pytest.param(lambda request: {"items": [CANARY]}, "provider_crashed", id="answers-a-dict"),
    pytest.param(
        lambda request: _result(
            request,
            scope_applied=ScopeApplied(
                agent_id="other-agent", project_id=FIXTURE_PROJECT, repository_id=FIXTURE_REPOSITORY
            ),
        ),
        "scope_violation",
        id="answers-for-another-agent",
    ),
    pytest.param(
        lambda request: _result(request, request_id="req-someone-else"), "scope_violation", id="answers-another-request"
    ),
    pytest.param(
        lambda request: _result(
            request, items=[EvidenceItem(session_ref="session:" + "b" * 32, evidence_type="summary", snippet=CANARY)]
        ),
        "scope_violation",
        id="answers-an-unrequested-type",
    ),
]


@pytest.mark.parametrize(("handler", "reason_code"), HANDLER_FAULTS)
def test_run_pipeline_handler_fault_is_typed(
    handler: Any, reason_code: str, request: pytest.FixtureRequest, encoder, tmp_path: Path, caplog, capsys
) -> None:
    caplog.set_level("DEBUG")
    enablement = _enablement(tmp_path / "repo", provider="native")
    provider = RecordingProvider(HandlerProvider(handler))
    document = situation(commands=["pytest -x tests/unit"], files=[], evidence_types=["prior_failure"])
    run = run_pipeline_measured(
        load_contract(ReplanSituation, json.dumps(document).encode()),
        provider=provider,
        policy=_policy(enablement),
        encoder=encoder,
    )
    _count_fault(f"handler:{request.node.callspec.id}", run, 1.0)
    assert run.decision.retrieval.reason_code == reason_code
    FIGURES.out_of_scope_rows += len(run.items)
    assert run.items == []
    # The handler's own exception is the fault under test, not output: `retrieve` drops it.
    assert_no_canary(CANARY, tmp_path / "public", _outputs(run, None, caplog, capsys))


@pytest.mark.parametrize(
    ("control", "reason_code"),
    [
        pytest.param({"mode": "malformed"}, "provider_output_malformed", id="malformed"),
        pytest.param({"mode": "crash"}, "provider_failed", id="crash"),
        pytest.param({"mode": "huge", "huge_bytes": 100_000_000}, "provider_output_too_large", id="oversize-100MB"),
        pytest.param({"mode": "foreign_call_row"}, "scope_violation", id="row-of-another-repository"),
        pytest.param({"binary": "absent"}, "provider_unavailable", id="absent"),
    ],
)
def test_cli_run_under_obelisk_fault_prints_only_codes(
    control: dict[str, Any],
    reason_code: str,
    request: pytest.FixtureRequest,
    stand_in: StandIn,
    repo_root: Path,
    clean_environment: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`run --situation -` with the Obelisk provider enabled: the decision, exit 0, nothing raw.
    HOME is the stand-in's: the adapter looks for Obelisk's index where Obelisk keeps it."""
    monkeypatch.setenv("HOME", str(stand_in.home))
    binary = str(tmp_path / "nowhere" / "obelisk") if control.get("binary") else str(stand_in.executable)
    if not control.get("binary"):
        _steer(stand_in, control, tmp_path / "old-node")
    write_config(clean_environment, _enablement(repo_root, obelisk_bin=binary))
    raw = _situation(["pytest -x tests/unit", "retry"]).model_dump_json().encode()
    started = time.monotonic()
    result = CliRunner().invoke(main, ["run", "--situation", "-", "--format", "json"], input=raw)
    seconds = time.monotonic() - started
    FIGURES.cases["provider_faults"] += 1
    FIGURES.fault_latency(f"cli:{request.node.callspec.id}", seconds)
    assert result.exit_code == 0
    decision = json.loads(result.stdout)
    assert decision["retrieval"]["reason_code"] == reason_code and decision["receipt"]["result_count"] == 0
    assert_no_canary(CANARY, tmp_path / "public", {"cli_stdout": result.stdout, "cli_stderr": result.stderr})
