"""The collector pause of short commands leaves the collector as it found it."""

import gc
import json

import pytest

from obelisk_session_evidence.cli.collection import collection_paused


@pytest.fixture
def collector_restored():
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_the_block_runs_without_the_collector_and_it_resumes_after(collector_restored):
    gc.enable()
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_in_the_block_still_resumes_the_collector(collector_restored):
    gc.enable()
    with pytest.raises(RuntimeError), collection_paused():
        raise RuntimeError("inside")
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled(collector_restored):
    gc.disable()
    with collection_paused():
        pass
    assert not gc.isenabled()


def test_an_in_process_run_leaves_the_collector_enabled(collector_restored, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from fixtures.situations import situation
    from obelisk_session_evidence.cli import main

    monkeypatch.setenv("OBELISK_SESSION_EVIDENCE_HOME", str(tmp_path / "home"))
    (tmp_path / "situation.json").write_text(json.dumps(situation()))
    gc.enable()
    result = CliRunner().invoke(main, ["run", "--situation", str(tmp_path / "situation.json"), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"admission"' in result.output
    assert gc.isenabled()
