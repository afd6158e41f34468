"""`index_status` and freshness: unknown, fresh, stale and incomplete, each for its own reason."""

import pytest

from obelisk_session_evidence.providers.native.index.refresh import refresh_index, refresh_locked
from obelisk_session_evidence.providers.native.index.repository import RepositoryBinding
from obelisk_session_evidence.providers.native.index.status import (
    index_freshness,
    index_status,
    scope_freshness,
    stored_freshness,
)
from obelisk_session_evidence.providers.native.index.store import index_file


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


ALPHA = RepositoryBinding(roots=("/work/alpha",), identities=(), url_keys=())


def _damaged(session) -> None:
    """Write the session with one torn (invalid JSON) line after its records."""
    path = session.write()
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"type": "user", "message": {"content": "torn\n')


@pytest.mark.parametrize(
    ("cwd", "freshness"),
    [
        ("/work/beta", "fresh"),  # a damaged file of another repository cannot hold this scope's rows
        ("/work/alpha-fork", "fresh"),  # nor one of a look-alike folder
        ("/work/alpha/src", "incomplete"),  # this repository's own damaged file counts
    ],
)
def test_scope_freshness_counts_damage_only_where_this_scope_can_live(
    fresh_index, tmp_path, transcript, cwd, freshness
):
    """Issue 13 item 8: one damaged file in another scope leaves this one fresh."""
    transcript("ok", "/work/alpha").user("fine").write()
    _damaged(transcript("damaged", cwd).user("before the tear"))
    refresh_locked(fresh_index, _roots(tmp_path))
    assert stored_freshness(fresh_index, _roots(tmp_path)) == "incomplete"  # the whole index is not whole
    assert scope_freshness(fresh_index, _roots(tmp_path), ALPHA) == freshness


def test_scope_freshness_counts_a_file_whose_sessions_are_unknown(fresh_index, tmp_path, transcript):
    """A file that never parsed, or whose session recorded no place, may hold anything: it counts."""
    transcript("ok", "/work/alpha").user("fine").write()
    (tmp_path / "claude" / "-work-beta" / "broken.jsonl").mkdir(parents=True)
    refresh_locked(fresh_index, _roots(tmp_path))
    assert scope_freshness(fresh_index, _roots(tmp_path), ALPHA) == "incomplete"


def test_scope_freshness_counts_a_vanished_file_of_this_repository_only(fresh_index, tmp_path, transcript):
    """A file indexed once, then turned into a dangling link, keeps its sessions: their place decides."""
    transcript("ok", "/work/alpha").user("fine").write()
    mine, theirs = (
        transcript("mine", "/work/alpha").user("x").write(),
        transcript("theirs", "/work/beta").user("y").write(),
    )
    refresh_locked(fresh_index, _roots(tmp_path))
    for path in (theirs, mine):
        path.unlink()
        path.symlink_to(tmp_path / "claude" / "nowhere")  # inside the root: a link leaving it is not counted
        refresh_locked(fresh_index, _roots(tmp_path))
        assert stored_freshness(fresh_index, _roots(tmp_path)) == "incomplete"
        assert scope_freshness(fresh_index, _roots(tmp_path), ALPHA) == ("fresh" if path == theirs else "incomplete")


def test_scope_freshness_is_unknown_and_incomplete_like_stored_freshness(fresh_index, tmp_path, transcript):
    transcript("ok", "/work/alpha").user("fine").write()
    assert scope_freshness(fresh_index, _roots(tmp_path), ALPHA) == "unknown"
    refresh_locked(fresh_index, _roots(tmp_path))
    assert scope_freshness(fresh_index, _roots(tmp_path), ALPHA) == "fresh"
