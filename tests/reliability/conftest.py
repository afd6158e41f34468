"""Reliability suite plumbing: every test here is marked `reliability`; print (and optionally write)
the figures the run collected."""

from pathlib import Path

import pytest

from tests.reliability.figures import FIGURES

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder belongs to the reliability suite (`make test-reliability`,
    `pytest -m reliability`), marked in its module or not."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.reliability)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One block of figures after the run; nothing when no reliability test recorded any."""
    if not FIGURES.cases:
        return
    figures = FIGURES.as_dict()
    terminalreporter.section("reliability figures")
    for name, value in figures.items():
        terminalreporter.write_line(f"{name}: {value}")
    FIGURES.write()
