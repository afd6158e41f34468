"""Every fault path is a typed empty result within the timeout + 1 s, and leaves nothing behind."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fixtures.obelisk_stand_in import StandIn
from obelisk_session_evidence.contracts.stage_values import Admitted
from obelisk_session_evidence.stages.retrieve import retrieve
from tests.providers.obelisk.conftest import SPOTTER_ROOT, enablement_for, provider_for, request_for
from tests.reliability.processes import process_alive

TIMEOUT_S = 2.0
FAULTS = {
    "hang": "provider_timeout",
    "malformed": "provider_output_malformed",
    "stray_log": "provider_output_malformed",
    "huge": "provider_output_too_large",
    "error": "provider_failed",
    "crash": "provider_failed",
    "killed": "provider_failed",
    "orphan_row": "scope_violation",
    "foreign_row": "scope_violation",
    "mixed_session_row": "scope_violation",
    "orphan_call_row": "scope_violation",
    "foreign_call_row": "scope_violation",
    "other_source_row": "scope_violation",
}


def _retrieve(stand_in: StandIn, tmp_path: Path, **kwargs):
    enablement = enablement_for(stand_in.home, roots=[SPOTTER_ROOT], sources=["claude"])
    provider = provider_for(stand_in, enablement, tmp_path / "work", timeout_s=TIMEOUT_S, **kwargs)
    admission = Admitted(trigger="replan_repetition", request=request_for("Phoenix"), token_budget=2000)
    started = time.monotonic()
    retrieval = retrieve(admission, provider=provider)
    return retrieval, time.monotonic() - started


@pytest.mark.parametrize("mode", sorted(FAULTS))
def test_a_fault_is_a_typed_empty_result_in_time(built: StandIn, tmp_path: Path, mode: str) -> None:
    built.control(mode=mode, huge_bytes=64 * 1024 * 1024)
    try:
        retrieval, elapsed = _retrieve(built, tmp_path, max_output_bytes=1024 * 1024)
    finally:
        built.control(mode="ok")
    assert retrieval.reason_code == FAULTS[mode]
    assert retrieval.result is not None and retrieval.result.items == []
    assert retrieval.result.freshness == "unknown" and retrieval.status == "failed"
    assert elapsed <= TIMEOUT_S + 1.0
    assert list((tmp_path / "work").iterdir()) == []


def test_an_absent_binary_is_unavailable(built: StandIn, tmp_path: Path) -> None:
    enablement = enablement_for(built.home, roots=[SPOTTER_ROOT], sources=["claude"])
    provider = provider_for(built, enablement, tmp_path / "work")
    provider._binary = str(tmp_path / "no-such-obelisk")
    admission = Admitted(trigger="replan_repetition", request=request_for("Phoenix"), token_budget=2000)
    retrieval = retrieve(admission, provider=provider)
    assert retrieval.reason_code == "provider_unavailable" and retrieval.result.items == []


@pytest.mark.parametrize("mode", ["hang_with_child", "hang_with_setsid_child"])
def test_a_timeout_kills_everything_the_cli_started(built: StandIn, tmp_path: Path, mode: str) -> None:
    """A grandchild that called setsid has left the process group; it is killed all the same."""
    built.control(mode=mode)
    before = len(built.reports())
    try:
        retrieval, elapsed = _retrieve(built, tmp_path)
    finally:
        built.control(mode="ok")
    assert retrieval.reason_code == "provider_timeout" and elapsed <= TIMEOUT_S + 1.0
    started = [entry for entry in built.reports()[before:]]
    pids = [entry["pid"] for entry in started] + [e["child_pid"] for e in started if "child_pid" in e]
    assert any("child_pid" in entry for entry in started)
    deadline = time.monotonic() + 2
    while any(process_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(process_alive(pid) for pid in pids)


def test_sigterm_leaves_no_query_file_and_no_process(built: StandIn, tmp_path: Path) -> None:
    """The caller's SIGTERM handler calls `terminate_running_queries()`, then exits."""
    built.control(mode="hang_with_setsid_child")
    work = tmp_path / "work"
    program = textwrap.dedent(
        f"""
        import signal, sys
        from pathlib import Path
        from obelisk_session_evidence.providers.obelisk.process import terminate_running_queries
        from tests.providers.obelisk.conftest import SPOTTER_ROOT, enablement_for, provider_for, request_for
        from fixtures.obelisk_stand_in import StandIn

        def stop(number, frame):
            terminate_running_queries()
            sys.exit(128 + number)

        signal.signal(signal.SIGTERM, stop)
        stand_in = StandIn(Path({str(built.executable)!r}), Path({str(built.home)!r}),
                           Path({str(built.control_path)!r}), Path({str(built.report_path)!r}))
        enablement = enablement_for(stand_in.home, roots=[SPOTTER_ROOT], sources=["claude"])
        provider = provider_for(stand_in, enablement, Path({str(work)!r}), timeout_s=60)
        provider.search(request_for("Phoenix"))
        """
    )
    before = len(built.reports())
    caller = subprocess.Popen(
        [sys.executable, "-c", program], cwd=Path.cwd(), env={**os.environ, "PYTHONPATH": str(Path.cwd())}
    )
    try:
        deadline = time.monotonic() + 20
        while not any("child_pid" in e for e in built.reports()[before:]):
            assert time.monotonic() < deadline and caller.poll() is None
            time.sleep(0.05)
        assert any(work.rglob("query.js"))
        caller.send_signal(signal.SIGTERM)
        assert caller.wait(timeout=10) == 128 + signal.SIGTERM
    finally:
        built.control(mode="ok")
        if caller.poll() is None:
            caller.kill()
    started = built.reports()[before:]
    pids = [entry["pid"] for entry in started] + [e["child_pid"] for e in started if "child_pid" in e]
    deadline = time.monotonic() + 10  # a hang guard: the kernel ends them shortly after the kill
    while any(process_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(process_alive(pid) for pid in pids)
    assert list(work.rglob("*")) == []
