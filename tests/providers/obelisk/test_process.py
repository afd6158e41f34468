"""run_cli and private_script: deadline, byte cap, process group, stderr, the private file."""

import os
import stat
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from contracts.errors import ProviderOutputTooLarge, ProviderTimeout, ProviderUnavailable
from fixtures.obelisk_stand_in import StandIn
from providers.obelisk.process import Deadline, private_script, run_cli
from providers.obelisk.template import TemplateLimits, query_script

CAP = 4 * 1024 * 1024


def _query_argv(stand_in: StandIn, tmp_path: Path) -> list[str]:
    script = query_script(
        terms=("retry",),
        sources=("claude",),
        roots=("/r",),
        after=None,
        before=None,
        limits=TemplateLimits(per_term=25, rows=40, snippet_chars=300, sessions=200, markers=32),
    )
    path = tmp_path / "query.js"
    path.write_text(script, encoding="utf-8")
    return [str(stand_in.executable), "--query", str(path)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def test_run_cli_returns_exit_status_stdout_and_stderr_count(
    stand_in: StandIn, tmp_path: Path
) -> None:
    stand_in.control(mode="stderr_flood")
    answer = run_cli(_query_argv(stand_in, tmp_path), deadline=Deadline(5), max_output_bytes=CAP)
    assert answer.exit_code == 0
    assert answer.stdout.startswith(b"{")
    assert answer.stderr_bytes > 100_000
    assert answer.stderr_head == b""


@pytest.mark.parametrize("mode", ["hang", "hang_with_child", "orphan_holds_pipe"])
def test_run_cli_timeout_kills_the_process_group(
    mode: str, stand_in: StandIn, tmp_path: Path
) -> None:
    stand_in.control(mode=mode)
    started = time.monotonic()
    with pytest.raises(ProviderTimeout):
        run_cli(_query_argv(stand_in, tmp_path), deadline=Deadline(1.0), max_output_bytes=CAP)
    assert time.monotonic() - started < 1.0 + 1.0
    (report,) = stand_in.queries()
    time.sleep(0.1)
    assert not _alive(report["pid"])
    if "child_pid" in report:
        assert not _alive(report["child_pid"])


def test_run_cli_stops_past_the_byte_cap_without_buffering(
    stand_in: StandIn, tmp_path: Path
) -> None:
    stand_in.control(mode="huge", huge_bytes=100_000_000)
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(ProviderOutputTooLarge):
            run_cli(_query_argv(stand_in, tmp_path), deadline=Deadline(10), max_output_bytes=CAP)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 10 + 1
    assert peak < 3 * CAP
    time.sleep(0.1)
    assert not _alive(stand_in.queries()[0]["pid"])


def test_run_cli_keeps_only_the_requested_stderr_head() -> None:
    argv = [sys.executable, "-c", "import sys; sys.stderr.write('u' * 100000); sys.exit(1)"]
    answer = run_cli(argv, deadline=Deadline(5), max_output_bytes=CAP, keep_stderr_bytes=10)
    assert (answer.exit_code, answer.stderr_bytes, answer.stderr_head) == (1, 100000, b"u" * 10)


@pytest.mark.parametrize(
    ("argv", "detail"),
    [(["/nonexistent/obelisk"], "binary_absent"), ([os.devnull], "binary_not_runnable")],
)
def test_run_cli_unrunnable_binary_is_unavailable(argv: list[str], detail: str) -> None:
    with pytest.raises(ProviderUnavailable) as raised:
        run_cli(argv, deadline=Deadline(5), max_output_bytes=CAP)
    assert raised.value.detail == detail
    assert raised.value.__context__ is None


def test_run_cli_signal_exit_is_negative() -> None:
    argv = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"]
    assert run_cli(argv, deadline=Deadline(5), max_output_bytes=CAP).exit_code == -9


def test_private_script_is_0600_in_a_0700_directory_and_removed() -> None:
    with private_script("return 1;") as path:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert path.read_text() == "return 1;"
    assert not path.exists() and not path.parent.exists()


def test_private_script_removed_when_the_run_fails() -> None:
    with pytest.raises(ProviderTimeout), private_script("return 1;") as path:
        raise ProviderTimeout("stand-in")
    assert not path.parent.exists()


def test_private_script_unique_per_call() -> None:
    with private_script("a") as first, private_script("b") as second:
        assert first != second
