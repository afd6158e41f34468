"""Evidence typing of the normalised records."""

import dataclasses

import pytest

from fixtures.shared import REAL_CORPUS_SOURCES
from obelisk_session_evidence.providers import failure_causes
from obelisk_session_evidence.providers.native.parsers import ResumeState, parse_session_file
from obelisk_session_evidence.providers.native.parsers._sink import RecordSink
from obelisk_session_evidence.providers.native.records import MessageRecord, SummaryRecord, ToolCallRecord
from tests.providers.native.conftest import REAL_CORPUS, real_files, requires_real_corpus


@pytest.mark.parametrize(
    ("name", "is_error", "exit_code", "expected"),
    [
        ("Bash", None, 1, "prior_failure"),
        ("Bash", False, 0, "tool_outcome"),
        ("Bash", True, None, "prior_failure"),
        ("exec_command", None, None, "tool_outcome"),
        ("Edit", False, None, "file_history"),
        ("Edit", True, None, "prior_failure"),
        ("apply_patch", False, 0, "file_history"),
        ("apply_patch", True, None, "prior_failure"),
        ("read", False, None, "file_history"),
        ("ReadFile", False, None, "file_history"),
        ("StrReplaceFile", None, None, "file_history"),
        ("Grep", False, None, "tool_outcome"),
        (None, None, 2, "prior_failure"),
        (None, None, None, "tool_outcome"),
    ],
)
def test_tool_call_evidence_type(name: str | None, is_error: bool | None, exit_code: int | None, expected: str) -> None:
    call = ToolCallRecord("s", "c", name, is_error=is_error, exit_code=exit_code)
    assert call.evidence_type == expected


@pytest.mark.parametrize(
    ("role", "text", "is_meta", "expected"),
    [
        ("user", "Use the strict comparison.", False, "decision"),
        ("assistant", "I'll keep validation in auth.py.", False, "decision"),
        ("user", "<system-reminder>x</system-reminder>", True, None),
        ("assistant", "   ", False, None),
    ],
)
def test_message_evidence_type(role: str, text: str, is_meta: bool, expected: str | None) -> None:
    message = MessageRecord("s", "u", role, None, text, is_meta)  # type: ignore[arg-type]
    assert message.evidence_type == expected


def test_summary_evidence_type() -> None:
    assert SummaryRecord("s", "compaction", "text").evidence_type == "summary"


def test_records_are_frozen_and_slotted() -> None:
    call = ToolCallRecord("s", "c", "Bash")
    with pytest.raises(AttributeError):
        call.exit_code = 1  # type: ignore[misc]
    assert not hasattr(call, "__dict__")


def test_an_outcome_joined_to_a_call_keeps_every_other_field_of_the_call() -> None:
    """`RecordSink.record_outcome` builds the joined call field by field: a field it forgot would be lost."""
    known = ToolCallRecord(**{field.name: f"known-{field.name}" for field in dataclasses.fields(ToolCallRecord)})
    sink = RecordSink("claude", ResumeState(open_calls=(known,)), fallback_session_id=known.session_id)
    sink.record_outcome(known.call_id, is_error=True, exit_code=2)
    sink.record_outcome(known.call_id, output="the outcome")
    (joined,) = sink.outcome(end_offset=0, resumable=True).tool_calls
    assert joined == dataclasses.replace(known, is_error=True, exit_code=2, output_excerpt="the outcome")


class _Unread:
    """A pattern that must not be read."""

    def search(self, *_args, **_kwargs):
        raise AssertionError("a success summary was read for the evidence type")


@pytest.mark.parametrize(
    ("output", "evidence_type", "outcome"),
    [
        ("= 3 passed in 0.2s =", "tool_outcome", "succeeded"),
        ("= 1 failed, 2 passed in 0.3s =", "prior_failure", "failed"),
    ],
)
def test_a_masked_pipelines_evidence_type_reads_its_failure_summary_only(
    monkeypatch, output: str, evidence_type: str, outcome: str
) -> None:
    call = ToolCallRecord("s", "c", "Bash", "pytest -q | tail -3", exit_code=0, is_error=False, output_excerpt=output)
    assert call.outcome == outcome
    monkeypatch.setattr(failure_causes, "MASKED_SUCCESS", _Unread())
    assert call.evidence_type == evidence_type


@requires_real_corpus
def test_every_real_call_is_a_prior_failure_exactly_when_its_outcome_is_failed() -> None:
    calls = [
        call
        for path in real_files("*/**/*.json*")
        if path.relative_to(REAL_CORPUS).parts[0] in REAL_CORPUS_SOURCES
        for call in parse_session_file(path, REAL_CORPUS_SOURCES[path.relative_to(REAL_CORPUS).parts[0]]).tool_calls
    ]
    assert len(calls) > 1000
    assert all((call.evidence_type == "prior_failure") == (call.outcome == "failed") for call in calls)
