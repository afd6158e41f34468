"""Folder listings are reused only while a folder is unchanged and not racily recent."""

import os
import time

from obelisk_session_evidence.providers.native.index.listings import Listings, load_listings, save_listings
from obelisk_session_evidence.providers.native.index.refresh import refresh_locked
from obelisk_session_evidence.providers.native.index.store import atomic

OLD_NS = 1_600_000_000 * 10**9
LATER_NS = 3 * 10**9


def _age(*folders) -> None:
    for folder in folders:
        os.utime(folder, ns=(OLD_NS, OLD_NS))


def test_listings_reuse_an_unchanged_old_folder(tmp_path):
    (tmp_path / "a.jsonl").write_text("x")
    (tmp_path / "sub").mkdir()
    _age(tmp_path)
    first = Listings(now_ns=time.time_ns())
    entries, _ = first.entries(str(tmp_path))
    assert sorted((e.name, e.is_folder) for e in entries) == [("a.jsonl", False), ("sub", True)]
    # `utime` moved the folder's ctime to now: the next refresh comes after the racy window.
    second = Listings(stored=dict(first.updated), now_ns=time.time_ns() + LATER_NS)
    again, _ = second.entries(str(tmp_path))
    assert sorted((e.name, e.is_folder) for e in again) == [("a.jsonl", False), ("sub", True)]
    assert second.updated == {}, "the stored listing was reused, not listed again"


def test_listings_list_a_changed_or_racily_recent_folder_again(tmp_path):
    _age(tmp_path)
    first = Listings(now_ns=time.time_ns())
    first.entries(str(tmp_path))
    (tmp_path / "new.jsonl").write_text("x")  # moves the folder's mtime to now
    second = Listings(stored=dict(first.updated), now_ns=time.time_ns())
    assert [e.name for e in second.entries(str(tmp_path))[0]] == ["new.jsonl"]
    assert str(tmp_path) in second.updated


def test_save_listings_forgets_folders_no_longer_seen(fresh_index, tmp_path):
    listings = Listings(now_ns=time.time_ns())
    listings.entries(str(tmp_path))
    with atomic(fresh_index):
        save_listings(fresh_index, listings, [str(tmp_path)])
    assert set(load_listings(fresh_index, now_ns=0).stored) == {str(tmp_path)}
    with atomic(fresh_index):
        save_listings(fresh_index, Listings(stored=load_listings(fresh_index, now_ns=0).stored), [str(tmp_path)])
    assert load_listings(fresh_index, now_ns=0).stored == {}


def test_refresh_with_cached_listings_still_sees_appends_new_and_deleted_files(fresh_index, transcript, tmp_path):
    roots = {"claude": [tmp_path / "claude"]}
    kept = transcript("kept")
    kept.user("first").write()
    gone = transcript("gone").user("to delete").write()
    _age(tmp_path / "claude", kept.path.parent)
    refresh_locked(fresh_index, roots)
    refresh_locked(fresh_index, roots)  # now from stored listings
    kept.user("appended").write()
    report = refresh_locked(fresh_index, roots)
    assert (report.files_appended, report.files_unchanged) == (1, 1)
    gone.unlink()
    transcript("new").user("brand new").write()
    report = refresh_locked(fresh_index, roots)
    assert (report.files_deleted, report.files_added) == (1, 1)
