"""query_plan: the allowlist and the enablement, checked before any process starts."""

from datetime import UTC, datetime

import pytest

from contracts.errors import ScopeViolation, UnsupportedOption
from contracts.evidence import HistoricalEvidenceRequest, RequestScope
from providers.obelisk.plan import query_plan, repository_roots


def test_query_plan_maps_sources_and_roots(make_plan, repo_root: str) -> None:
    plan = make_plan()
    assert plan.sources == ("claude", "codex", "deepseek")
    assert plan.roots == (repo_root,)
    assert plan.terms == ("pytest -x tests/unit", "retry")


@pytest.mark.parametrize(
    "options",
    [
        {"cross_agent": True},
        {"limit": 5},
        {"after": "yesterday"},
        {"after": "2026-08-01T00:00:00"},
        {"after": "2026-08-02T00:00:00+00:00", "before": "2026-08-01T00:00:00+00:00"},
        {"max_index_age_s": 0},
        {"max_index_age_s": True},
        {"max_index_age_s": "600"},
    ],
)
def test_query_plan_rejects_options(options: dict, make_plan) -> None:
    with pytest.raises(UnsupportedOption):
        make_plan(options=options)


def test_query_plan_window_rounds_inward_to_milliseconds(make_plan) -> None:
    plan = make_plan(
        options={
            "after": datetime(2026, 8, 1, 0, 0, 0, 1500, tzinfo=UTC),
            "before": "2026-08-02T00:00:00.0009+00:00",
        }
    )
    assert (plan.after_iso, plan.before_iso) == (
        "2026-08-01T00:00:00.002Z",
        "2026-08-02T00:00:00.000Z",
    )


def test_query_plan_rejects_unvalidated_request(make_request, enablement) -> None:
    bad = HistoricalEvidenceRequest.model_construct(
        **{**dict(make_request()), "query_terms": ["x" * (1024 * 1024)]}
    )
    with pytest.raises(UnsupportedOption) as raised:
        query_plan(bad, enablement=enablement, options={})
    assert "x" * 10 not in str(raised.value)


def test_query_plan_rejects_unknown_request_fields(make_request, enablement) -> None:
    bad = HistoricalEvidenceRequest.model_construct(**dict(make_request()))
    object.__setattr__(bad, "__pydantic_extra__", {"allow_foreign_archive": True})
    with pytest.raises(UnsupportedOption):
        query_plan(bad, enablement=enablement, options={})


def test_query_plan_rejects_non_request(enablement) -> None:
    with pytest.raises(UnsupportedOption):
        query_plan({"request_id": "x"}, enablement=enablement, options={})  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["agent_id", "project_id", "repository_id"])
def test_query_plan_rejects_scope_other_than_enabled(field: str, make_plan) -> None:
    scope = {
        "agent_id": "agent-1",
        "project_id": "proj-1",
        "repository_id": "repo-1",
        field: "other",
    }
    with pytest.raises(ScopeViolation):
        make_plan(scope=RequestScope(**scope))


def test_query_plan_rejects_enablement_without_roots(make_request, enablement) -> None:
    with pytest.raises(ScopeViolation):
        query_plan(
            make_request(), enablement=enablement.model_copy(update={"repo_roots": []}), options={}
        )


@pytest.mark.parametrize(
    ("roots", "normalised"),
    [
        (["/a/b/"], ("/a/b",)),
        (["/a//b", "/a/b"], ("/a/b",)),
        (["/a/./b/../c"], ("/a/c",)),
        (["//a"], ("/a",)),
    ],
)
def test_repository_roots(roots: list[str], normalised: tuple[str, ...]) -> None:
    assert repository_roots(roots) == normalised


@pytest.mark.parametrize("roots", [["/"], ["/a/.."], ["relative"]])
def test_repository_roots_refuses_unusable_roots(roots: list[str]) -> None:
    with pytest.raises(ScopeViolation):
        repository_roots(roots)
