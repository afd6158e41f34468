"""Claude Code transcripts: every real file, against an independent scan and the publishers' counts."""

from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.parsers import parse_session_file
from tests.providers.native.conftest import REAL_CORPUS, json_lines, real_files, requires_real_corpus

pytestmark = requires_real_corpus

CLAUDE_FILES = real_files("claude-*/**/*.jsonl")


def _result_text(content: object) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _independent_scan(path: Path) -> dict[str, int]:
    """Counts straight from the lines: tool_use blocks, errored results, text-bearing messages. A Bash
    call run in the background has no outcome until a read of its task finds it completed."""
    tool_uses, errors, results = set(), 0, set()
    assistant_ids, user_uuids = set(), set()
    background, reads, completed = set(), {}, set()
    for record in json_lines(path):
        message = record.get("message")
        if record.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if block.get("type") == "tool_use":
                tool_uses.add(block["id"])
                if block.get("name") in ("TaskOutput", "BashOutput"):
                    reads[block["id"]] = block["input"].get("task_id") or block["input"].get("bash_id")
            elif block.get("type") == "tool_result":
                results.add(block["tool_use_id"])
                errors += bool(block.get("is_error"))
                text = _result_text(block.get("content"))
                if text.startswith("Command running in background with ID: ") and not block.get("is_error"):
                    background.add(text.split()[6].rstrip("."))
                task = reads.get(block["tool_use_id"])
                if task in background and "<status>completed</status>" in text and task not in completed:
                    completed.add(task)
                    errors += "<exit_code>0</exit_code>" not in text
            elif block.get("type") == "text" and (block.get("text") or "").strip():
                if record["type"] == "assistant":
                    assistant_ids.add(message.get("id") or record["uuid"])
                else:
                    user_uuids.add(record["uuid"])
    return {
        "tool_calls": len(tool_uses),
        "failures": errors,
        "unanswered": len(tool_uses - results) + len(background - completed),
        "messages": len(assistant_ids) + len(user_uuids),
    }


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=lambda p: str(p.relative_to(REAL_CORPUS)))
def test_parse_session_file_claude_matches_independent_scan(path: Path) -> None:
    outcome = parse_session_file(path, "claude")
    expected = _independent_scan(path)
    assert outcome.skipped_total == 0, dict(outcome.skipped_records)
    assert len(outcome.tool_calls) == expected["tool_calls"]
    assert sum(call.failed for call in outcome.tool_calls) == expected["failures"]
    assert sum(call.is_error is None for call in outcome.tool_calls) == expected["unanswered"]
    assert len(outcome.messages) == expected["messages"]
    assert len({m.record_uid for m in outcome.messages}) == len(outcome.messages)
    assert outcome.format_version is not None and outcome.format_version.startswith("claude-")


# Publisher: claude-codemie/SOURCE-README.md. (file, lines, snapshots, string prompts, array
# prompts, tool calls, tool results, turns).
CODEMIE_COUNTS = [
    ("session-9eda1058.jsonl", 40, 3, 3, 1, 3, 3, 3),
    ("session-3fe1b6bc.jsonl", 275, 10, 11, 2, 76, 76, 10),
    ("session-196820da.jsonl", 233, 15, 16, 0, 65, 65, 13),
    ("session-624a4a58.jsonl", 222, 18, 18, 3, 48, 48, 15),
]


@pytest.mark.parametrize(
    ("name", "lines", "snapshots", "string_prompts", "array_prompts", "calls", "results", "turns"),
    CODEMIE_COUNTS,
)
def test_parse_session_file_claude_matches_codemie_counts(
    name: str,
    lines: int,
    snapshots: int,
    string_prompts: int,
    array_prompts: int,
    calls: int,
    results: int,
    turns: int,
) -> None:
    path = REAL_CORPUS / "claude-codemie" / name
    records = list(json_lines(path))
    users = [r for r in records if r.get("type") == "user"]
    assert len(records) == lines
    assert sum(r.get("type") == "file-history-snapshot" for r in records) == snapshots
    assert sum(isinstance(r["message"]["content"], str) for r in users) == string_prompts
    array_texts = [r for r in users if isinstance(r["message"]["content"], list)]
    with_text = [r for r in array_texts if any(b.get("type") == "text" for b in r["message"]["content"])]
    assert len(with_text) == array_prompts
    outcome = parse_session_file(path, "claude")
    assert len(outcome.tool_calls) == calls
    assert sum(call.is_error is not None for call in outcome.tool_calls) == results
    # The publisher's "turns" are user prompts minus local-command wrappers (caveat, /clear, its
    # stdout) and "[Request interrupted …]" markers. We are right to count fewer where they count
    # injected text as a turn: session-3fe1b6bc's `/bmad…` slash command and its two isMeta
    # "IT IS CRITICAL" expansions, and session-624a4a58's compaction summary ("This session is
    # being continued …", isCompactSummary). None of these are the user's own words.
    injected_turns = {"session-3fe1b6bc.jsonl": 3, "session-624a4a58.jsonl": 1}.get(name, 0)
    own_words = [m for m in outcome.messages if m.role == "user" and not m.is_meta]
    assert len(own_words) == turns - injected_turns


def test_parse_session_file_claude_counts_assistant_turns_by_message_id() -> None:
    # SOURCE-README-tmp-private.md says "Assistant turns: 10": that is the number of assistant
    # LINES. One API message is written as one line per content block, so by message.id there are
    # 7 (the format facts: count by message.id). The publisher's number counts lines and is high.
    path = REAL_CORPUS / "claude-codemie" / "-tmp-private" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
    assistant_lines = [r for r in json_lines(path) if r.get("type") == "assistant"]
    assert len(assistant_lines) == 10
    assert len({r["message"]["id"] for r in assistant_lines}) == 7
    outcome = parse_session_file(path, "claude")
    assistant_uids = {m.record_uid for m in outcome.messages if m.role == "assistant"}
    assert assistant_uids <= {r["message"]["id"] for r in assistant_lines}


def test_parse_session_file_claude_matches_tmp_private_tool_summary() -> None:
    # Publisher: 6 tool calls (3 Write + 1 Read + 1 Edit + 1 Bash) and 5 file operations.
    path = REAL_CORPUS / "claude-codemie" / "-tmp-private" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
    outcome = parse_session_file(path, "claude")
    names = sorted(call.name or "" for call in outcome.tool_calls)
    assert names == ["Bash", "Edit", "Read", "Write", "Write", "Write"]
    assert sum(call.evidence_type == "file_history" for call in outcome.tool_calls) == 5
    assert all(call.file_paths for call in outcome.tool_calls if call.name != "Bash")
    bash = next(call for call in outcome.tool_calls if call.name == "Bash")
    assert bash.command_text == "rm hello.js"


@pytest.mark.parametrize(
    "path",
    [p for p in CLAUDE_FILES if p.name.startswith("agent-")],
    ids=lambda p: str(p.relative_to(REAL_CORPUS)),
)
def test_parse_session_file_claude_files_sidechain_agents_under_their_parent(path: Path) -> None:
    outcome = parse_session_file(path, "claude")
    session = outcome.sessions[0]
    first = next(r for r in json_lines(path) if r.get("type") in ("user", "assistant"))
    assert session.parent_session_id == first["sessionId"]
    assert session.session_id == f"{first['sessionId']}:agent-{first['agentId']}"


def test_parse_session_file_claude_reads_session_context() -> None:
    path = REAL_CORPUS / "claude-spotter" / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
    outcome = parse_session_file(path, "claude")
    session = outcome.sessions[0]
    assert session.session_id == "4d5611e5-241a-462a-8d15-5122611a9569"
    assert session.cwd == "/home/USER/projects/spotter-worktrees/spotter-dov"
    assert session.git_branch == "spotter-dov"
    assert session.started_at is not None and session.started_at < (session.ended_at or "")
    # The compaction summary is meta (it is not the user's words) and is also a summary record.
    assert any(s.kind == "compaction" for s in outcome.summaries)
    own_words = [m.text for m in outcome.messages if not m.is_meta]
    assert not any(text.startswith("This session is being continued") for text in own_words)


@pytest.mark.parametrize(
    ("text_start", "is_meta"),
    [
        ("<command-name>/clear</command-name>", True),
        ("<local-command-stdout>", True),
        ("[Request interrupted by user", True),
        ("Caveat: The messages below were generated by the user", True),
        ("analyze existing codex folder", False),
    ],
)
def test_parse_session_file_claude_marks_injected_text_as_meta(text_start: str, is_meta: bool) -> None:
    messages = [
        m
        for name in ("session-3fe1b6bc.jsonl", "session-9eda1058.jsonl")
        for m in parse_session_file(REAL_CORPUS / "claude-codemie" / name, "claude").messages
    ]
    matching = [m for m in messages if m.text.startswith(text_start)]
    assert matching and all(m.is_meta is is_meta for m in matching)


def test_parse_session_file_claude_never_keeps_thinking_text() -> None:
    path = REAL_CORPUS / "claude-codemie" / "session-9eda1058.jsonl"
    thinking = [
        block["thinking"]
        for record in json_lines(path)
        if record.get("type") == "assistant"
        for block in record["message"]["content"]
        if block.get("type") == "thinking" and block.get("thinking")
    ]
    texts = " ".join(m.text for m in parse_session_file(path, "claude").messages)
    assert thinking and not any(t in texts for t in thinking)
