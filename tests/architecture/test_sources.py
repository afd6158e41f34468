"""Every history source is wired everywhere a source matters, and a source that is not fails loudly.

The per-source tests are parametrised over `SOURCE_KINDS`, so a sixth name gets every one of them;
the last tests add a sixth source the way a newcomer would (to a copy of the package) and watch
the product refuse to import until it is wired, instead of reading nothing from it.
"""

import shutil
import subprocess
import sys
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from click.testing import CliRunner

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.cli.index import parse_roots
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.sources import SOURCE_KINDS, SOURCES, SourceKind, source_named
from obelisk_session_evidence.providers.invoking_session import is_host_session
from obelisk_session_evidence.providers.native.index.scan import scan_root
from obelisk_session_evidence.providers.native.parsers import (
    PARSER_MODULES,
    default_roots,
    detect_source,
    iter_session_paths,
    parse_session_file,
)
from obelisk_session_evidence.providers.obelisk.plan import OBELISK_SOURCE
from obelisk_session_evidence.qualify.session_writers import SOURCES as WRITTEN_SOURCES
from obelisk_session_evidence.qualify.session_writers import FixtureManifest, write_native_histories

ROOT = Path(__file__).resolve().parents[2]
SIXTH: SourceKind = cast(SourceKind, "cursor")
"""A source name the code does not know, passed where a `SourceKind` is expected."""


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> FixtureManifest:
    return write_native_histories(tmp_path_factory.mktemp("sources"), sessions_per_source=1, rounds_per_session=1)


def test_each_source_has_exactly_one_spec_and_the_specs_do_not_collide() -> None:
    assert tuple(SOURCES) == SOURCE_KINDS
    assert all(spec.kind == kind for kind, spec in SOURCES.items())
    markers = [marker for spec in SOURCES.values() for marker in spec.home_markers]
    assert len(markers) == len(set(markers))
    obelisk_names = [spec.obelisk_name for spec in SOURCES.values()]
    assert len(obelisk_names) == len(set(obelisk_names))  # Obelisk's name maps back to one source


@pytest.mark.parametrize("source", SOURCE_KINDS)
def test_each_source_is_found_scanned_detected_and_parsed(history: FixtureManifest, source: SourceKind) -> None:
    spec = SOURCES[source]
    root = history.home.joinpath(*spec.data_folder, *spec.sessions_folder)
    written = sorted(str(path) for path in history.paths(source))
    assert written, "the session writers write no history for this source"
    found = [str(path) for path in iter_session_paths(root, source)]
    state, units = scan_root(root, source)
    assert sorted(found) == written
    assert state == "indexed" and [unit.path for unit in units] == sorted(found)
    for path in found:
        assert detect_source(Path(path)) == source
        outcome = parse_session_file(Path(path), source)
        assert {session.source for session in outcome.sessions} == {source}
        assert outcome.messages or outcome.tool_calls


@pytest.mark.parametrize("source", SOURCE_KINDS)
def test_each_source_has_a_default_root_that_its_own_variable_moves(
    source: SourceKind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = SOURCES[source]
    if spec.data_env is not None:
        monkeypatch.delenv(spec.data_env, raising=False)
    assert default_roots(tmp_path)[source] == tmp_path.joinpath(*spec.data_folder, *spec.sessions_folder)
    if spec.data_env is not None:
        monkeypatch.setenv(spec.data_env, str(tmp_path / "moved"))
        assert default_roots(tmp_path)[source] == tmp_path.joinpath("moved", *spec.sessions_folder)


@pytest.mark.parametrize("source", SOURCE_KINDS)
def test_each_source_is_named_alike_by_every_surface(source: SourceKind, tmp_path: Path) -> None:
    assert source_named(source) == source
    assert OBELISK_SOURCE[source] == SOURCES[source].obelisk_name
    assert is_host_session(f"host-session:{source}:thread-1")
    assert any(module.endswith(f".{source}") for module in PARSER_MODULES)
    assert source in WRITTEN_SOURCES
    assert parse_roots((f"{source}={tmp_path}",)) == {source: [tmp_path]}
    enablement = _enablement(sources=list(SOURCE_KINDS), source_roots={source: str(tmp_path)})
    assert enablement.source_roots == {source: str(tmp_path)}


def test_the_enable_command_offers_every_source() -> None:
    result = CliRunner().invoke(main, ["enable", "--help"])
    assert result.exit_code == 0
    assert all(source in result.output for source in SOURCE_KINDS)


def test_a_source_the_code_does_not_know_is_refused_not_read_as_another(tmp_path: Path) -> None:
    (tmp_path / "wd" / "s1").mkdir(parents=True)
    (tmp_path / "wd" / "s1" / "session.jsonl").write_text("{}\n")  # a DSH layout: was read as DSH
    with pytest.raises(AssertionError):
        list(iter_session_paths(tmp_path, SIXTH))
    with pytest.raises(AssertionError):
        scan_root(tmp_path, SIXTH)  # was 'indexed' with no units
    with pytest.raises(KeyError):
        parse_session_file(tmp_path / "wd" / "s1" / "session.jsonl", SIXTH)
    assert source_named("cursor") is None
    assert not is_host_session("host-session:cursor:thread-1")


def _enablement(**fields: Any) -> Enablement:
    scope = {"agent_id": "agent", "project_id": "project", "repository_id": "repo", "repo_roots": ["/repo"]}
    return Enablement(surface="replan-history", enabled_at=datetime(2026, 11, 29, 10, tzinfo=UTC), **scope, **fields)


# A sixth source, added to a copy of the package the way a newcomer would.

_NAMES = ", ".join(f'"{kind}"' for kind in SOURCE_KINDS)
_LITERAL = f"SourceKind = Literal[{_NAMES}]"
_SIXTH_LITERAL = f'SourceKind = Literal[{_NAMES}, "cursor"]'
_SIXTH_SPEC = """
        case "cursor":
            return SourceSpec(
                kind,
                title="Cursor",
                home_markers=(".cursor",),
                data_folder=(".cursor",),
                data_env=None,
                sessions_folder=("sessions",),
                obelisk_name="cursor",
                obelisk_folder_depth=None,
                host_surface_prefix="cursor",
            )
        case _:"""
_DERIVED = """
from typing import get_args
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.situation import HOST_SESSION_PATTERN
from obelisk_session_evidence.contracts.sources import SourceKind
import re
from datetime import UTC, datetime
assert re.fullmatch(HOST_SESSION_PATTERN, "host-session:cursor:thread-1")
six = [*get_args(SourceKind)]
assert six[-1] == "cursor"
Enablement(surface="replan-history", agent_id="a", project_id="p", repository_id="r",
           enabled_at=datetime.now(UTC), sources=six, source_roots={"cursor": "/c"})
print("derived")
"""


def _package_copy(target: Path, sources_text: str) -> Path:
    """The installed layout (pyproject's package-dir) in `target`, with `contracts/sources.py` replaced."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    ignore = shutil.ignore_patterns("__pycache__")
    for package, folder in sorted(pyproject["tool"]["setuptools"]["package-dir"].items()):
        shutil.copytree(ROOT / folder, target.joinpath(*package.split(".")), ignore=ignore)
    (target / "obelisk_session_evidence" / "contracts" / "sources.py").write_text(sources_text, encoding="utf-8")
    return target


def _import_in(copy: Path, code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` with the copy first on sys.path (the working folder), never the checkout."""
    check = f"import obelisk_session_evidence as o; assert o.__file__.startswith({str(copy)!r}), o.__file__\n"
    return subprocess.run([sys.executable, "-c", check + code], cwd=copy, capture_output=True, text=True, timeout=120)


def test_a_sixth_source_named_without_its_spec_or_its_behaviour_stops_the_import(tmp_path: Path) -> None:
    original = (ROOT / "contracts" / "sources.py").read_text(encoding="utf-8")
    assert original.count(_LITERAL) == 1 and original.count("\n        case _:") == 1

    named_only = _package_copy(tmp_path / "named", original.replace(_LITERAL, _SIXTH_LITERAL))
    done = _import_in(named_only, "import obelisk_session_evidence.contracts.sources")
    assert done.returncode != 0 and "AssertionError" in done.stderr and "'cursor'" in done.stderr

    specified = original.replace(_LITERAL, _SIXTH_LITERAL).replace("\n        case _:", _SIXTH_SPEC, 1)
    with_spec = _package_copy(tmp_path / "specified", specified)
    derived = _import_in(with_spec, _DERIVED)
    assert derived.returncode == 0 and derived.stdout.strip() == "derived", derived.stderr
    unwired = _import_in(with_spec, "import obelisk_session_evidence.providers.native.parsers")
    assert unwired.returncode != 0 and "AssertionError" in unwired.stderr and "'cursor'" in unwired.stderr
