"""Every command (and sub-command) answers `--help` with an example and is in the README."""

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from obelisk_session_evidence.cli import COMMANDS, main

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _command_paths() -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = []
    context = click.Context(main)
    for name in COMMANDS:
        command = main.get_command(context, name)
        if isinstance(command, click.Group):
            paths.extend((name, sub) for sub in command.list_commands(context))
        else:
            paths.append((name,))
    return paths


@pytest.mark.parametrize("path", _command_paths(), ids=" ".join)
def test_help_has_an_example(path):
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0
    assert re.search(rf"Example: obelisk-session-evidence {' '.join(path)}\b", result.output), result.output


@pytest.mark.parametrize("path", _command_paths(), ids=" ".join)
def test_command_is_in_the_readme(path):
    assert f"`{' '.join(path)}" in README or f"obelisk-session-evidence {' '.join(path)}" in README
