"""The adapter tests stand in for LoopX's obligation state at LoopX's command line: LoopX derives it
in its Node runtime, which these tests do not start (the conformance suite reads the real one)."""

import pytest

from tests.loopx.helpers import NO_RUN_HISTORY, loopx_on_path


@pytest.fixture(autouse=True)
def loopx_holds_no_obligation(monkeypatch, tmp_path_factory):
    """LoopX holds no run history for any goal, so no open Replan obligation: free text is a lookup
    of its own."""
    loopx_on_path(monkeypatch, tmp_path_factory.mktemp("loopx"), NO_RUN_HISTORY)
