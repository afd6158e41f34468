"""Codex code mode (0.142): a JavaScript cell (`custom_tool_call` `exec`) runs the shell through
`tools.exec_command({cmd, workdir, …})`. Its literal commands are shell calls with the folder they
ran in; an outcome is known only where the cell printed the exit code as the whole result object.
Hand-written lines in the shape of real rollouts; the commands and outputs are invented."""

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import connect, index_file
from obelisk_session_evidence.providers.native.parsers import parse_session_file
from obelisk_session_evidence.providers.native.parsers._code_mode import UNKNOWN, cell_tool_calls
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.providers.native.records import ToolCallRecord
from obelisk_session_evidence.stages.pipeline import PipelineDependencies, run_pipeline
from tests.providers.native.codex_rollouts import write_rollout
from tests.providers.native.index.older_index import before_migration
from tests.providers.native.test_call_places import _rollout as _plain_rollout
from tests.providers.native.test_parsers_incremental import _assert_resumed_equals_whole, _parse_in_two
from tests.stages.helpers import enabled_policy, situation_model

SESSION = "019f0000-0000-7000-8000-00000000c0de"
WORKDIR = "/work/alpha"
CANARY = "canary_code_mode_4e1f9a"


def _cell(cmd: str, *, workdir: str = WORKDIR, quoted: bool = False, tail: str = "text(r.output)") -> str:
    """A cell making one `exec_command` call, its keys bare (`cmd:`) or quoted (`"cmd":`)."""
    key = (lambda name: json.dumps(name)) if quoted else (lambda name: name)
    arguments = f"{key('cmd')}:{json.dumps(cmd)},{key('workdir')}:{json.dumps(workdir)},{key('yield_time_ms')}:10000"
    return f"const r = await tools.exec_command({{{arguments}}});{tail}\n"


def _call(call_id: str, source: str) -> dict[str, Any]:
    return {"type": "custom_tool_call", "name": "exec", "call_id": call_id, "input": source}


def _done(call_id: str, printed: str) -> dict[str, Any]:
    header = {"type": "input_text", "text": "Script completed\nWall time 0.2 seconds\nOutput:\n"}
    output = [header, {"type": "input_text", "text": printed}] if printed else [header]
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": output}


def _running(call_id: str, cell: str) -> dict[str, Any]:
    text = f"Script running with cell ID {cell}\nWall time 10.0 seconds\nOutput:\n"
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": text}


def _wait(call_id: str, cell: str) -> dict[str, Any]:
    arguments = json.dumps({"cell_id": cell, "yield_time_ms": 1000, "max_tokens": 30000})
    return {"type": "function_call", "name": "wait", "call_id": call_id, "arguments": arguments}


def _waited(call_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A `wait` output: the same shapes as the cell's own output, under the wait's call id."""
    return {**payload, "type": "function_call_output", "call_id": call_id}


def _patched(call_id: str, changes: dict[str, Any]) -> dict[str, Any]:
    """The event an `apply_patch` run inside a cell leaves: no call has its id."""
    return {"type": "patch_apply_end", "call_id": call_id, "stdout": "Success.", "success": True, "changes": changes}


def _rollout(root: Path, items: list[dict[str, Any]]) -> Path:
    folder = root / "2026" / "07" / "14"
    return write_rollout(folder, SESSION, items, version="0.142.0", day="2026-07-14", cwd=WORKDIR)


def _calls(tmp_path: Path, items: list[dict[str, Any]]) -> dict[str, ToolCallRecord]:
    outcome = parse_session_file(_rollout(tmp_path, items), "codex")
    assert outcome.skipped_total == 0, dict(outcome.skipped_records)
    return {call.call_id: call for call in outcome.tool_calls}


def test_a_cell_with_one_exec_command_is_that_shell_call(tmp_path: Path) -> None:
    calls = _calls(
        tmp_path, [_call("c1", _cell("pytest -q tests/unit", workdir="/work/alpha/pkg")), _done("c1", "3 passed\n")]
    )
    call = calls["c1"]
    assert (call.name, call.command_text, call.cwd) == ("exec_command", "pytest -q tests/unit", "/work/alpha/pkg")
    assert call.output_excerpt is not None and call.output_excerpt.endswith("3 passed\n")
    # "Script completed" is the cell's status, not the command's: the outcome stays unknown.
    assert (call.exit_code, call.is_error, call.outcome) == (None, None, "unknown")


def test_quoted_and_bare_keys_read_the_same(tmp_path: Path) -> None:
    bare = _calls(tmp_path / "bare", [_call("c1", _cell("make lint")), _done("c1", "ok\n")])["c1"]
    quoted = _calls(tmp_path / "quoted", [_call("c1", _cell("make lint", quoted=True)), _done("c1", "ok\n")])["c1"]
    assert (bare.command_text, bare.cwd) == (quoted.command_text, quoted.cwd) == ("make lint", WORKDIR)


def test_escaped_quotes_and_js_only_escapes_are_decoded() -> None:
    source = (
        'const r = await tools.exec_command({cmd:"grep -n \\"two words\\" notes.txt && echo it\\\'s\\x21",'
        " workdir:'/work/alpha/it\\'s', sandbox_permissions:\"require_escalated\"});text(r.output)\n"
    )
    (call,) = cell_tool_calls(source, "exec_command")
    assert call["cmd"] == 'grep -n "two words" notes.txt && echo it\'s!'
    assert call["workdir"] == "/work/alpha/it's"
    assert call["sandbox_permissions"] == "require_escalated"


def test_a_cell_command_asking_to_leave_the_sandbox_is_escalated(tmp_path: Path) -> None:
    source = 'const r = await tools.exec_command({cmd:"rm -rf build",sandbox_permissions:"require_escalated"});\n'
    assert _calls(tmp_path, [_call("c1", source), _done("c1", "")])["c1"].escalated


def test_several_exec_commands_are_each_a_shell_call_with_unknown_outcome(tmp_path: Path) -> None:
    source = (
        "const [a, b, c] = await Promise.all([\n"
        '  tools.exec_command({cmd:"git status --short",workdir:"/work/alpha"}),\n'
        '  tools.exec_command({cmd:"cargo test --quiet",workdir:"/work/alpha/crate",max_output_tokens:2000}),\n'
        '  tools.exec_command({cmd:`git log -${n} --oneline`,workdir:"/work/alpha"}),\n'
        ']);\ntext(a.output + b.output + JSON.stringify({exit_code: 1, output: "x"}));\n'
    )
    calls = _calls(tmp_path, [_call("c1", source), _done("c1", "M notes.txt\nerror: test failed\n")])
    cell, first, second = calls.pop("c1"), calls.pop("c1#1"), calls.pop("c1#2")
    assert calls == {}  # the template with `${n}` states no command: it is never guessed
    assert [(c.name, c.command_text, c.cwd) for c in (first, second)] == [
        ("exec_command", "git status --short", "/work/alpha"),
        ("exec_command", "cargo test --quiet", "/work/alpha/crate"),
    ]
    # The printed output belongs to the cell: neither command's share of it is known.
    assert all(c.output_excerpt is None and c.outcome == "unknown" for c in (first, second))
    assert cell.name == "exec" and cell.exit_code is None and "error: test failed" in (cell.output_excerpt or "")


def test_a_cell_without_a_literal_command_stays_one_exec_call(tmp_path: Path) -> None:
    source = "for (const c of cmds) text((await tools.exec_command({cmd:c})).output)\n"
    calls = _calls(tmp_path, [_call("c1", source), _done("c1", "done\n")])
    assert list(calls) == ["c1"] and calls["c1"].name == "exec"


@pytest.mark.parametrize(
    "source",
    [
        'tools.exec_command({cmd:"ls"',  # cut before the object closes
        'tools.exec_command({cmd:"ls" + suffix})',
        "tools.exec_command({cmd})",
        'tools.exec_command({cmd:"\\u{110000}"})',
    ],
)
def test_a_command_that_is_not_one_literal_is_not_read(source: str) -> None:
    assert all(call.get("cmd", UNKNOWN) is UNKNOWN for call in cell_tool_calls(source, "exec_command"))


def test_a_running_cell_is_continued_by_its_waits(tmp_path: Path) -> None:
    cell = _call(
        "c1", _cell("cargo build --release", tail="text(JSON.stringify({exit_code:r.exit_code,output:r.output}))")
    )
    finished = _done("w3", json.dumps({"exit_code": 101, "output": "error[E0425]: cannot find value `x`\n"}))
    items = [
        cell,
        _running("c1", "8"),
        _wait("w1", "8"),
        _waited("w1", _running("w1", "8")),
        _wait("w2", "9"),  # another cell's wait: not folded into this one
        _wait("w3", "8"),
        _waited("w3", finished),
    ]
    outcome = parse_session_file(_rollout(tmp_path, items), "codex")
    calls = {call.call_id: call for call in outcome.tool_calls}
    assert sorted(calls) == ["c1", "w2"] and calls["w2"].name == "wait"
    call = calls["c1"]
    assert (call.exit_code, call.outcome) == (101, "failed")
    assert "cannot find value" in (call.output_excerpt or "")
    assert outcome.resume.process_calls == () and outcome.resume.stdin_calls == ()


def test_a_cell_still_running_at_the_end_waits_with_an_unknown_outcome(tmp_path: Path) -> None:
    outcome = parse_session_file(_rollout(tmp_path, [_call("c1", _cell("sleep 600")), _running("c1", "3")]), "codex")
    assert outcome.resume.process_calls == (("cell:3", "c1"),)
    (call,) = outcome.tool_calls
    assert call.outcome == "unknown" and call.output_excerpt is None


@pytest.mark.parametrize(
    ("printed", "exit_code"),
    [
        (json.dumps({"exit_code": 2, "output": "lint: 3 problems\n"}), 2),
        (json.dumps({"chunk_id": "ab12", "exit_code": 0, "output": "fine\n"}), 0),
        ('{"exit_code": 2}', None),  # no `output`: the command's own JSON, not the result object
        ('{"exit_code": 2, "output": "a"}\n{"exit_code": 0, "output": "b"}', None),
        ("lint: 3 problems\nexit:2", None),  # the cell's own label: not a stated shape
        (json.dumps({"exit_code": True, "output": ""}), None),
    ],
)
def test_an_exit_code_is_read_only_from_the_printed_result_object(
    tmp_path: Path, printed: str, exit_code: int | None
) -> None:
    call = _calls(tmp_path, [_call("c1", _cell("npm run lint")), _done("c1", printed)])["c1"]
    assert call.exit_code == exit_code
    assert call.failed is (exit_code not in (None, 0))


def test_a_non_shell_cell_printing_a_result_object_gets_no_exit_code(tmp_path: Path) -> None:
    source = "text(JSON.stringify(await tools.write_stdin({session_id:5,chars:''})))\n"
    printed = json.dumps({"exit_code": 1, "output": "bye\n"})
    call = _calls(tmp_path, [_call("c1", source), _done("c1", printed)])["c1"]
    assert call.name == "exec" and call.exit_code is None


def _poll(call_id: str, session: int, tail: str = "text(r.output)") -> dict[str, Any]:
    return _call(call_id, f'const r = await tools.write_stdin({{session_id:{session},chars:""}}); {tail};\n')


def _printed(call_id: str, *blocks: str) -> dict[str, Any]:
    """A finished cell's output, one block per `text(...)` it ran (as Codex writes them)."""
    header = {"type": "input_text", "text": "Script completed\nWall time 10.0 seconds\nOutput:\n"}
    output = [header, *({"type": "input_text", "text": block} for block in blocks)]
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": output}


def test_cells_polling_a_command_left_running_continue_it(tmp_path: Path) -> None:
    tail = "text(r.output); if(r.session_id) text(`SESSION_ID=${r.session_id}`)"
    items = [
        _call("c1", _cell("cargo test --workspace", tail=tail)),
        _printed("c1", "Compiling app v0.1.0\n", "SESSION_ID=4242"),
        _poll("p1", 4242),
        _printed("p1", "running 12 tests\n"),  # the poll printed no status: the command may run on
        _poll("p2", 4242, tail="text(JSON.stringify(r))"),
        _printed("p2", json.dumps({"exit_code": 101, "output": "test parser::reads_x ... FAILED\n"})),
        _poll("p3", 777),  # a process no cell here started: the poll stays a cell of its own
        _done("p3", "?"),
    ]
    outcome = parse_session_file(_rollout(tmp_path, items), "codex")
    calls = {call.call_id: call for call in outcome.tool_calls}
    assert sorted(calls) == ["c1", "p3"] and calls["p3"].name == "exec"
    call = calls["c1"]
    assert (call.command_text, call.exit_code, call.outcome) == ("cargo test --workspace", 101, "failed")
    assert all(text in (call.output_excerpt or "") for text in ("Compiling app", "running 12 tests", "reads_x"))
    assert outcome.resume.process_calls == () and outcome.resume.stdin_calls == ()


def test_a_command_left_running_without_a_status_stays_unknown_and_waiting(tmp_path: Path) -> None:
    items = [_call("c1", _cell("npm run dev", tail="text(JSON.stringify(r))"))]
    items.append(_printed("c1", json.dumps({"session_id": 31, "output": "ready on :5173\n"})))
    items += [_poll("p1", 31), _printed("p1", "GET / 200\n")]
    outcome = parse_session_file(_rollout(tmp_path, items), "codex")
    (call,) = outcome.tool_calls
    assert call.outcome == "unknown" and "GET / 200" in (call.output_excerpt or "")
    assert outcome.resume.process_calls == (("31", "c1"),)


def test_code_mode_resumes_at_every_line(tmp_path: Path) -> None:
    items = [
        _call("c1", _cell("cargo build", tail="text(JSON.stringify(r))")),
        _running("c1", "4"),
        _wait("w1", "4"),
        _waited("w1", _done("w1", json.dumps({"exit_code": 1, "output": "error: linker failed\n"}))),
        _call("c2", 'await Promise.all([tools.exec_command({cmd:"ls"}), tools.exec_command({cmd:"pwd"})])'),
        _done("c2", "a\n/work/alpha\n"),
        _call("c3", _cell("make serve", tail="text(r.output); text(`SESSION_ID=${r.session_id}`)")),
        _printed("c3", "serving\n", "SESSION_ID=12"),
        _poll("p1", 12, tail="text(JSON.stringify(r))"),
        _printed("p1", json.dumps({"exit_code": 2, "output": "make: *** [serve] Error 2\n"})),
    ]
    path = _rollout(tmp_path / "whole", items)
    for split in range(1, len(items) + 1):
        parts = _parse_in_two(path, "codex", split, tmp_path / f"split{split}")
        _assert_resumed_equals_whole(path, "codex", parts)


def test_a_code_mode_command_reaches_the_private_prior_calls_only(tmp_path: Path, encoder, caplog) -> None:
    """Canary in a cell's command and in what it printed: it reaches the private prior call, never
    the decision, its receipt or a log."""
    root = tmp_path / "codex"
    command = f"bun test --filter {CANARY}"
    printed = json.dumps({"exit_code": 1, "output": f"(fail) {CANARY} > reads x\n 1 fail\n"})
    _rollout(root, [_call("c1", _cell(command, tail="text(JSON.stringify(r))")), _done("c1", printed)])
    policy = enabled_policy(repo_roots=[WORKDIR], sources=["codex"], source_roots={"codex": str(root)})
    provider = NativeIndexProvider(tmp_path / "index", policy.config.enablements[0])
    dependencies = PipelineDependencies(
        policy=policy, provider=provider, encoder=encoder, thresholds=RouteThresholds(), digest_salt="salt"
    )
    with caplog.at_level(logging.DEBUG):
        run = run_pipeline(situation_model(commands=[command]), dependencies)
    prior = [call for call in run.values.capped.prior_calls if CANARY in call.command]
    assert prior and prior[0].exit_code == 1
    decision = run.decision
    assert decision.receipt is not None and CANARY not in decision.receipt.model_dump_json()
    assert CANARY not in decision.model_dump_json()
    assert CANARY not in caplog.text


def _tool_names(path: Path) -> list[str | None]:
    connection = connect(path)
    try:
        return [
            row[0] for row in connection.execute("SELECT tool_name FROM entries WHERE kind = 'tool_call' ORDER BY id")
        ]
    finally:
        connection.close()


def test_an_index_that_stored_cells_as_exec_calls_reads_their_files_again(tmp_path: Path) -> None:
    codex = tmp_path / "codex"
    _rollout(
        codex,
        [_call("c1", _cell("make test")), _running("c1", "2"), _wait("w1", "2"), _waited("w1", _done("w1", "ok\n"))],
    )
    _plain_rollout(codex, "019f0000-0000-7000-8000-0000000000aa", WORKDIR, [("p1", "make lint", None, 0, "ok")])
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"codex": [codex]})
    assert sorted(_tool_names(path), key=str) == ["exec_command", "exec_command"]
    connection = connect(path)
    with connection:  # as the release before stored the cell: one `exec` call
        connection.execute("UPDATE entries SET tool_name = 'exec' WHERE uid LIKE '%c1%'")
    connection.close()
    before_migration(path, "0015_codex_code_mode_calls")
    report = refresh_index(path, {"codex": [codex]})
    assert (report.files_added, report.files_reread) == (0, 1)
    assert sorted(_tool_names(path), key=str) == ["exec_command", "exec_command"]


def test_a_patch_a_cell_applied_is_an_apply_patch_of_the_files_it_changed(tmp_path: Path) -> None:
    changes = {
        f"{WORKDIR}/src/batching.rs": {"type": "update", "unified_diff": "@@ -1 +1 @@\n-a\n+b\n", "move_path": None},
        f"{WORKDIR}/src/new.rs": {"type": "add", "content": "fn main() {}\n"},
        f"{WORKDIR}/src/old.rs": {"type": "update", "unified_diff": "", "move_path": f"{WORKDIR}/src/moved.rs"},
    }
    calls = _calls(tmp_path, [_patched("exec-2eb4670c", changes)])
    patch = calls["exec-2eb4670c"]
    assert patch.name == "apply_patch" and patch.is_error is False
    moved = (f"{WORKDIR}/src/old.rs", f"{WORKDIR}/src/moved.rs")
    assert patch.file_paths == (f"{WORKDIR}/src/batching.rs", f"{WORKDIR}/src/new.rs", *moved)
    assert "fn main" not in (patch.command_text or "")  # the diff itself is not kept


def test_a_patch_event_of_a_known_call_keeps_that_call(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** End Patch\n"
    applied = {"type": "custom_tool_call", "name": "apply_patch", "call_id": "call_p1", "input": patch}
    calls = _calls(tmp_path, [applied, _patched("call_p1", {f"{WORKDIR}/src/b.rs": {"type": "update"}})])
    assert calls["call_p1"].name == "apply_patch" and calls["call_p1"].file_paths == ("src/a.rs",)


def test_an_index_that_stored_cell_patches_unnamed_reads_their_files_again(tmp_path: Path) -> None:
    codex = tmp_path / "codex"
    _rollout(codex, [_patched("exec-1", {f"{WORKDIR}/src/a.rs": {"type": "update"}})])
    _plain_rollout(codex, "019f0000-0000-7000-8000-0000000000aa", WORKDIR, [("p1", "make lint", None, 0, "ok")])
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"codex": [codex]})
    assert sorted(_tool_names(path), key=str) == ["apply_patch", "exec_command"]
    connection = connect(path)
    with connection:  # as the release before stored the event: an unnamed call
        connection.execute("UPDATE entries SET tool_name = NULL WHERE tool_name = 'apply_patch'")
    connection.close()
    before_migration(path, "0016_codex_cell_patches")
    report = refresh_index(path, {"codex": [codex]})
    assert (report.files_added, report.files_reread) == (0, 1)
    assert sorted(_tool_names(path), key=str) == ["apply_patch", "exec_command"]


def test_0142_world_state_and_thread_settings_are_known_records(tmp_path: Path) -> None:
    """0.142 writes `world_state` (the instructions and environments the model was shown) and a
    `thread_settings_applied` event per turn. Neither is an unknown record; the settings' folder is
    the session's when the header named none, and the instructions' text is not kept."""
    path = tmp_path / f"rollout-2026-07-14T09-00-00-{SESSION}.jsonl"
    state = {"agents_md": {"directory": WORKDIR, "text": CANARY}, "environments": {"filesystem": "workspace-write"}}
    settings = {"model": "gpt-5", "approval_policy": "never", "cwd": "/work/alpha/sub"}
    lines = [
        {"type": "session_meta", "payload": {"id": SESSION, "timestamp": "2026-07-14T09:00:00.000Z"}},
        {"type": "world_state", "payload": {"full": True, "state": state}},
        {"type": "event_msg", "payload": {"type": "thread_settings_applied", "thread_settings": settings}},
        {"type": "event_msg", "payload": {"type": "user_message", "message": "run the unit tests"}},
    ]
    path.write_text(
        "".join(json.dumps({"timestamp": "2026-07-14T09:00:01.000Z", **line}) + "\n" for line in lines), "utf-8"
    )
    outcome = parse_session_file(path, "codex")
    assert outcome.skipped_total == 0, dict(outcome.skipped_records)
    assert [session.cwd for session in outcome.sessions] == ["/work/alpha/sub"]
    assert CANARY not in repr(outcome)
