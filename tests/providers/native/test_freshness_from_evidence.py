"""Freshness from evidence (issue 26 item 2): inside the refresh window a lookup checks its scope's
files with one `stat` pass; a change is refreshed (or reported `stale`), never answered `fresh`
from what the index held before it."""

import shutil

import pytest

from obelisk_session_evidence.providers.native.index.status import index_status
from obelisk_session_evidence.providers.native.index.store import index_file, writer_lock
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from tests.providers.native.index.transcripts import ClaudeTranscript
from tests.providers.native.test_provider import _enablement, _request

HOUR = 3600.0
TERMS = ["make build", "make deploy"]


@pytest.fixture
def session(tmp_path):
    transcript = ClaudeTranscript(tmp_path / "claude", "s", "/work/alpha")
    transcript.bash("make build", "ok").write()
    return transcript


def _provider(tmp_path) -> NativeIndexProvider:
    """A provider whose refresh window never passes during a test."""
    return NativeIndexProvider(
        tmp_path / "index", _enablement(source_roots={"claude": str(tmp_path / "claude")}), refresh_window_s=HOUR
    )


def test_a_failure_appended_inside_the_window_is_found(tmp_path, session):
    provider = _provider(tmp_path)
    first = provider.search(_request(TERMS)).result
    session.bash("make deploy", "error: deploy target missing", exit_code=1).write()
    after = provider.search(_request(TERMS)).result
    assert (len(first.items), len(after.items), after.freshness) == (1, 2, "fresh")
    assert "prior_failure" in {item.evidence_type for item in after.items}
    assert after.index_revision != first.index_revision


def test_a_change_another_process_is_refreshing_is_stale_inside_the_window(tmp_path, session):
    provider = _provider(tmp_path)
    provider.search(_request(TERMS))
    session.bash("make deploy", "error: deploy target missing", exit_code=1).write()
    with writer_lock(index_file(tmp_path / "index"), wait_s=0):
        during = provider.search(_request(TERMS)).result
    assert (len(during.items), during.freshness) == (1, "stale")
    assert index_status(index_file(tmp_path / "index"), roots={"claude": [tmp_path / "claude"]}).freshness == "stale"


def test_a_session_folder_moved_back_inside_the_window_is_found_again(tmp_path, session):
    provider = _provider(tmp_path)
    folder = session.path.parent
    provider.search(_request(TERMS))
    shutil.move(folder, tmp_path / "parked")
    gone = provider.search(_request(TERMS)).result
    shutil.move(tmp_path / "parked", folder)
    back = provider.search(_request(TERMS)).result
    assert (len(gone.items), len(back.items), back.freshness) == (0, 1, "fresh")


def test_a_missing_sessions_root_inside_the_window_is_not_fresh(tmp_path, session):
    provider = _provider(tmp_path)
    assert provider.search(_request(TERMS)).result.freshness == "fresh"
    shutil.move(tmp_path / "claude", tmp_path / "elsewhere")
    assert provider.search(_request(TERMS)).result.freshness == "incomplete"


def test_an_unchanged_scope_inside_the_window_is_fresh_without_a_refresh(tmp_path, session):
    provider = _provider(tmp_path)
    first = provider.search(_request(TERMS)).result
    refreshed = index_status(index_file(tmp_path / "index")).last_refresh_at
    again = provider.search(_request(TERMS)).result
    assert (again.freshness, again.index_revision) == ("fresh", first.index_revision)
    assert index_status(index_file(tmp_path / "index")).last_refresh_at == refreshed
