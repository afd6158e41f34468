"""`index_status` and freshness: unknown, fresh, stale and incomplete, each for its own reason."""

from providers.native.index.refresh import refresh_index, refresh_locked
from providers.native.index.status import index_freshness, index_status, stored_freshness
from providers.native.index.store import index_file


def _roots(tmp_path):
    return {"claude": [tmp_path / "claude"]}


def test_index_status_without_an_index(tmp_path):
    status = index_status(index_file(tmp_path / "index"))
    assert (status.exists, status.freshness, status.index_revision, status.files) == (False, "unknown", "unknown", 0)
    assert not (tmp_path / "index").exists()


def test_index_status_counts_what_the_refresh_wrote(tmp_path, transcript):
    transcript().user("a decision").bash("make test", "boom", exit_code=2).write()
    path = index_file(tmp_path / "index")
    report = refresh_index(path, _roots(tmp_path))
    status = index_status(path)
    assert (status.files, status.sessions, status.messages, status.tool_calls, status.failures) == (1, 1, 1, 1, 0)
    assert (status.freshness, status.index_revision) == ("fresh", report.index_revision)
    assert status.size_bytes > 0 and status.last_refresh_at is not None
    assert [(root.source, root.state, root.files) for root in status.roots] == [("claude", "indexed", 1)]


def test_index_freshness_is_stale_after_a_change_and_fresh_again_after_refresh(fresh_index, tmp_path, transcript):
    session = transcript()
    session.user("one").write()
    assert index_freshness(fresh_index, _roots(tmp_path)) == "unknown"
    refresh_locked(fresh_index, _roots(tmp_path))
    assert index_freshness(fresh_index, _roots(tmp_path)) == "fresh"
    session.user("two").write()
    assert index_freshness(fresh_index, _roots(tmp_path)) == "stale"
    assert stored_freshness(fresh_index, _roots(tmp_path)) == "fresh"
    refresh_locked(fresh_index, _roots(tmp_path))
    assert index_freshness(fresh_index, _roots(tmp_path)) == "fresh"


def test_index_freshness_is_incomplete_with_a_failed_file(fresh_index, tmp_path, transcript):
    transcript().user("fine").write()
    (tmp_path / "claude" / "-x" / "broken.jsonl").mkdir(parents=True)
    refresh_locked(fresh_index, _roots(tmp_path))
    assert index_freshness(fresh_index, _roots(tmp_path)) == "incomplete"


def test_index_freshness_is_unknown_for_a_root_never_refreshed(fresh_index, tmp_path, transcript):
    transcript().user("fine").write()
    refresh_locked(fresh_index, _roots(tmp_path))
    assert index_freshness(fresh_index, {"claude": [tmp_path / "claude"], "codex": [tmp_path / "codex"]}) == "unknown"
