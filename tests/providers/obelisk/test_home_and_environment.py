"""Where the operator's Obelisk keeps its index, what its process inherits, and the revision."""

import os
import subprocess
from pathlib import Path

import pytest

from fixtures.obelisk_stand_in import StandIn
from obelisk_session_evidence.lifecycle.enablement import EnableRequest, enable, status
from obelisk_session_evidence.providers.obelisk import ObeliskProvider
from obelisk_session_evidence.providers.obelisk.environment import (
    LOCALE_VARIABLES,
    child_environment,
    default_obelisk_home,
)
from obelisk_session_evidence.providers.obelisk.process import RUN_MARKER
from obelisk_session_evidence.state.paths import StatePaths
from tests.providers.obelisk.conftest import SPOTTER_ROOT, enablement_for, provider_for, request_for

CANARY = "CANARY-OBELISK-ENV-7a41"
LAUNCHER_VARIABLES = {"OBELISK_STANDIN_CONTROL", "PWD"}
"""Set by the stand-in's own `/bin/sh` launcher (the shell exports PWD), not by the adapter."""


def _spotter(stand_in: StandIn, work_dir: Path, **kwargs: object) -> ObeliskProvider:
    enablement = enablement_for(stand_in.home, roots=[SPOTTER_ROOT], sources=["claude"])
    return provider_for(stand_in, enablement, work_dir, **kwargs)


def test_a_canary_variable_never_reaches_the_cli(
    built: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    reports_before = len(built.reports())
    answer = _spotter(built, tmp_path / "work").search(request_for("node assets/build.js 2>&1"))
    assert answer.prior_calls
    runs = [entry for entry in built.reports()[reports_before:] if "env" in entry]
    assert [run["argv"][0] for run in runs] == ["--version", "--obelisk-session-evidence-usage-probe", "--query"]
    allowed = {"PATH", "HOME", "OBELISK_HOME", RUN_MARKER, *LOCALE_VARIABLES, *LAUNCHER_VARIABLES}
    for run in runs:
        assert CANARY not in repr(run["env"])
        assert {name for name in run["env"] if not name.startswith("LC_")} <= allowed
        assert run["env"]["LC_ALL"] == "C.UTF-8"
        assert run["env"]["OBELISK_HOME"] == str(built.home / ".obelisk")


def test_the_environment_is_documented_and_minimal(tmp_path: Path) -> None:
    caller = {"HOME": "/home/u", "PATH": "/usr/bin", "LANG": "de_DE.UTF-8", "GITHUB_TOKEN": CANARY, "TERM": "x"}
    assert child_environment(Path("/home/u/.obelisk"), caller) == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LANG": "de_DE.UTF-8",
        "OBELISK_HOME": "/home/u/.obelisk",
    }
    # An index kept elsewhere: Obelisk still reads the caller's sessions under the caller's HOME.
    assert child_environment(Path("/data/obelisk"), caller)["HOME"] == "/home/u"
    assert default_obelisk_home(caller) == Path("/home/u/.obelisk")
    assert default_obelisk_home({**caller, "OBELISK_HOME": "/srv/ob"}) == Path("/srv/ob")


def test_a_relative_state_folder_works(built: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """OBELISK_SESSION_EVIDENCE_HOME=rel/path: the query file is named absolutely, because Obelisk
    resolves it against its own working directory (the query folder)."""
    monkeypatch.chdir(tmp_path)
    provider = _spotter(built, Path("rel/state/obelisk-queries"), probe_cache_dir=Path("rel/state/cache"))
    answer = provider.search(request_for("node assets/build.js 2>&1"))
    assert answer.result.freshness == "fresh" and answer.prior_calls
    assert (tmp_path / "rel" / "state" / "obelisk-queries").is_dir()
    assert list((tmp_path / "rel" / "state" / "obelisk-queries").iterdir()) == []


def test_the_revision_is_stable_until_the_index_changes(stand_in: StandIn, tmp_path: Path) -> None:
    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    provider = _spotter(stand_in, tmp_path / "work")
    first = provider.search(request_for("Phoenix")).result.index_revision
    second = provider.search(request_for("telemetry")).result.index_revision
    assert first == second and first.startswith("obelisk-index:sha256:")
    short = next(stand_in.home.rglob("short.jsonl"))
    with short.open("a") as handle:
        handle.write(short.read_text().splitlines()[-1] + "\n")
    assert provider.search(request_for("Phoenix")).result.index_revision != second


def _enable(state: StatePaths, repo: Path, **options: object):
    request = EnableRequest(
        agent_ids=["agent-1"],
        project_ids=["proj-1"],
        repository_ids=["repo-1"],
        repo_roots=[repo],
        sources=["claude"],
        provider="obelisk",
        **options,
    )
    return enable(request, paths=state)


def test_enable_records_the_obelisk_home_and_status_says_whether_an_index_is_there(
    stand_in: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, repo = StatePaths(tmp_path / "state"), tmp_path / "repo"
    repo.mkdir()
    obelisk_home = stand_in.home / ".obelisk"
    outcome = _enable(state, repo, obelisk_bin=stand_in.executable, obelisk_home=obelisk_home)
    assert outcome.enablement.obelisk_home == str(obelisk_home)
    absent = status("proj-1", paths=state).scopes[0]
    assert (absent.reason_code, absent.index.reason_code, absent.index.usable) == (
        "index_absent",
        "index_absent",
        False,
    )
    assert absent.index.location == str(obelisk_home / "obelisk.sqlite")
    assert "obelisk --build" in absent.index.detail and f"HOME={stand_in.home}" in absent.index.detail
    assert not obelisk_home.exists(), "status never builds Obelisk's index"
    subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
    present = status("proj-1", paths=state).scopes[0]
    assert (present.index.reason_code, present.index.usable) == ("index_freshness_per_lookup", True)
    assert present.healthy


def test_enable_defaults_to_obelisks_own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state, repo = StatePaths(tmp_path / "state"), tmp_path / "repo"
    repo.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert _enable(state, repo).enablement.obelisk_home == str(tmp_path / "user" / ".obelisk")
    monkeypatch.setenv("OBELISK_HOME", str(tmp_path / "elsewhere"))
    assert _enable(state, repo).enablement.obelisk_home == str(tmp_path / "elsewhere")


def test_an_absent_index_at_the_configured_home_is_incomplete_without_a_query(built: StandIn, tmp_path: Path) -> None:
    """The stand-in's own index exists, but the operator's Obelisk keeps its index elsewhere."""
    elsewhere = tmp_path / "elsewhere-obelisk"
    provider = _spotter(built, tmp_path / "work", obelisk_home=elsewhere)
    queries_before = len(built.queries())
    answer = provider.search(request_for("node assets/build.js 2>&1"))
    assert (answer.result.freshness, answer.result.items, answer.prior_calls) == ("incomplete", [], [])
    assert len(built.queries()) == queries_before
    assert not os.path.exists(elsewhere)
