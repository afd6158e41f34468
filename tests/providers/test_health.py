import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.lifecycle.enablement import enable, status
from obelisk_session_evidence.providers.health import index_health, provider_health
from obelisk_session_evidence.providers.obelisk.discovery import clear_probe_cache
from obelisk_session_evidence.state.paths import state_paths
from tests.lifecycle.helpers import enable_request, populate

STAND_IN = """#!/bin/sh
case "$1" in
  --version) echo "{version}" ;;
  *) echo "usage: obelisk [--build] [--search TEXT --limit N] [--query FILE]" >&2; exit 1 ;;
esac
"""


@pytest.fixture(autouse=True)
def fresh_probes():
    clear_probe_cache()
    yield
    clear_probe_cache()


def _stand_in(tmp_path, version="0.2.3"):
    path = populate(tmp_path / "bin", {"obelisk": STAND_IN.format(version=version).encode()}) / "obelisk"
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _enablement(**overrides):
    return Enablement(
        surface="replan-history",
        agent_id="agent-fixture",
        project_id="project-fixture",
        repository_id="repo-fixture",
        enabled_at=datetime(2026, 11, 29, tzinfo=UTC),
        **overrides,
    )


def test_provider_health_obelisk_available_names_cli_version(tmp_path):
    health = provider_health(state_paths().index_dir, _enablement(provider="obelisk", obelisk_bin=_stand_in(tmp_path)))
    assert (health.state, health.reason_code) == ("available", "provider_available")
    assert health.provider_version.endswith("obelisk-cli/0.2.3 template/3")


@pytest.mark.parametrize(
    "binary",
    [pytest.param("/nonexistent/obelisk", id="missing"), pytest.param("garbage", id="bad-version")],
)
def test_provider_health_obelisk_unavailable(tmp_path, binary):
    path = binary if binary.startswith("/") else _stand_in(tmp_path, version="not a version")
    health = provider_health(state_paths().index_dir, _enablement(provider="obelisk", obelisk_bin=path))
    assert (health.state, health.provider_version, health.reason_code) == ("unavailable", None, "provider_unavailable")


def _obelisk_home(tmp_path):
    """A folder holding an Obelisk index file (status only checks that it is there)."""
    return populate(tmp_path / "obelisk-home", {"obelisk.sqlite": b"index"})


def test_index_health_obelisk_is_reported_per_lookup(tmp_path):
    home = _obelisk_home(tmp_path)
    index = index_health(state_paths().index_dir, _enablement(provider="obelisk", obelisk_home=str(home)))
    assert (index.freshness, index.usable, index.reason_code) == ("unknown", True, "index_freshness_per_lookup")
    assert index.location == str(home / "obelisk.sqlite")


def test_index_health_obelisk_without_an_index_names_the_build_command(tmp_path):
    index = index_health(state_paths().index_dir, _enablement(provider="obelisk", obelisk_home=str(tmp_path)))
    assert (index.freshness, index.usable, index.reason_code) == ("incomplete", False, "index_absent")
    assert "obelisk --build" in index.detail


def test_status_obelisk_available_is_healthy(tmp_path):
    request = enable_request(provider="obelisk", obelisk_bin=_stand_in(tmp_path), obelisk_home=_obelisk_home(tmp_path))
    enable(request, paths=state_paths())
    report = status("project-fixture", paths=state_paths())
    assert (report.healthy, report.reason_code) == (True, "healthy")
    assert report.scopes[0].index.freshness == "unknown"


def test_status_obelisk_missing_is_unhealthy_with_reason():
    outcome = enable(enable_request(provider="obelisk", obelisk_bin=Path("/nonexistent/obelisk")), paths=state_paths())
    assert outcome.provider.state == "unavailable"
    report = status("project-fixture", paths=state_paths())
    assert (report.healthy, report.reason_code) == (False, "provider_unavailable")


def test_provider_health_native_is_available_with_its_version():
    health = provider_health(state_paths().index_dir, _enablement())
    assert (health.kind, health.state, health.reason_code) == ("native", "available", "provider_available")
    assert health.provider_version.endswith("native-index/1")


def test_index_health_native_absent_index_is_not_usable():
    index = index_health(state_paths().index_dir, _enablement())
    assert (index.freshness, index.usable, index.reason_code, index.index_revision) == (
        "unknown",
        False,
        "index_absent",
        None,
    )
