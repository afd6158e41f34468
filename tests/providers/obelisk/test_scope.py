"""verify_scope: every row is checked again; one row outside rejects the whole answer."""

from datetime import UTC, datetime

import pytest

from contracts.errors import ScopeViolation
from providers.obelisk.scope import path_under_roots, row_in_scope, row_moment, verify_scope

ROOTS = ("/work/repo",)


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        ("/work/repo", True),
        ("/work/repo/", True),
        ("/work/repo/src/app.py", True),
        ("/work/repo/.worktrees/feature-x", True),
        ("/work/repo//src", True),
        ("/work/repo/./src", True),
        ("/work/repo2", False),
        ("/work/repo-other/src", False),
        ("/work", False),
        ("/work/repo/../other", False),
        ("/work/repo/../repo/src", True),
        ("work/repo/src", False),
        ("", False),
        ("/work/repo\x00/x", False),
    ],
)
def test_path_under_roots(path: str, inside: bool) -> None:
    assert path_under_roots(path, ROOTS) is inside


def test_row_in_scope_accepts_a_row_of_the_agent_in_the_repository(make_row, make_plan) -> None:
    assert row_in_scope(make_row(), make_plan())


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({"source": "kimi", "session_source": "kimi"}, id="source-not-bound"),
        pytest.param({"source": "dsh", "session_source": "dsh"}, id="loopx-name-not-obelisk-name"),
        pytest.param({"session_source": "codex"}, id="session-source-differs"),
        pytest.param({"cwd": "/elsewhere/other-repo"}, id="cwd-outside"),
        pytest.param({"project_path": "/elsewhere/other-repo"}, id="project-path-outside"),
        pytest.param({"cwd": None, "project_path": None}, id="no-path-at-all"),
        pytest.param({"cwd": "relative/path", "project_path": None}, id="relative-path"),
    ],
)
def test_row_in_scope_rejects(overrides: dict, make_row, make_plan) -> None:
    assert not row_in_scope(make_row(**overrides), make_plan())


def test_row_in_scope_accepts_deepseek_for_dsh(make_row, make_plan) -> None:
    assert row_in_scope(make_row(source="deepseek", session_source="deepseek"), make_plan())


def test_row_in_scope_accepts_cwd_only(make_row, make_plan, repo_root: str) -> None:
    assert row_in_scope(make_row(project_path=None, cwd=repo_root + "/src"), make_plan())


WINDOW = {"after": "2026-08-01T00:00:00+00:00", "before": "2026-08-02T00:00:00+00:00"}


@pytest.mark.parametrize(
    ("timestamp", "inside"),
    [
        ("2026-08-01T09:00:00.000Z", True),
        ("2026-08-01T00:00:00.000Z", True),
        ("2026-08-02T00:00:00.000Z", True),
        ("2026-08-02T00:00:00.001Z", False),
        ("2026-07-31T23:59:59.999Z", False),
        (1785574800000, True),
        (1785574800, True),
        (None, False),
        ("yesterday", False),
    ],
)
def test_row_in_scope_window(timestamp: object, inside: bool, make_row, make_plan) -> None:
    assert row_in_scope(make_row(timestamp=timestamp), make_plan(options=WINDOW)) is inside


def test_verify_scope_rejects_whole_answer_for_one_row(make_row, make_plan) -> None:
    rows = [make_row(message_id=f"m-{n}") for n in range(5)] + [make_row(cwd="/elsewhere")]
    with pytest.raises(ScopeViolation) as raised:
        verify_scope(rows, make_plan())
    assert raised.value.detail == "1 returned row(s) outside the requested scope"


@pytest.mark.parametrize(
    ("value", "moment"),
    [
        ("2026-08-01T09:00:00.123456Z", datetime(2026, 8, 1, 9, 0, 0, 123000, tzinfo=UTC)),
        ("2026-08-01T11:00:00+02:00", datetime(2026, 8, 1, 9, tzinfo=UTC)),
        ("2026-08-01T09:00:00", datetime(2026, 8, 1, 9, tzinfo=UTC)),
        (1785574800123, datetime(2026, 8, 1, 9, 0, 0, 123000, tzinfo=UTC)),
        (True, None),
        ("", None),
    ],
)
def test_row_moment(value: object, moment: datetime | None) -> None:
    assert row_moment(value) == moment
