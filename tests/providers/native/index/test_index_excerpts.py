"""Snippet windows: bounded, around the hit, redacted, and tool calls readable by the comparators."""

import pytest

from obelisk_session_evidence.contracts.snippets import parse_tool_snippet
from obelisk_session_evidence.providers.native.index.excerpts import call_snippet, hit_span, needles_for, text_snippet

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"


def test_needles_for_orders_whole_terms_then_words_then_tokens():
    assert needles_for(["pytest tests/test_auth.py -x"]) == (
        "pytest tests/test_auth.py -x",
        "tests/test_auth.py",
        "pytest",
        "-x",
        "tests",
        "auth",
        "test",
        "py",
    )


def test_hit_span_is_case_insensitive():
    assert hit_span("Run PyTest now", ["pytest"]) == (4, 10)


def test_text_snippet_short_text_is_whole_and_uncut():
    assert text_snippet("short text", ["text"], 100) == ("short text", False)


@pytest.mark.parametrize("max_chars", [1, 10, 50, 200, 600])
def test_text_snippet_is_bounded_and_holds_the_hit(max_chars):
    text = "lorem ipsum " * 300 + "NEEDLE in the middle " + "dolor sit amet " * 300
    snippet, cut = text_snippet(text, ["needle"], max_chars)
    assert cut and len(snippet) <= max_chars
    if max_chars >= 50:
        assert "NEEDLE" in snippet and snippet.startswith("…") and snippet.endswith("…")


def test_text_snippet_redacts_before_cutting():
    text = "x " * 400 + f"the key {AWS_KEY} was used with needle " + "y " * 400
    snippet, _ = text_snippet(text, ["needle"], 120)
    assert AWS_KEY not in snippet and "[REDACTED:aws-access-key]" in snippet


def test_text_snippet_redacts_a_secret_straddling_the_window_edge():
    text = "needle " + "z" * 30 + f" {AWS_KEY} " + "tail " * 50
    snippet, _ = text_snippet(text, ["needle"], 45)
    assert "AKIA" not in snippet and "IOSFODNN" not in snippet


def test_text_snippet_redacts_a_long_private_key_block_whole():
    body = "\n".join("A" * 64 for _ in range(40))
    text = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\nneedle here"
    snippet, _ = text_snippet(text, ["needle"], 80)
    assert "AAAA" not in snippet


def test_call_snippet_reads_back_command_outcome_and_output():
    snippet, cut = call_snippet(
        "pytest   tests/test_auth.py -x", "exit 1", "FAILED test_login - 200 != 401", ["401"], 600
    )
    parsed = parse_tool_snippet(snippet)
    assert (parsed.command, parsed.outcome, parsed.exit_code) == ("pytest tests/test_auth.py -x", "exit", 1)
    assert parsed.output_excerpt == "FAILED test_login - 200 != 401"
    assert not cut


def test_call_snippet_windows_a_long_output_around_the_hit():
    output = "ok line\n" * 500 + "AssertionError: token expired\n" + "ok line\n" * 500
    snippet, cut = call_snippet("pytest -x", "exit 1", output, ["assertionerror"], 200)
    assert cut and len(snippet) <= 200
    assert "AssertionError" in parse_tool_snippet(snippet).output_excerpt


def test_call_snippet_cuts_a_long_command_but_keeps_the_outcome():
    command = "python -c " + "'x' " * 400
    snippet, cut = call_snippet(command, "exit 2", "", ["python"], 100)
    parsed = parse_tool_snippet(snippet)
    assert cut and len(snippet) <= 100
    assert parsed.command.endswith("…") and (parsed.outcome, parsed.exit_code) == ("exit", 2)


def test_call_snippet_without_room_for_the_outcome_reads_back_as_truncated():
    snippet, cut = call_snippet("pytest tests/test_auth.py -x", "exit 1", "", [], 8)
    parsed = parse_tool_snippet(snippet)
    assert cut and len(snippet) <= 8 and parsed.command_truncated and parsed.outcome == "unknown"


def test_call_snippet_redacts_the_command():
    snippet, _ = call_snippet(f"aws s3 ls --key {AWS_KEY}", "ok", "", [], 200)
    assert AWS_KEY not in snippet
