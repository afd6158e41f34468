"""Reliability suite plumbing: print (and optionally write) the figures the run collected."""

import pytest

from tests.reliability.figures import FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One block of figures after the run; nothing when no reliability test recorded any."""
    if not FIGURES.cases:
        return
    figures = FIGURES.as_dict()
    terminalreporter.section("reliability figures")
    for name, value in figures.items():
        terminalreporter.write_line(f"{name}: {value}")
    FIGURES.write()
