"""The distribution installs one import name, and every package of the source tree is in it."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
NAMESPACE = "obelisk_session_evidence"


def _source_packages() -> set[str]:
    found = set()
    for module, folder in SETUPTOOLS["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((module, *relative)))
    return found


def test_every_package_of_the_tree_is_listed():
    assert _source_packages() == set(SETUPTOOLS["packages"])


def test_only_one_top_level_import_name_is_installed():
    assert {name.split(".")[0] for name in SETUPTOOLS["packages"]} == {NAMESPACE}
    assert "fixtures" not in SETUPTOOLS["package-dir"]


def test_each_design_card_folder_maps_into_the_namespace():
    for folder in ("contracts", "stages", "comparators", "providers", "flows"):
        assert SETUPTOOLS["package-dir"][f"{NAMESPACE}.{folder}"] == folder
