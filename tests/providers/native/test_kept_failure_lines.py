"""A long output cut at parse time keeps the lines of its middle that bear a failure (issue 25):
the cause read back from the index names the files the runner reported there."""

import json
import logging
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fixtures.shared import REAL_CORPUS_SOURCES
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.failure_causes import (
    CATALOGUE,
    MASKED_FAILURE,
    call_outcome,
    failure_cause,
    failure_lines,
)
from obelisk_session_evidence.providers.native.index.integrity import mark_writing, seal
from obelisk_session_evidence.providers.native.index.store import INDEX_FILE_NAME, atomic, connect
from obelisk_session_evidence.providers.native.parsers import _text, iter_session_paths, parse_session_file
from obelisk_session_evidence.providers.native.parsers._text import (
    EXCERPT_HALF,
    KEPT_LINE_CHARS,
    KEPT_MIDDLE_CHARS,
    KEPT_MIDDLE_LINES,
    excerpt,
)
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.stages.pipeline import PipelineDependencies, run_pipeline
from tests.providers.native.conftest import REAL_CORPUS, requires_real_corpus
from tests.providers.native.index.transcripts import ClaudeTranscript
from tests.providers.test_failure_causes import CAUSES, OUTCOMES
from tests.stages.helpers import enabled_policy, situation_model

_MARK = re.compile(r"\n\[… (\d+) characters omitted …\]\n")
CONSOLE_NOISE = "".join(f"[db] migrated fixture table_{n} in 3ms\n" for n in range(80))
BUN_PASSES = "".join(f"(pass) lexer > reads token {n} [0.04ms]\n" for n in range(70))
BUN_SUMMARY = "".join(f"(pass) writer > emits {n} [0.02ms]\n" for n in range(60)) + (
    "\n 1218 pass\n 1 fail\n 3120 expect() calls\nRan 1219 tests across 88 files. [4.21s]\n"
)
BUN_OUTPUT = (
    "bun test v1.3.5 (1e86cebd)\n\n"
    + CONSOLE_NOISE
    + "\nsrc/a.test.ts:\n"
    + BUN_PASSES
    + "(fail) parser > reads x [0.31ms]\n"
    + BUN_PASSES
    + "\nsrc/b.test.ts:\n"
    + BUN_SUMMARY
)
TSC_OUTPUT = (
    "> app@1.0.0 check\n> tsc --noEmit --pretty false\n\n"
    + CONSOLE_NOISE
    + "src/lib/parse.ts(12,5): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.\n"
    + CONSOLE_NOISE
    + "npm error Lifecycle script `check` failed with error:\nnpm error code 2\n"
    + "".join(f"npm error path /work/alpha/packages/p{n}\n" for n in range(30))
)
BIOME_OUTPUT = (
    "> biome check .\n\n"
    + CONSOLE_NOISE
    + "src/ui/button.tsx:3:5 lint/suspicious/noExplicitAny ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\n\n"
    + "  × Unexpected any. Specify a different type.\n"
    + CONSOLE_NOISE
    + "".join(f"Checked chunk {n} of the workspace, nothing else to report here.\n" for n in range(40))
    + "Checked 212 files in 61ms. No fixes applied.\nFound 1 error.\n"
)


def _enablement(root: Path) -> Enablement:
    return Enablement(
        surface="replan-history",
        agent_id="agent-a",
        project_id="project-a",
        repository_id="repo-a",
        repo_roots=["/work/alpha"],
        sources=["claude"],
        source_roots={"claude": str(root)},
        enabled_at=datetime(2026, 11, 29, tzinfo=UTC),
    )


def _prior_call(tmp_path: Path, command: str, output: str, exit_code: int) -> PriorToolCall:
    """The prior call the native provider builds for one Claude Code Bash call written to a session."""
    root = tmp_path / "claude"
    ClaudeTranscript(root, "s1", "/work/alpha").bash(command, output, exit_code=exit_code).write()
    request = HistoricalEvidenceRequest(
        request_id="req-1",
        situation_id="situation-1",
        trigger="replan_repetition",
        scope={"agent_id": "agent-a", "project_id": "project-a", "repository_id": "repo-a"},
        evidence_types=["prior_failure", "tool_outcome"],
        query_terms=[command],
        limits={"max_sessions": 5, "max_items": 5, "max_snippet_chars": 600, "max_total_chars": 6000},
    )
    answer = NativeIndexProvider(tmp_path / "index", _enablement(root)).search(request)
    (call,) = [call for call in answer.prior_calls if call.command == command]
    return call


def _head_and_tail(text: str) -> str:
    """The excerpt the parsers kept before issue 25: head, one mark, tail."""
    omitted = len(text) - 2 * EXCERPT_HALF
    return f"{text[:EXCERPT_HALF]}\n[… {omitted} characters omitted …]\n{text[-EXCERPT_HALF:]}"


def test_a_bun_failure_in_the_middle_names_its_test_file(tmp_path):
    assert BUN_OUTPUT.index("(fail)") > EXCERPT_HALF + 1000 and len(BUN_OUTPUT) - BUN_OUTPUT.index("(fail)") > 3000
    call = _prior_call(tmp_path, "bun test", BUN_OUTPUT, 1)
    assert call.outcome == "failed" and call.output_truncated
    assert call.cause is not None and call.cause.kind == "test_failed"
    assert "src/a.test.ts" in call.cause.subjects
    # The header of the file after it (no failure there) is not kept.
    assert "src/b.test.ts" not in call.cause.subjects


@pytest.mark.parametrize(
    ("command", "output", "kind", "subject"),
    [
        ("npm run check", TSC_OUTPUT, "compile_error", "src/lib/parse.ts"),
        ("bunx biome check .", BIOME_OUTPUT, "format_or_lint_refused", "src/ui/button.tsx"),
    ],
)
def test_a_compiler_or_linter_diagnostic_in_the_middle_names_its_file(tmp_path, command, output, kind, subject):
    before = failure_cause(command, exit_code=1, output=_head_and_tail("Exit code 1\n" + output))
    assert subject not in before.subjects  # what the head and tail alone named
    call = _prior_call(tmp_path, command, output, 1)
    assert call.cause is not None and (call.cause.kind, subject in call.cause.subjects) == (kind, True)


def _parsed_bash_excerpt(root: Path, output: str, *, exit_code: int) -> str | None:
    ClaudeTranscript(root, "s1", "/work/alpha").bash("bun test", output, exit_code=exit_code).write()
    (path,) = iter_session_paths(root, "claude")
    (call,) = parse_session_file(path, "claude").tool_calls
    return call.output_excerpt


def test_an_output_without_failure_lines_keeps_exactly_its_head_and_tail(tmp_path):
    middle = "".join(f"console.error is mocked in test {n}; nothing failed\n" for n in range(200))
    text = CONSOLE_NOISE + middle + CONSOLE_NOISE
    assert "error" in text[EXCERPT_HALF:-EXCERPT_HALF]  # failure words, but no line a pattern matches
    assert excerpt(text) == _head_and_tail(text)
    parsed = _parsed_bash_excerpt(tmp_path, text, exit_code=1)
    assert parsed == _head_and_tail(f"Exit code 1\n{text}")


def test_a_read_or_a_success_keeps_its_head_and_tail_whatever_its_middle(tmp_path):
    """A file's content is no failure of the call; a plain success's cause is never read."""
    root = tmp_path / "claude"
    session = ClaudeTranscript(root, "s1", "/work/alpha")
    session.call("Read", {"file_path": "/work/alpha/bun.log"}, BUN_OUTPUT)
    session.bash("bun test", BUN_OUTPUT, exit_code=0)
    session.bash("bun test 2>&1 || true", BUN_OUTPUT, exit_code=0).write()
    (path,) = iter_session_paths(root, "claude")
    read, plain, masked = parse_session_file(path, "claude").tool_calls
    assert read.output_excerpt == plain.output_excerpt == _head_and_tail(BUN_OUTPUT)
    # `|| true` hid the status: the middle's failure lines are kept, and its summary says it failed.
    assert masked.output_excerpt != _head_and_tail(BUN_OUTPUT) and masked.outcome == "failed"


def test_the_kept_lines_are_marked_as_a_cut_whose_counts_add_up():
    text = "Exit code 1\n" + BUN_OUTPUT
    kept = excerpt(text)
    assert kept is not None and kept.startswith(text[:EXCERPT_HALF]) and kept.endswith(text[-EXCERPT_HALF:])
    middle = kept[EXCERPT_HALF : len(kept) - EXCERPT_HALF]
    lines = _MARK.sub("\n", middle).strip("\n").split("\n")
    assert lines == ["src/a.test.ts:", "(fail) parser > reads x [0.31ms]"]
    marks = [int(count) for count in _MARK.findall(middle + "\n")]
    assert len(marks) == 3 and all(count > 0 for count in marks)
    # What the marks count and what the lines show is the whole middle (newlines between them aside).
    omitted = len(text) - 2 * EXCERPT_HALF
    assert omitted - len(lines) <= sum(marks) + sum(map(len, lines)) <= omitted


def test_a_pathological_output_stays_within_the_bound():
    text = "".join(f"(fail) suite {n} > src/file_{n}.test.ts fails: error TS{n}\n" for n in range(100_000))
    kept = excerpt(text)
    assert kept is not None
    assert len(kept) <= 2 * EXCERPT_HALF + 40 + KEPT_MIDDLE_CHARS
    middle = kept[EXCERPT_HALF : len(kept) - EXCERPT_HALF]
    lines = [line for line in _MARK.sub("\n", middle).split("\n") if line]
    assert 0 < len(lines) <= KEPT_MIDDLE_LINES and all(len(line) <= KEPT_LINE_CHARS for line in lines)
    assert "(fail) suite " in middle


def test_a_long_line_is_cut_and_a_repeated_one_kept_once():
    line = "src/deep/module.ts(1,1): error TS2304: Cannot find name " + "x" * 1000
    text = CONSOLE_NOISE * 2 + f"{line}\n" + CONSOLE_NOISE + f"{line}\n" + CONSOLE_NOISE * 2
    kept = excerpt(text)
    assert kept is not None and kept.count("src/deep/module.ts(1,1)") == 1
    assert line[:KEPT_LINE_CHARS] in kept and line[: KEPT_LINE_CHARS + 1] not in kept


def test_a_codex_output_keeps_its_failure_lines_after_its_status_header(tmp_path):
    path = tmp_path / "rollout-2026-01-01T00-00-00-00000000-0000-4000-a000-000000000003.jsonl"
    call = {"type": "function_call", "name": "exec_command", "call_id": "c1"}
    call["arguments"] = json.dumps({"cmd": "bun test"})
    output = {"type": "function_call_output", "call_id": "c1"}
    output["output"] = f"Chunk ID: 1\nWall time: 4.2 seconds\nProcess exited with code 1\nOutput:\n{BUN_OUTPUT}"
    records = [
        {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": {"id": "rollout"}},
        {"timestamp": "2026-01-01T00:00:01.000Z", "type": "response_item", "payload": call},
        {"timestamp": "2026-01-01T00:00:02.000Z", "type": "response_item", "payload": output},
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    (parsed,) = parse_session_file(path, "codex").tool_calls
    assert parsed.exit_code == 1 and parsed.output_excerpt is not None
    assert parsed.output_excerpt.startswith(BUN_OUTPUT[:EXCERPT_HALF])
    cause = failure_cause("bun test", exit_code=1, output=parsed.output_excerpt)
    assert "src/a.test.ts" in cause.subjects


@pytest.mark.parametrize("output", sorted({row[3] for row in OUTCOMES} | {row[2] for row in CAUSES}))
def test_failure_lines_finds_every_line_a_failure_pattern_matches(output):
    """Lines are found by their words before the patterns read them: every table line a pattern
    matches holds one (a new catalogue rule needs its words in `_FAILURE_WORDS`)."""
    expected = []
    position = 0
    for line in output.split("\n"):
        if MASKED_FAILURE.search(line) or any(rule.pattern.search(line) for rule in CATALOGUE):
            expected.append((position, position + len(line)))
        position += len(line) + 1
    assert list(failure_lines(output, 0, len(output))) == expected


_ORDER = [rule.kind for rule in CATALOGUE] + ["unknown"]


@requires_real_corpus
def test_the_real_corpus_keeps_its_calls_and_outcomes_and_only_sharpens_causes(monkeypatch):
    """Parsed with and without the kept lines: the same calls and outcomes; a cause changes only
    by gaining subjects or by a rule earlier in the catalogue matching a kept line."""
    units = [
        (source, path)
        for folder, source in REAL_CORPUS_SOURCES.items()
        if source != "dsh"
        for path in iter_session_paths(REAL_CORPUS / folder, source)
    ]

    def parse() -> dict[tuple[str, str], tuple[object, ...]]:
        calls = {}
        for source, path in units:
            for call in parse_session_file(path, source).tool_calls:
                command, output = call.command_text or "", call.output_excerpt or ""
                outcome = call_outcome(command, exit_code=call.exit_code, is_error=call.is_error, output=output)
                cause = failure_cause(command, exit_code=call.exit_code, output=output) if outcome == "failed" else None
                calls[(str(path), call.call_id)] = (call.name, command, call.exit_code, call.is_error, outcome, cause)
        return calls

    kept = parse()
    monkeypatch.setattr(_text, "KEPT_MIDDLE_CHARS", 0)  # the parsers' excerpt before issue 25
    before = parse()
    assert kept.keys() == before.keys() and len(kept) > 1000
    assert [key for key in kept if kept[key][:5] != before[key][:5]] == []
    gained = sharper = 0
    for key, (*_, cause) in kept.items():
        old = before[key][5]
        if cause == old:
            continue
        assert cause is not None and old is not None
        if cause.kind == old.kind:
            assert set(old.subjects) <= set(cause.subjects) or len(cause.subjects) == 16, key
            gained += 1
        else:
            assert _ORDER.index(cause.kind) < _ORDER.index(old.kind), key
            sharper += 1
    print(f"\n{len(kept)} calls; causes: {gained} gained subjects, {sharper} typed by an earlier rule")
    assert gained + sharper > 0


CANARY = "canary_kept_7c2d"


def test_a_kept_line_reaches_the_private_cause_only(tmp_path, encoder, caplog):
    """Canary in a failure line of a cut output's middle: it reaches the private prior call's cause,
    never the decision, its receipt or a log."""
    root = tmp_path / "claude"
    output = BUN_OUTPUT.replace("src/a.test.ts:", f"src/{CANARY}.test.ts:").replace("reads x", f"reads {CANARY}")
    ClaudeTranscript(root, "s1", "/work/alpha").bash("bun test", output, exit_code=1).write()
    overrides = {"repo_roots": ["/work/alpha"], "sources": ["claude"], "source_roots": {"claude": str(root)}}
    policy = enabled_policy(**overrides)
    provider = NativeIndexProvider(tmp_path / "index", policy.config.enablements[0])
    dependencies = PipelineDependencies(
        policy=policy, provider=provider, encoder=encoder, thresholds=RouteThresholds(), digest_salt="salt"
    )
    with caplog.at_level(logging.DEBUG):
        run = run_pipeline(situation_model(commands=["bun test"]), dependencies)
    calls = run.values.capped.prior_calls
    assert any(call.cause is not None and f"src/{CANARY}.test.ts" in call.cause.subjects for call in calls)
    decision = run.decision
    assert decision.receipt is not None and CANARY not in decision.receipt.model_dump_json()
    assert CANARY not in decision.model_dump_json()
    assert CANARY not in caplog.text


def test_an_index_written_before_the_kept_lines_reads_every_file_again(tmp_path):
    # Bodies stored by an older release hold the head and tail only: the migration makes the next
    # refresh read each file again, so the cause read back names the failing test file.
    _prior_call(tmp_path, "bun test", BUN_OUTPUT, 1)
    connection = connect(tmp_path / "index" / INDEX_FILE_NAME, holds_writer_lock=True)
    mark_writing(connection)
    with atomic(connection):
        stale = _head_and_tail(BUN_OUTPUT)
        connection.execute("UPDATE entry_text SET body = ? WHERE body LIKE '%(fail) parser%'", (stale,))
        connection.execute("DELETE FROM schema_migrations WHERE name = '0007_reread_for_failure_lines'")
    seal(connection)
    connection.close()
    call = _prior_call(tmp_path, "bun test", BUN_OUTPUT, 1)
    assert call.cause is not None and "src/a.test.ts" in call.cause.subjects
