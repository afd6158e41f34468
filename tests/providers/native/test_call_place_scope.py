"""The Python twin of the call-place scope (`repository.foreign_place`, `scope.row_in_scope`): it
refuses a call in another repository's checkout on its own, without the SQL predicate."""

import dataclasses
import shutil
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.index.repository import foreign_place, repository_binding
from obelisk_session_evidence.providers.native.index.scope import row_in_scope, scope_filter
from obelisk_session_evidence.providers.native.index.store import connect, index_file
from tests.providers.native.test_call_places import _codex_answer, places
from tests.providers.native.test_copied_sessions import _row

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

__all__ = ["places"]  # the fixture, shared


def test_the_per_row_re_check_refuses_a_call_in_another_repository(tmp_path, places):
    """The SQL scope already leaves such a call out; the Python twin must refuse it on its own."""
    _codex_answer(tmp_path, places)
    binding = repository_binding([str(places["repo"])])
    connection = connect(index_file(tmp_path / "state" / "index"))
    try:
        foreign = connection.execute(
            "SELECT cwd, checkout_root, repository_identity FROM call_details WHERE cwd = ?", (str(places["other"]),)
        ).fetchone()
        own = connection.execute(
            "SELECT cwd, checkout_root, repository_identity FROM call_details WHERE cwd = ?",
            (str(places["worktree"]),),
        ).fetchone()
    finally:
        connection.close()
    assert foreign_place(binding, cwd=foreign[0], checkout_root=foreign[1], identity=foreign[2])
    assert not foreign_place(binding, cwd=own[0], checkout_root=own[1], identity=own[2])
    assert not foreign_place(binding, cwd="/tmp", checkout_root=None, identity=None)


def test_the_row_re_check_reads_the_call_place(places):
    binding = repository_binding([str(places["repo"])])
    scope = scope_filter({"claude": [Path("/h/a/claude")]}, binding)
    own = "/h/a/claude/-p/s.jsonl"
    row = dataclasses.replace(_row(own, (own,)), cwd=str(places["repo"]), checkout_root=str(places["repo"]))
    assert row_in_scope(row, scope, binding)
    linked = dataclasses.replace(row, call_cwd=str(places["worktree"]), call_checkout_root=str(places["repo"]))
    assert row_in_scope(linked, scope, binding)
    moved = dataclasses.replace(row, call_cwd=str(places["other"]), call_checkout_root=str(places["other"]))
    assert not row_in_scope(moved, scope, binding)
