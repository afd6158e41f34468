"""Run mypy over the product as the one package it installs as.

pyproject.toml maps the design card's top-level folders (contracts/, stages/, ...) into
obelisk_session_evidence with setuptools' package-dir; the editable install resolves that with an
import hook, which type checkers cannot follow. This builds the installed layout as a tree of
symlinks under build/mypy-tree, runs mypy on it with pyproject.toml's [tool.mypy] settings, and
prints findings under the repository's own paths. Exit code: mypy's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "mypy-tree"
PACKAGE = "obelisk_session_evidence"


def package_dirs() -> dict[str, str]:
    """Subpackage -> repository folder, as pyproject.toml's package-dir declares it."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return {name: folder for name, folder in setuptools["package-dir"].items() if name != PACKAGE}


def build_tree(mapping: dict[str, str]) -> dict[str, str]:
    """Link every entry of the package and every mapped folder; return tree path -> repository path."""
    shutil.rmtree(TREE, ignore_errors=True)
    top = TREE / PACKAGE
    top.mkdir(parents=True)
    for entry in (ROOT / PACKAGE).iterdir():
        if entry.name != "__pycache__":
            (top / entry.name).symlink_to(entry)
    rewrites = {f"{top.relative_to(ROOT)}/": f"{PACKAGE}/"}
    for name, folder in mapping.items():
        link = TREE / Path(*name.split("."))
        link.symlink_to(ROOT / folder)
        rewrites[f"{link.relative_to(ROOT)}/"] = f"{folder}/"
    return rewrites


def main() -> int:
    rewrites = build_tree(package_dirs())
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        *sys.argv[1:],
        os.path.relpath(TREE / PACKAGE, ROOT),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    for stream, text in ((sys.stdout, done.stdout), (sys.stderr, done.stderr)):
        for tree_path, repo_path in rewrites.items():
            text = text.replace(tree_path, repo_path)
        stream.write(text)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
