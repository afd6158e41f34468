"""The stand-in against the 95 recordings of the real Obelisk 0.2.3 CLI (the ground truth).

Each recording's argv is replayed against the stand-in over the same corpus laid out the same way
(HOME per the recordings README). Compared: exit code, which stream carries output, the framing
(JSON document, one-line error envelope, usage, bare `undefined`), the shape of every row, and
key values: hit counts, which messages and sessions come back, tool call ids and `is_error`.

Deliberate differences, each checked rather than skipped:
- The stand-in never runs JavaScript (clean room). Query scripts other than `return sql(...)`,
  a script without `return` and our own template are refused with the error envelope (exit 1):
  FOREIGN_SCRIPTS below. Their key values are checked through equivalent `return sql(...)`
  statements where the recording's facts are SQL facts (3.04, 3.10).
- Timing: the ~4.2 s identity wait is not reproduced (`identity_wait_s` = 0), and the 30 s
  refresh window is crossed by backdating `__last_build__` instead of waiting
  (test_freshness_sequence).
- Hits are compared by message, session, text or snippet, and rank (to 1e-6); their context rows
  by count and shape only (which neighbours Obelisk picks is not reproduced).
"""

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

from fixtures.obelisk_stand_in import StandIn, install_stand_in
from fixtures.obelisk_stand_in.corpus_home import SPOTTER_PROJECT, lay_out_home
from fixtures.shared import OBELISK_RECORDINGS

RECORDINGS: Final = OBELISK_RECORDINGS
RECORDED_HOME: Final = "/home/user"
FOREIGN_SCRIPTS: Final = {
    "3.00-sandbox-globals",
    "3.02-pragma-table-info-sessions",
    "3.03-table-info-all-tables",
    "3.04-row-counts",
    "3.08-sample-messages",
    "3.10-bound-command-lookup",
    "3.12-failures-limit-5",
    "3.13-filehistory",
    "3.14-sessions-limit-3",
    "3.15-search-helper-cwd",
    "3.16-search-helper-unknown-option",
    "3.16b-search-helper-filters",
    "3.18-console-log-then-return",
    "3.20-sql-write-attempts-caught",
    "3.21-script-throws",
    "3.22-script-syntax-error",
    "3.24-script-returns-promise",
    "3.25-search-helper-after",
    "3.26-json-literal-values-stay-data",
    "4.04-query-inside-window",
}
"""JavaScript the stand-in refuses to run: it answers with the error envelope instead."""
RANKS_OF_ANOTHER_INDEX: Final = {
    "2.24-search-default-limit-full",
    "2.29-text-after-options",
    "2.30-two-texts",
}
"""Recorded after freshness steps 4.00-4.07 (README: run order), while the real index still held
the four appended `zebraquokka` rows: the same hits, but bm25 ranks of a different index."""
SEQUENCE: Final = {f"4.{step:02d}" for step in range(0, 12)}
"""Freshness steps: replayed in order by test_freshness_sequence."""


def _recordings() -> list[dict[str, Any]]:
    found = []
    for path in sorted(RECORDINGS.glob("*.json")):
        recording = json.loads(path.read_text(encoding="utf-8"))
        recording["name"] = path.stem
        found.append(recording)
    return found


ALL: Final = _recordings()


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> StandIn:
    base = tmp_path_factory.mktemp("recorded-home")
    home = lay_out_home(base / "home")
    installed = install_stand_in(base / "stand-in", home=home)
    assert _run(installed, ["--build"]).returncode == 0
    return installed


def test_every_recording_is_replayed() -> None:
    assert len(ALL) == 95


@pytest.mark.parametrize(
    "recording",
    [r for r in ALL if r["name"][:4] not in SEQUENCE and r["name"] != "3.27-long-loop-timeout"],
    ids=lambda r: r["name"],
)
def test_replay_matches_recording(stand_in: StandIn, recording: dict[str, Any]) -> None:
    answer = _replay(stand_in, recording)
    if recording["name"] in FOREIGN_SCRIPTS:
        assert answer.returncode == 1 and _framing(answer.stdout, "") == "error_envelope"
        return
    assert_same_answer(answer, recording)


def test_long_loop_timeout_is_an_error_envelope(stand_in: StandIn) -> None:
    """3.27 ran 34 s in the real sandbox; the stand-in refuses the loop at once, same framing."""
    recording = next(r for r in ALL if r["name"] == "3.27-long-loop-timeout")
    answer = _replay(stand_in, recording)
    assert (answer.returncode, _framing(answer.stdout, answer.stderr)) == (1, "error_envelope")
    assert recording["exit_code"] == 1


def test_row_facts_behind_foreign_scripts(stand_in: StandIn) -> None:
    """3.04 and 3.10 as `return sql(...)`: the table counts and the bound command lookup."""
    counts = json.loads(_recorded(ALL, "3.04-row-counts")["stdout"])
    got = _sql(
        stand_in,
        "SELECT (SELECT COUNT(*) FROM sessions) AS sessions, (SELECT COUNT(*) FROM tool_calls)"
        " AS tool_calls, (SELECT COUNT(*) FROM tool_results) AS tool_results,"
        " (SELECT COUNT(*) FROM index_state) AS index_state,"
        " (SELECT SUM(is_error) FROM tool_results) AS errors",
    )[0]
    assert {k: got[k] for k in ("sessions", "tool_calls", "tool_results", "index_state")} == {
        k: counts[k] for k in ("sessions", "tool_calls", "tool_results", "index_state")
    }
    assert got["errors"] == 67  # README: tool_results is_error=1: 67
    by_type = _sql(
        stand_in,
        "SELECT source, content_type, COUNT(*) AS n, SUM(text IS NULL) AS text_null FROM messages"
        " GROUP BY source, content_type ORDER BY source, content_type",
    )
    recorded = {(r["source"], r["content_type"]): r for r in counts["messages_by_source_type"]}
    for row in by_type:
        expected = recorded[(row["source"], row["content_type"])]
        assert (row["n"], row["text_null"]) == (expected["n"], expected["text_null"])
    errors = _sql(
        stand_in,
        "SELECT s.source, COUNT(*) AS n, SUM(tr.is_error) AS is_error_1 FROM tool_results tr"
        " JOIN sessions s ON s.id = tr.session_id GROUP BY s.source",
    )
    assert errors == counts["tool_results_errors_by_source"]
    lookup = json.loads(_recorded(ALL, "3.10-bound-command-lookup")["stdout"])
    script = _recorded(ALL, "3.10-bound-command-lookup")["query_script"]
    statement = script.split("`")[1]
    got_lookup = _sql(stand_in, statement, "node assets/build.js%")
    assert [(r["id"], r["is_error"], r["command"]) for r in got_lookup] == [
        (r["id"], r["is_error"], r["command"]) for r in lookup
    ]


def test_freshness_sequence(tmp_path: Path) -> None:
    """4.00-4.11 in order on a fresh HOME; `__last_build__` backdated instead of waiting 30 s."""
    home = lay_out_home(tmp_path / "home")
    stand_in = install_stand_in(tmp_path / "stand-in", home=home)
    target = home / ".claude" / "projects" / SPOTTER_PROJECT / "short.jsonl"
    original = target.read_bytes()
    steps = {r["name"][:4]: r for r in ALL if r["name"][:4] in SEQUENCE}
    for step in sorted(steps):
        recording = steps[step]
        appended = recording.get("append")
        if appended:
            line = appended.get("appended_line")
            if line:
                with target.open("a", encoding="utf-8") as handle:
                    handle.write(line.rstrip("\n") + "\n")
        if step == "4.08":
            target.write_bytes(original)
        if "window" in recording["name"] and "inside" not in recording["name"] or step == "4.09":
            _backdate_last_build(home)
        if step == "4.04":
            rows = _sql(stand_in, "SELECT * FROM index_state WHERE jsonl_path LIKE ?", "%/short.jsonl")
            assert rows[0]["lines_processed"] == recording["target_file_index_state_row_after"]["lines_processed"]
            continue
        assert_same_answer(_replay(stand_in, recording), recording)


def assert_same_answer(answer: subprocess.CompletedProcess[str], recording: dict[str, Any]) -> None:
    """Exit code, framing and shapes; for JSON answers the key values too."""
    expected_stdout, expected_stderr = recording["stdout"], recording["stderr"]
    assert answer.returncode == recording["exit_code"]
    assert _framing(answer.stdout, answer.stderr) == _framing(expected_stdout, expected_stderr)
    assert bool(answer.stderr) == bool(expected_stderr)
    if _framing(expected_stdout, expected_stderr) == "usage":
        assert answer.stderr == expected_stderr
    if _framing(expected_stdout, expected_stderr) == "error_envelope":
        assert json.loads(answer.stdout)["error"] == _local(json.loads(expected_stdout)["error"])
    if _framing(expected_stdout, expected_stderr) != "json":
        return
    got, expected = json.loads(answer.stdout), json.loads(expected_stdout)
    assert _shape(got) == _shape(expected)
    with_ranks = recording.get("name") not in RANKS_OF_ANOTHER_INDEX
    assert _key_values(got, with_ranks) == _key_values(expected, with_ranks)


def _framing(stdout: str, stderr: str) -> str:
    if not stdout:
        return "usage" if stderr.startswith("Usage:") else "empty"
    if stdout == "undefined\n":
        return "undefined"
    try:
        value = json.loads(stdout)
    except ValueError:
        return "text"
    if isinstance(value, dict) and set(value) == {"error", "stack"} and stdout.count("\n") == 1:
        return "error_envelope"
    if isinstance(value, dict) and value.get("ok") is True:
        return "build_line" if stdout.count("\n") == 1 else "json"
    return "json" if stdout.startswith(("[", "{")) and (stdout == "[]\n" or "\n  " in stdout) else "text"


def _shape(value: Any) -> Any:
    """Keys of every object (and of each list's rows), never the values."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        shapes = []
        for item in value:
            if _shape(item) not in shapes:
                shapes.append(_shape(item))
        return sorted(shapes, key=json.dumps)
    return None


def _key_values(value: Any, with_ranks: bool = True) -> Any:
    """Counts, which messages/sessions/tool calls come back, and is_error."""
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            return [_key_values(item, with_ranks) for item in value]
        return value
    if not isinstance(value, dict):
        return None
    if "message" in value and "session" in value:
        message = value["message"]
        return (
            message["uuid"],
            value["session"]["id"],
            message.get("snippet", message.get("text")),
            round(value["rank"], 6) if with_ranks else None,
            len(value["context"]),
        )
    kept = (
        "id",
        "tool_use_id",
        "session_id",
        "is_error",
        "name",
        "tool_name",
        "jsonl_path",
        "n",
        "command",
        "cmd",
        "cwd",
        "source",
        "project",
        "project_path",
        "lines_processed",
        "message_count",
        "input_excerpt",
        "result_excerpt",
        "error_excerpt",
    )
    return {key: value[key] for key in kept if key in value}


def _local(text: str) -> str:
    return text.replace("/home/user/queries/", "{queries}/")


def _replay(stand_in: StandIn, recording: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    argv = [arg.replace(RECORDED_HOME, str(stand_in.home)) for arg in recording["argv"][1:]]
    if recording.get("query_script") is not None:
        path = Path(recording["query_script_path"].replace(RECORDED_HOME, str(stand_in.home)))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(recording["query_script"], encoding="utf-8")
    answer = _run(stand_in, argv)
    home = str(stand_in.home)
    return subprocess.CompletedProcess(
        answer.args,
        answer.returncode,
        answer.stdout.replace(f"{home}/queries/", "{queries}/").replace(home, RECORDED_HOME),
        answer.stderr,
    )


def _run(stand_in: StandIn, argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(stand_in.executable), *argv],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=stand_in.home / "work",
        timeout=60,
        check=False,
    )


def _sql(stand_in: StandIn, statement: str, *args: object, raw: bool = False) -> Any:
    script = stand_in.home / "queries" / "facts.js"
    script.parent.mkdir(parents=True, exist_ok=True)
    bound = "".join(", " + json.dumps(arg) for arg in args)
    script.write_text(f"return sql({json.dumps(statement)}{bound});", encoding="utf-8")
    answer = _run(stand_in, ["--query", str(script)])
    assert answer.returncode == 0, answer.stdout
    return answer.stdout if raw else json.loads(answer.stdout)


def _recorded(recordings: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(r for r in recordings if r["name"] == name)


def _backdate_last_build(home: Path) -> None:
    connection = sqlite3.connect(home / ".obelisk" / "obelisk.sqlite")
    with connection:
        connection.execute("UPDATE index_state SET mtime = mtime - 31000 WHERE jsonl_path = '__last_build__'")
    connection.close()


@pytest.mark.parametrize(
    "name", ["2.01-word-telemetry-full", "2.01-word-telemetry-compact", "2.14-search-default-limit-compact"]
)
def test_the_old_stand_in_hit_shape_fails_the_contract(stand_in: StandIn, name: str) -> None:
    """Mutation check: hits carrying `tool_name`/`is_error`/`exit_code` (the old stand-in's
    fiction) are told apart from the recordings; the faithful answer passes the same check."""
    recording = _recorded(ALL, name)
    answer = _replay(stand_in, recording)
    assert_same_answer(answer, recording)
    hits = json.loads(answer.stdout)
    for hit in hits:
        hit["message"].update(tool_name="Bash", is_error=True, exit_code=1)
    mutant = subprocess.CompletedProcess(
        answer.args, answer.returncode, json.dumps(hits, indent=2) + "\n", answer.stderr
    )
    with pytest.raises(AssertionError):
        assert_same_answer(mutant, recording)


def test_a_wrong_hit_set_fails_the_contract(stand_in: StandIn) -> None:
    """Mutation check on values: one hit fewer is a different answer."""
    recording = _recorded(ALL, "2.14-search-default-limit-compact")
    answer = _replay(stand_in, recording)
    hits = json.loads(answer.stdout)[:-1]
    mutant = subprocess.CompletedProcess(answer.args, 0, json.dumps(hits, indent=2) + "\n", answer.stderr)
    with pytest.raises(AssertionError):
        assert_same_answer(mutant, recording)


def test_stray_log_mode_has_the_framing_of_console_log(stand_in: StandIn, tmp_path: Path) -> None:
    """3.18: `console.log` lines come before the pretty JSON on stdout. The stand-in runs no
    JavaScript, so its `stray_log` mode (used by the adapter's fault tests) must frame the same."""
    recorded = _recorded(ALL, "3.18-console-log-then-return")["stdout"]
    stand_in.control(mode="stray_log")
    try:
        answer = _sql(stand_in, "SELECT COUNT(*) AS n FROM sessions", raw=True)
    finally:
        stand_in.control(mode="ok")
    assert _log_lines_then_json(recorded) and _log_lines_then_json(answer)


def _log_lines_then_json(stdout: str) -> bool:
    lines = stdout.split("\n")
    for start in range(1, len(lines)):
        if lines[start] in ("{", "["):
            try:
                json.loads("\n".join(lines[start:]))
            except ValueError:
                continue
            return all(line and not line.startswith(("{\n", "[\n")) for line in lines[:start])
    return False
