"""select_items: evidence types, opaque refs, snippets, limits and honest truncation counts."""

import pytest

from contracts.evidence import RequestLimits
from contracts.snippets import command_of_snippet, parse_tool_snippet
from providers.obelisk.answer import Counts, Helpers, TemplateAnswer
from providers.obelisk.items import opaque_ref, row_evidence_type, select_items


def _answer(rows: list, *, eligible: int | None = None, saturated: int = 0) -> TemplateAnswer:
    return TemplateAnswer(
        template="obelisk-session-evidence/1",
        helpers=Helpers(
            sql=True, search=True, sessions=True, fileHistory=True, failures=True, messages=False
        ),
        node=None,
        markers=[],
        rows=rows,
        counts=Counts(
            hits=len(rows),
            not_literal=0,
            out_of_scope=0,
            eligible=len(rows) if eligible is None else eligible,
            returned=len(rows),
            search_errors=0,
            saturated_terms=saturated,
            marker_lookup_failed=False,
            session_lookup_failed=False,
        ),
    )


@pytest.mark.parametrize(
    ("overrides", "evidence_type"),
    [
        ({}, "decision"),
        ({"role": "user"}, "decision"),
        ({"content_type": None}, "decision"),
        ({"is_meta": True}, None),
        ({"role": "system"}, None),
        ({"content_type": "thinking"}, None),
        ({"content_type": "image"}, None),
        ({"content_type": "summary"}, "summary"),
        ({"content_type": "compaction", "role": None}, "summary"),
        ({"content_type": "tool_use", "tool_name": "Bash", "exit_code": 1}, "prior_failure"),
        ({"content_type": "tool_result", "is_error": True}, "prior_failure"),
        (
            {"content_type": "function_call", "tool_name": "exec_command", "exit_code": 0},
            "tool_outcome",
        ),
        ({"content_type": "tool_use", "tool_name": "Bash"}, "tool_outcome"),
        ({"content_type": "tool_use", "tool_name": "Edit", "is_error": False}, "file_history"),
        ({"content_type": "custom_tool_call", "tool_name": "apply_patch"}, "file_history"),
        ({"content_type": "tool_use", "tool_name": "Write", "is_error": True}, "prior_failure"),
    ],
)
def test_row_evidence_type(overrides: dict, evidence_type: str | None, make_row) -> None:
    assert row_evidence_type(make_row(**overrides)) == evidence_type


def test_select_items_tool_snippet_reads_the_command_back(make_row, make_plan) -> None:
    row = make_row(
        content_type="tool_use",
        tool_name="Bash",
        exit_code=1,
        text="pytest -x tests/unit",
        text_chars=20,
    )
    (item,) = select_items(_answer([row]), make_plan(query_terms=["pytest -x"])).items
    assert item.evidence_type == "prior_failure"
    assert item.snippet == "$ pytest -x tests/unit\nexit 1"
    assert command_of_snippet(item.snippet) == "pytest -x tests/unit"


def test_select_items_tool_result_snippet_keeps_the_output(make_row, make_plan) -> None:
    row = make_row(
        content_type="tool_result",
        tool_name="Bash",
        is_error=True,
        text="FAILED retry",
        text_chars=12,
    )
    (item,) = select_items(_answer([row]), make_plan(query_terms=["retry"])).items
    assert item.snippet == "$ Bash\nerror\nFAILED retry"


def test_select_items_refs_are_digests_of_source_qualified_ids(
    make_row, make_plan, repo_root
) -> None:
    row = make_row(source="deepseek", session_source="deepseek", session_id="s-9", message_id="m-9")
    (item,) = select_items(_answer([row]), make_plan(query_terms=["retry"])).items
    assert item.session_ref == opaque_ref("session", "deepseek", "s-9")
    assert item.session_ref == opaque_ref("session", "dsh", "s-9")
    assert item.message_ref == opaque_ref("message", "deepseek", "s-9", "m-9")
    assert item.session_ref != opaque_ref("session", "claude", "s-9")
    assert repo_root not in item.model_dump_json().replace(item.snippet, "")


def test_select_items_filters_requested_types(make_row, make_plan) -> None:
    rows = [make_row(message_id="m-1"), make_row(message_id="m-2", content_type="summary")]
    selection = select_items(
        _answer(rows), make_plan(query_terms=["retry"], evidence_types=["summary"])
    )
    assert [item.evidence_type for item in selection.items] == ["summary"]
    assert (selection.truncated, selection.omitted_count) == (False, 0)


def test_select_items_drops_rows_that_do_not_contain_the_term(make_row, make_plan) -> None:
    rows = [
        make_row(message_id="m-1", text="no such words here", text_chars=18),
        make_row(message_id="m-2"),
    ]
    selection = select_items(_answer(rows), make_plan(query_terms=["retry"]))
    assert [item.message_ref for item in selection.items] == [
        opaque_ref("message", "claude", "s-1", "m-2")
    ]


@pytest.mark.parametrize(
    ("limits", "kept", "omitted"),
    [
        ({"max_items": 2}, 2, 3),
        ({"max_sessions": 1}, 2, 3),
        ({"max_total_chars": 70}, 2, 3),
        ({"max_items": 5}, 5, 0),
    ],
)
def test_select_items_applies_limits(
    limits: dict, kept: int, omitted: int, make_row, make_plan
) -> None:
    rows = [make_row(session_id=f"s-{index // 2}", message_id=f"m-{index}") for index in range(5)]
    bounds = {
        "max_sessions": 10,
        "max_items": 10,
        "max_snippet_chars": 400,
        "max_total_chars": 8000,
        **limits,
    }
    selection = select_items(
        _answer(rows), make_plan(query_terms=["retry"], limits=RequestLimits(**bounds))
    )
    assert len(selection.items) == kept
    assert selection.omitted_count == omitted
    assert selection.truncated is (omitted > 0)
    assert len({item.session_ref for item in selection.items}) <= bounds["max_sessions"]
    assert sum(len(item.snippet) for item in selection.items) <= bounds["max_total_chars"]


@pytest.mark.parametrize("max_chars", [1, 2, 3, 10, 25, 40])
def test_select_items_caps_snippets_around_the_term(max_chars: int, make_row, make_plan) -> None:
    text = "a" * 100 + " retry " + "b" * 100
    row = make_row(text=text, text_chars=len(text))
    plan = make_plan(
        query_terms=["retry"],
        limits=RequestLimits(
            max_sessions=10, max_items=10, max_snippet_chars=max_chars, max_total_chars=8000
        ),
    )
    selection = select_items(_answer([row]), plan)
    (item,) = selection.items
    assert len(item.snippet) <= max_chars
    assert selection.truncated is True
    if max_chars >= len("retry") + 2:
        assert "retry" in item.snippet


def test_select_items_marks_template_windows_as_cut(make_row, make_plan) -> None:
    row = make_row(text="the retry loop", text_chars=5000, window_start=100)
    selection = select_items(_answer([row]), make_plan(query_terms=["retry"]))
    assert selection.items[0].snippet == "…the retry loop…"
    assert selection.truncated is True


@pytest.mark.parametrize(
    ("eligible", "saturated", "omitted", "truncated"),
    [(1, 0, 0, False), (7, 0, 6, True), (1, 1, 0, True)],
)
def test_select_items_counts_what_the_template_cut(
    eligible: int, saturated: int, omitted: int, truncated: bool, make_row, make_plan
) -> None:
    selection = select_items(
        _answer([make_row()], eligible=eligible, saturated=saturated),
        make_plan(query_terms=["retry"]),
    )
    assert (selection.omitted_count, selection.truncated) == (omitted, truncated)


def test_select_items_ranks_rows_matching_more_terms_first(make_row, make_plan) -> None:
    rows = [make_row(message_id="m-1", rank=0), make_row(message_id="m-2", rank=5, terms=[0, 1])]
    selection = select_items(_answer(rows), make_plan(query_terms=["retry", "loop"]))
    assert selection.items[0].message_ref == opaque_ref("message", "claude", "s-1", "m-2")


@pytest.mark.parametrize(
    ("overrides", "command", "outcome", "failed"),
    [
        (
            {"content_type": "tool_use", "tool_name": "Bash", "exit_code": 2, "text": "make retry"},
            "make retry",
            "exit",
            True,
        ),
        (
            {
                "content_type": "tool_use",
                "tool_name": "Edit",
                "is_error": False,
                "text": "/r/retry.py",
            },
            "Edit /r/retry.py",
            "ok",
            False,
        ),
        (
            {"content_type": "tool_use", "tool_name": "Bash", "text": "retry.sh"},
            "retry.sh",
            "unknown",
            None,
        ),
        (
            {
                "content_type": "tool_result",
                "tool_name": "Bash",
                "is_error": True,
                "text": "retry failed",
            },
            "Bash",
            "error",
            True,
        ),
    ],
)
def test_select_items_tool_snippets_parse_back(
    overrides: dict, command: str, outcome: str, failed: bool | None, make_row, make_plan
) -> None:
    row = make_row(**overrides, text_chars=len(overrides["text"]))
    (item,) = select_items(_answer([row]), make_plan(query_terms=["retry"])).items
    parsed = parse_tool_snippet(item.snippet)
    assert parsed is not None
    assert (parsed.command, parsed.outcome, parsed.failed) == (command, outcome, failed)
