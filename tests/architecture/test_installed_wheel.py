"""The built wheel, installed into a fresh venv beside PyPI's `fixtures` and PyContracts (import name
`contracts`), runs the product's commands: nothing of ours shadows those packages, nothing of theirs
shadows ours, and the data `qualify` reads ships inside the wheel.

Kept fast: the fresh venv is made without pip and reaches the dev venv's third-party packages
through a `.pth` file (the `site` module appends a path line to `sys.path`; the `.pth` files of
that folder are not run, so the editable install's import hook stays off and our code can only
come from the wheel). Only the wheel and the two PyPI packages are installed into it, with
`--no-deps --ignore-installed`, so pip neither resolves the product's dependencies again nor
touches anything outside the fresh venv. Building the wheel takes setuptools from the index
(`[build-system]`), and the two PyPI packages come from the index; pip's cache serves repeats.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path
from typing import Final

import pytest

from fixtures.shared import REAL_CORPUS
from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY, situation
from obelisk_session_evidence.contracts.base import TRIGGERS
from obelisk_session_evidence.providers.native.parsers import default_roots
from obelisk_session_evidence.qualify.session_writers import write_native_histories

ROOT = Path(__file__).resolve().parents[2]
PYPI_NEIGHBOURS: Final = ("fixtures==4.3.2", "PyContracts==1.8.12")
"""PyPI distributions whose import names (`fixtures`, `contracts`) are also folder names here."""
INSTALLED_COMMANDS: Final = (
    ("run",),
    ("qualify",),
    ("index", "refresh"),
    ("enable",),
    ("replay",),
)
"""Commands whose `--help` the installed console script must print."""
_TIMEOUT: Final = 300


class Installed:
    """The fresh venv holding the wheel; runs its console script under one state folder."""

    def __init__(self, venv: Path, work: Path) -> None:
        self.python = venv / "bin" / "python"
        self.cli = venv / "bin" / "obelisk-session-evidence"
        self.site_packages = Path(
            subprocess.check_output(
                [self.python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True
            ).strip()
        )
        self.work = work
        self.env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        self.env["OBELISK_SESSION_EVIDENCE_HOME"] = str(work / "state")

    def run(self, *args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run a program of the venv from a folder outside the checkout (no source tree on sys.path)."""
        return subprocess.run(
            [str(arg) for arg in args],
            cwd=self.work,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
        )


def _pip(python: Path, *args: str | Path) -> None:
    done = subprocess.run(
        [python, "-m", "pip", "--disable-pip-version-check", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-4000:]


def _source_copy(target: Path) -> Path:
    """What the wheel is built from, copied: the build writes `build/` and `*.egg-info` beside it."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    folders = set(pyproject["tool"]["setuptools"]["package-dir"].values())
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in sorted(folders):
        shutil.copytree(ROOT / folder, target / folder, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    return target


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("installed-wheel")
    wheels = base / "wheels"
    _pip(Path(sys.executable), "wheel", "--no-deps", "--quiet", "--wheel-dir", wheels, _source_copy(base / "src"))
    (wheel,) = wheels.glob("obelisk_session_evidence-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=_TIMEOUT)
    installed = Installed(venv, base / "work")
    installed.work.mkdir()
    # After the venv's own site-packages on sys.path: what is installed into the venv wins.
    (installed.site_packages / "zz_dev_site_packages.pth").write_text(
        "\n".join(dict.fromkeys((sysconfig.get_path("purelib"), sysconfig.get_path("platlib")))) + "\n"
    )
    _pip(installed.python, "install", "--no-deps", "--ignore-installed", "--quiet", wheel, *PYPI_NEIGHBOURS)
    return installed


_OWNERS = """
import importlib.metadata as metadata, importlib.util, json, sys
from pathlib import Path

def owner(module):
    origin = Path(importlib.util.find_spec(module).origin).resolve()
    for dist in metadata.distributions():
        if any(Path(str(f.locate())).resolve() == origin for f in dist.files or () if f.name == origin.name):
            return dist.metadata["Name"].lower()
    return None

ours = metadata.distribution("obelisk-session-evidence")
print(json.dumps({
    "owners": {name: owner(name) for name in sys.argv[1:]},
    "our_top_level": sorted({f.parts[0] for f in ours.files if f.parts[0] != ".." and not f.parts[0].endswith(".dist-info")}),
    "our_location": str(Path(importlib.util.find_spec("obelisk_session_evidence").origin).parent),
}))
"""


def test_pypi_fixtures_and_contracts_are_theirs_and_ours_is_one_name(installed: Installed) -> None:
    modules = ("fixtures", "contracts", "obelisk_session_evidence", "obelisk_session_evidence.contracts.config")
    done = installed.run(installed.python, "-c", _OWNERS, *modules)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["owners"] == {
        "fixtures": "fixtures",
        "contracts": "pycontracts",
        "obelisk_session_evidence": "obelisk-session-evidence",
        "obelisk_session_evidence.contracts.config": "obelisk-session-evidence",
    }
    assert report["our_top_level"] == ["obelisk_session_evidence"]
    assert Path(report["our_location"]).is_relative_to(installed.site_packages)
    # PyPI's fixtures imports and is the testing-fixtures library (PyContracts 1.8 no longer imports on 3.11+).
    usable = installed.run(installed.python, "-c", "import fixtures; print(fixtures.Fixture.__module__)")
    assert usable.stdout.strip() == "fixtures.fixture", usable.stderr


@pytest.mark.parametrize("command", INSTALLED_COMMANDS, ids=" ".join)
def test_installed_command_prints_its_help(installed: Installed, command: tuple[str, ...]) -> None:
    done = installed.run(installed.cli, *command, "--help")
    assert done.returncode == 0, done.stderr
    assert "Example: obelisk-session-evidence " + " ".join(command) in done.stdout


def test_installed_run_decides_a_situation_from_indexed_history(installed: Installed) -> None:
    manifest = write_native_histories(installed.work / "histories", seed=7, sessions_per_source=2)
    roots = default_roots(manifest.home)
    situation_file = installed.work / "situation.json"
    situation_file.write_text(json.dumps(situation(situation_id="installed-repeat-failure")))
    scope = ["--agent-id", FIXTURE_AGENT, "--project-id", FIXTURE_PROJECT, "--repository-id", FIXTURE_REPOSITORY]
    source_roots = [arg for source, path in roots.items() for arg in ("--source-root", f"{source}={path}")]
    triggers = [arg for trigger in TRIGGERS for arg in ("--trigger", trigger)]  # named: past the promotion gate
    enable = [
        "enable",
        "--surface",
        "replan-history",
        *scope,
        "--repo-root",
        manifest.repo_root,
        *source_roots,
        *triggers,
    ]
    enabled = installed.run(installed.cli, *enable, "--format", "json")
    assert enabled.returncode == 0, enabled.stdout + enabled.stderr
    index_roots = [arg for source, path in roots.items() for arg in ("--root", f"{source}={path}")]
    refreshed = installed.run(installed.cli, "index", "refresh", *index_roots, "--format", "json")
    assert refreshed.returncode == 0, refreshed.stdout + refreshed.stderr
    decided = installed.run(installed.cli, "run", "--situation", situation_file, "--format", "json")
    assert decided.returncode == 0, decided.stdout + decided.stderr
    decision = json.loads(decided.stdout)
    assert decision["admission"]["admitted"] is True
    assert decision["comparison"]["verdict"] == "repeats_prior_failure"
    replayed = installed.run(installed.cli, "replay", "--format", "json")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    report = json.loads(replayed.stdout)
    assert report["schema_version"] == "replay_report_v0" and report["total"]["calls"] > 0


@pytest.mark.skipif(not REAL_CORPUS.is_dir(), reason=f"real corpus not present at {REAL_CORPUS}")
def test_installed_qualify_reads_its_cases_from_the_wheel_and_the_corpus_from_the_environment(
    installed: Installed,
) -> None:
    smoke = ["qualify", "--out", "qualification", "--per-family", "1", "--format", "json"]
    done = installed.run(installed.cli, *smoke, env={"SESSION_EVIDENCE_REAL_CORPUS": str(REAL_CORPUS)})
    assert done.returncode in (0, 2), done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["real_cases"] > 0 and summary["cases"] > 0
    assert (installed.work / "qualification" / "report.md").is_file()
