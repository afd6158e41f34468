"""A session file read a chunk at a time (`chunked`) is indexed exactly as when it is read in one go."""

from pathlib import Path
from typing import Any

import pytest

from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.parsers import default_roots, parse_session_file
from obelisk_session_evidence.qualify.session_writers import write_native_histories
from tests.providers.native.conftest import REAL_ROOTS, requires_real_corpus
from tests.reliability.index_dump import index_dump, open_plain

ONE_GO = 1 << 40
"""A chunk no session file reaches: every file is parsed in one go."""
_CALLS = (
    "SELECT f.path, e.uid, d.program, d.command_key, d.observed_epoch, d.paths FROM call_details d"
    " JOIN entries e ON e.id = d.entry_id JOIN files f ON f.id = e.file_id"
)
_CALL_SESSIONS = (
    "SELECT c.lane, c.value, f.path, s.session_id, c.newest_epoch FROM call_sessions c"
    " JOIN sessions s ON s.id = c.session_row JOIN files f ON f.id = s.file_id"
)


def _content(index: Path) -> dict[str, Any]:
    """Everything the index holds, without row ids or build times."""
    connection = open_plain(index)
    try:
        dump = index_dump(connection)
        return {
            "files": dump.files,
            "sessions": dump.sessions,
            "entries": dump.entries,
            "roots": dump.roots,
            "calls": sorted(connection.execute(_CALLS).fetchall(), key=repr),
            "call_sessions": sorted(connection.execute(_CALL_SESSIONS).fetchall(), key=repr),
            "vocabulary": connection.execute("SELECT term, doc, cnt FROM entry_vocab ORDER BY term").fetchall(),
        }
    finally:
        connection.close()


def _built(roots: dict[str, list[Path]], index_dir: Path, chunk_bytes: int) -> dict[str, Any]:
    report = refresh_index(index_file(index_dir), roots, chunk_bytes=chunk_bytes)
    assert report.files_failed == 0
    return _content(index_file(index_dir))


@pytest.fixture(scope="module")
def long_histories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """Every agent's sessions, 40 test rounds each (Claude files of about 40 KB)."""
    manifest = write_native_histories(tmp_path_factory.mktemp("long-histories"), rounds_per_session=40)
    return {source: [root] for source, root in default_roots(manifest.home).items()}


@pytest.mark.parametrize("chunk_bytes", [1, 4096])
def test_chunked_refresh_indexes_the_same_rows_as_one_go(
    long_histories: dict[str, list[Path]], tmp_path: Path, chunk_bytes: int
) -> None:
    # One byte: every line is its own chunk, the hardest case for what a chunk carries to the next.
    whole = _built(long_histories, tmp_path / "whole", ONE_GO)
    chunked = _built(long_histories, tmp_path / "chunked", chunk_bytes)
    assert whole["entries"] and whole["calls"]
    for table in whole:
        assert chunked[table] == whole[table], table


@requires_real_corpus
@pytest.mark.parametrize("chunk_bytes", [1, 4096])
def test_chunked_refresh_of_the_real_corpus_indexes_the_same_rows(tmp_path: Path, chunk_bytes: int) -> None:
    whole = _built(REAL_ROOTS, tmp_path / "whole", ONE_GO)
    chunked = _built(REAL_ROOTS, tmp_path / "chunked", chunk_bytes)
    for table in whole:
        assert chunked[table] == whole[table], table


def test_a_file_built_in_chunks_resumes_its_next_append(tmp_path: Path) -> None:
    # The cursor's prefix digest covers every chunk: the append is read alone, not the whole file again.
    manifest = write_native_histories(tmp_path / "histories", sessions_per_source=1, rounds_per_session=30)
    roots = {"claude": [default_roots(manifest.home)["claude"]]}
    target = manifest.for_source("claude")[0].path
    lines = target.read_bytes().splitlines(keepends=True)
    tail = b"".join(lines[-12:])
    target.write_bytes(b"".join(lines[:-12]))
    index = index_file(tmp_path / "chunked")
    refresh_index(index, roots, chunk_bytes=2048)
    with open(target, "ab") as grown:
        grown.write(tail)
    report = refresh_index(index, roots, chunk_bytes=2048)
    assert (report.files_appended, report.files_reread, report.bytes_read) == (1, 0, len(tail))
    assert _content(index) == _built(roots, tmp_path / "whole", ONE_GO)


def test_a_grown_file_is_read_in_chunks_from_its_cursor(tmp_path: Path) -> None:
    manifest = write_native_histories(tmp_path / "histories", sessions_per_source=1, rounds_per_session=30)
    roots = {"claude": [default_roots(manifest.home)["claude"]]}
    target = manifest.for_source("claude")[0].path
    lines = target.read_bytes().splitlines(keepends=True)
    target.write_bytes(b"".join(lines[:5]))
    index = index_file(tmp_path / "chunked")
    refresh_index(index, roots, chunk_bytes=512)
    target.write_bytes(b"".join(lines))  # in place: same inode, a long append
    report = refresh_index(index, roots, chunk_bytes=512)
    assert (report.files_appended, report.files_reread) == (1, 0)
    assert _content(index) == _built(roots, tmp_path / "whole", ONE_GO)


@pytest.mark.parametrize("source", ["claude", "codex", "pi"])
def test_max_bytes_stops_after_the_line_that_reaches_it(tmp_path: Path, source: SourceKind) -> None:
    manifest = write_native_histories(tmp_path, sessions_per_source=1, rounds_per_session=3)
    path = manifest.for_source(source)[0].path
    lengths = [len(line) for line in path.read_bytes().splitlines(keepends=True)]
    limit = lengths[0] + lengths[1] // 2  # inside the second line
    first = parse_session_file(path, source, max_bytes=limit)
    assert first.end_offset == lengths[0] + lengths[1]
    rest = parse_session_file(path, source, start_offset=first.end_offset, resume=first.resume, max_bytes=1)
    assert rest.end_offset == first.end_offset + lengths[2]
    everything = parse_session_file(path, source, max_bytes=sum(lengths) + 1)
    assert everything == parse_session_file(path, source)


def test_a_kimi_session_folder_is_read_whole_whatever_the_chunk(tmp_path: Path) -> None:
    manifest = write_native_histories(tmp_path / "histories", sessions_per_source=1, rounds_per_session=10)
    roots = {"kimi": [default_roots(manifest.home)["kimi"]]}
    assert _built(roots, tmp_path / "chunked", 1) == _built(roots, tmp_path / "whole", ONE_GO)


def test_an_append_read_in_chunks_reports_only_what_it_skipped(tmp_path: Path) -> None:
    # The report counts this refresh's skipped lines; the cursor keeps the file's total.
    manifest = write_native_histories(tmp_path / "histories", sessions_per_source=1, rounds_per_session=30)
    roots = {"claude": [default_roots(manifest.home)["claude"]]}
    target = manifest.for_source("claude")[0].path
    lines = target.read_bytes().splitlines(keepends=True)
    target.write_bytes(b"".join([*lines[:5], b"{not json\n", *lines[5:10]]))
    index = index_file(tmp_path / "chunked")
    assert refresh_index(index, roots, chunk_bytes=512).skipped_records == 1
    with open(target, "ab") as grown:
        grown.write(b"".join([*lines[10:], b"[1]\n"]))
    report = refresh_index(index, roots, chunk_bytes=512)
    assert (report.files_appended, report.skipped_records) == (1, 1)
    connection = open_plain(index)
    try:
        (stored,) = connection.execute("SELECT skipped_total FROM files").fetchone()
    finally:
        connection.close()
    assert stored == 2


def test_only_files_one_chunk_holds_are_parsed_ahead(long_histories: dict[str, list[Path]], tmp_path: Path) -> None:
    # A worker parses a file whole and hands it over whole: a longer one is read here, a chunk at a time.
    whole = _built(long_histories, tmp_path / "whole", ONE_GO)
    sizes = sorted(size for *_, size in _sizes(index_file(tmp_path / "whole")))
    chunk_bytes = sizes[len(sizes) // 2]
    report = refresh_index(index_file(tmp_path / "ahead"), long_histories, workers=1, chunk_bytes=chunk_bytes)
    assert report.parser_workers == 1
    assert report.files_parsed_ahead == sum(size <= chunk_bytes for size in sizes) < len(sizes)
    assert _content(index_file(tmp_path / "ahead")) == whole


def _sizes(index: Path) -> list[tuple[str, int]]:
    connection = open_plain(index)
    try:
        return connection.execute("SELECT path, size FROM files").fetchall()
    finally:
        connection.close()
