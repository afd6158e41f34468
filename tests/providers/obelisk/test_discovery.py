"""find_binary and probe_cli: discovery, Node and version probes, variants, remembered probes."""

import json
import os
import stat
import time
from pathlib import Path

import pytest

from contracts.errors import ProviderUnavailable
from fixtures.obelisk_stand_in import StandIn, install_stand_in
from providers.obelisk.discovery import (
    CACHE_FILE,
    CliProbe,
    clear_probe_cache,
    find_binary,
    probe_cli,
    remember_sandbox,
)
from providers.obelisk.process import Deadline

ALL_HELPERS = {
    name: True for name in ("sql", "search", "sessions", "fileHistory", "failures", "messages")
}


def _verbs(stand_in: StandIn) -> list[str]:
    return [entry["verb"] for entry in stand_in.reports()]


def test_find_binary_prefers_explicit_then_configured_then_path(
    stand_in: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = install_stand_in(tmp_path / "other", data={"sessions": [], "messages": []})
    monkeypatch.setenv("PATH", f"{other.bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert find_binary(str(stand_in.executable), str(other.executable)).path == str(
        stand_in.executable
    )
    assert find_binary(None, str(stand_in.executable)).path == str(stand_in.executable)
    assert find_binary(None, None).path == str(other.executable)


@pytest.mark.parametrize("binary", ["/nonexistent/obelisk", os.devnull, "/tmp"])
def test_find_binary_absent_is_unavailable(binary: str) -> None:
    with pytest.raises(ProviderUnavailable):
        find_binary(binary, None)


def test_find_binary_nothing_on_path_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ProviderUnavailable):
        find_binary(None, None)


def test_find_binary_not_executable_is_unavailable(stand_in: StandIn) -> None:
    stand_in.executable.chmod(0o644)
    with pytest.raises(ProviderUnavailable):
        find_binary(str(stand_in.executable), None)


@pytest.mark.parametrize(("variant", "expected"), [("A", "A"), ("B", "B")])
def test_probe_cli_reads_version_and_variant(
    variant: str, expected: str, stand_in: StandIn
) -> None:
    stand_in.control(variant=variant, version="0.3.1")
    probe = probe_cli(find_binary(str(stand_in.executable), None), deadline=Deadline(5))
    assert (probe.version, probe.variant, probe.node) == ("0.3.1", expected, None)


@pytest.mark.parametrize(
    ("node", "usable"),
    [("22.13.0", True), ("24.1.0", True), ("22.12.9", False), ("20.11.1", False)],
)
def test_probe_cli_checks_the_node_a_script_runs_on(
    node: str, usable: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = install_stand_in(tmp_path / "npm", data={"sessions": [], "messages": []}, node=node)
    monkeypatch.setenv("PATH", f"{stand_in.bin_dir}{os.pathsep}{os.environ['PATH']}")
    binary = find_binary(str(stand_in.executable), None)
    if usable:
        assert probe_cli(binary, deadline=Deadline(5)).node == node
    else:
        with pytest.raises(ProviderUnavailable) as raised:
            probe_cli(binary, deadline=Deadline(5))
        assert raised.value.detail == "node older than 22.13"
        assert "--version" not in _verbs(stand_in)


def test_find_binary_node_script_without_node_is_unavailable(tmp_path: Path) -> None:
    launcher = tmp_path / "obelisk"
    launcher.write_text("#!/usr/bin/env node-missing-for-this-test\n")
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(ProviderUnavailable):
        find_binary(str(launcher), None)


@pytest.mark.parametrize("version_mode", ["garbage", "fail", "hang"])
def test_probe_cli_version_failure_is_unavailable(version_mode: str, stand_in: StandIn) -> None:
    stand_in.control(version_mode=version_mode, log_text="CANARY-OBELISK-7f3a")
    started = time.monotonic()
    with pytest.raises(ProviderUnavailable) as raised:
        probe_cli(find_binary(str(stand_in.executable), None), deadline=Deadline(1.0))
    assert time.monotonic() - started < 1.0 + 1.0
    assert "CANARY" not in str(raised.value)


def test_probe_cli_runs_once_per_installed_version(stand_in: StandIn) -> None:
    binary = find_binary(str(stand_in.executable), None)
    first = probe_cli(binary, deadline=Deadline(5))
    assert probe_cli(find_binary(str(stand_in.executable), None), deadline=Deadline(5)) == first
    assert _verbs(stand_in) == ["--version", "usage"]
    stand_in.control(version="0.3.0")
    stand_in.touch()
    assert (
        probe_cli(find_binary(str(stand_in.executable), None), deadline=Deadline(5)).version
        == "0.3.0"
    )
    assert _verbs(stand_in) == ["--version", "usage", "--version", "usage"]


def test_probe_cli_cache_file_is_private_and_reused(stand_in: StandIn, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    binary = find_binary(str(stand_in.executable), None)
    probe = probe_cli(binary, deadline=Deadline(5), cache_dir=cache_dir)
    clear_probe_cache()
    assert probe_cli(binary, deadline=Deadline(5), cache_dir=cache_dir) == probe
    assert _verbs(stand_in) == ["--version", "usage"]
    cache_file = cache_dir / CACHE_FILE
    assert stat.S_IMODE(cache_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
    assert str(stand_in.executable) not in cache_file.read_text()


def test_probe_cli_ignores_a_corrupt_cache_file(stand_in: StandIn, tmp_path: Path) -> None:
    (tmp_path / CACHE_FILE).write_text("{not json")
    probe = probe_cli(
        find_binary(str(stand_in.executable), None), deadline=Deadline(5), cache_dir=tmp_path
    )
    assert probe.version == "0.2.3"
    assert json.loads((tmp_path / CACHE_FILE).read_text())["schema"] == "obelisk_cli_probes_v1"


@pytest.mark.parametrize(
    ("helpers", "sandbox_node", "detail"),
    [
        ({**ALL_HELPERS, "sql": False}, None, "sandbox helpers sql/search missing"),
        ({**ALL_HELPERS, "search": False}, "22.14.0", "sandbox helpers sql/search missing"),
        (ALL_HELPERS, "20.11.1", "node older than 22.13"),
    ],
)
def test_remember_sandbox_rules_out_and_remembers(
    helpers: dict, sandbox_node: str | None, detail: str, stand_in: StandIn
) -> None:
    binary = find_binary(str(stand_in.executable), None)
    probe = probe_cli(binary, deadline=Deadline(5))
    with pytest.raises(ProviderUnavailable) as raised:
        remember_sandbox(binary, probe, helpers=helpers, sandbox_node=sandbox_node)
    assert raised.value.detail == detail
    with pytest.raises(ProviderUnavailable):
        probe_cli(binary, deadline=Deadline(5))
    assert _verbs(stand_in) == ["--version", "usage"]


def test_remember_sandbox_records_helpers(stand_in: StandIn) -> None:
    binary = find_binary(str(stand_in.executable), None)
    probe = probe_cli(binary, deadline=Deadline(5))
    updated = remember_sandbox(
        binary, probe, helpers={**ALL_HELPERS, "messages": False}, sandbox_node="22.14.0"
    )
    assert updated.helpers == ("failures", "fileHistory", "search", "sessions", "sql")
    assert probe_cli(binary, deadline=Deadline(5)) == updated
    assert isinstance(updated, CliProbe)
