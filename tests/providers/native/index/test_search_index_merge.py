"""A refresh that read again or removed a fifth of the index's files, over one or several complete
refreshes, ends by merging the full-text index: the rows it removed stay in FTS5 as delete
markers until their segments merge, and every lookup pays for them (on the bench's 1M-message
index read again whole, counting a common word's rows cost 300 ms instead of 1-2 ms)."""

import shutil
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.index.refresh import refresh_locked
from obelisk_session_evidence.providers.native.parsers import default_roots


@pytest.fixture
def roots(generated, tmp_path) -> dict:
    home = Path(shutil.copytree(generated.home, tmp_path / "home", symlinks=True))
    return {source: [root] for source, root in default_roots(home).items()}


def _pages(connection) -> int:
    """FTS5's stored pages: their count grows with every segment of new and removed rows."""
    (pages,) = connection.execute("SELECT count(*) FROM entry_text_data").fetchone()
    return pages


def _read_again(connection, share: float) -> int:
    """Make the next refresh read `share` of the index's files again; returns how many."""
    ids = [file_id for (file_id,) in connection.execute("SELECT id FROM files ORDER BY id")]
    chosen = ids[: max(1, int(len(ids) * share))]
    connection.executemany("UPDATE files SET signature = '', prefix_digest = NULL WHERE id = ?", [(i,) for i in chosen])
    connection.execute("DELETE FROM meta WHERE key = 'last_complete_scan'")
    return len(chosen)


def test_a_refresh_that_read_every_file_again_leaves_the_index_merged(fresh_index, roots):
    refresh_locked(fresh_index, roots)
    built = _pages(fresh_index)
    _read_again(fresh_index, 1.0)
    assert refresh_locked(fresh_index, roots).files_reread > 0
    assert _pages(fresh_index) <= built


def test_files_read_again_over_several_refreshes_count_together(fresh_index, roots):
    refresh_locked(fresh_index, roots)
    built = _pages(fresh_index)
    _read_again(fresh_index, 0.1)
    refresh_locked(fresh_index, roots)
    assert _pages(fresh_index) > built  # a tenth read again: not merged yet
    _read_again(fresh_index, 0.1)
    refresh_locked(fresh_index, roots)
    assert _pages(fresh_index) <= built  # a fifth in all: merged
