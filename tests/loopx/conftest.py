"""The adapter tests stand in for LoopX's obligation state: LoopX derives it in its Node runtime,
which these tests do not start (the conformance suite reads the real one through LoopX's CLI)."""

import pytest

from obelisk_session_evidence.loopx.loopx_state import NoLoopXObligation


@pytest.fixture(autouse=True)
def loopx_holds_no_obligation(monkeypatch):
    """LoopX holds no open Replan obligation for any goal: free text is a lookup of its own."""

    def none(**_):
        raise NoLoopXObligation("no LoopX run history for this goal and agent")

    monkeypatch.setattr("obelisk_session_evidence.loopx.scoped_lookup.loopx_situation", none)
