"""Call lanes: the newest in-scope runs of a proposed command, found by time in bounded work.

For each term that reads as a command (`fts.call_shape`), two lanes: (a) the prior tool calls
that ran the same command (the same first tokens, `fts.command_key`), then (b) the same program
with one of the command's subjects in its text. A lane walks the sessions that ran it newest
first (`call_sessions`: one row per session, by the time of its newest run, whatever order files
were indexed in), checks each session it meets against the scope once, and reads the runs of the
in-scope ones `CALL_LANE_ROWS` sessions at a time (the newest N runs always lie within the N
sessions with the newest runs), until it has `CALL_LANE_ROWS` runs or has looked at `LANE_WALK`
sessions; the same-program lane, which reads text, stops after `PROGRAM_GROUPS` groups.

A change lane (`change_lane`) then brings what changed since the oldest of those runs: the
newest in-scope file edits and shell commands that may change files (formatters, `sed -i`,
`git add`, installs), so compare-route can tell a re-run after a change from a dead end.

Newest first, not failures first: a failure that a later run of the same command resolved must
arrive with that later run, or the comparator would call a fixed step a repeated dead end.
"""

import json
import re
import sqlite3
from collections.abc import Sequence
from typing import Final

from obelisk_session_evidence.providers.base import AsOf
from obelisk_session_evidence.providers.native.index.scoped_sql import (
    JOINS,
    TEXT,
    BuiltQuery,
    Candidate,
    ScopeFilter,
    as_of_sql,
    candidates,
    newest_sql,
    scope_clauses,
)
from obelisk_session_evidence.providers.native.index.store import quote_identifier

CALL_LANE_ROWS: Final = 16
"""Prior calls each call lane contributes."""
SESSION_WINDOW: Final = 500
"""Sessions a call lane reads from the index at a time, newest first."""
LANE_WALK: Final = 5000
"""Most sessions one call lane looks at."""
PROGRAM_RUNS: Final = 400
"""Runs of a program whose text the same-program lane reads per group of sessions."""
PROGRAM_GROUPS: Final = 2
"""Groups of `CALL_LANE_ROWS` in-scope sessions the same-program lane reads: it reads text, so it
looks at the newest 32 in-scope sessions that ran the program, at most 800 runs' text."""


def scope_sessions_sql(session_rows: Sequence[int], scope: ScopeFilter) -> BuiltQuery:
    """Which of the sessions `session_rows` are in scope (the same agent and repository predicates as every search)."""
    params: dict[str, object] = {"ids": json.dumps(list(session_rows))}
    where = scope_clauses(scope, None, params, rows=False)
    sql = (
        # CROSS JOIN keeps the ids the outer loop: the scope (its sole-owner probe too) is tested for
        # these sessions only, not for every session of the agent's sources.
        f"SELECT s.id FROM json_each(:ids) AS m\nCROSS JOIN {quote_identifier('sessions')} AS s ON s.id = m.value\n"
        f"CROSS JOIN {quote_identifier('files')} AS f ON f.id = s.file_id\nWHERE {where}"
    )
    return BuiltQuery(sql, params)


def lane_sessions_sql(lane: str, *, window: int, offset: int, as_of: AsOf | None = None) -> BuiltQuery:
    """One window of a call lane's walk: the sessions that ran `:value`, newest run first.

    As of a cut (replay), by each session's newest run before the cut, read from the runs
    themselves: `call_sessions` keeps each session's newest run of all time, and a walk by it would
    spend its windows on sessions that ran the command only after the cut."""
    params: dict[str, object] = {"window": window, "offset": offset}
    if as_of is None:
        sql = (
            f"SELECT session_row FROM {quote_identifier('call_sessions')} WHERE lane = :lane AND value = :value"
            " ORDER BY newest_epoch DESC LIMIT :window OFFSET :offset"
        )
        return BuiltQuery(sql, {**params, "lane": lane})
    if lane not in ("command_key", "program"):
        raise ValueError("a call lane is command_key or program")
    before = as_of_sql(as_of, params, session="session_row", row="entry_id", epoch="observed_epoch")
    sql = (
        f"SELECT session_row FROM {quote_identifier('call_details')} WHERE {lane} = :value"
        f" AND {before} GROUP BY session_row ORDER BY max(observed_epoch) DESC LIMIT :window OFFSET :offset"
    )
    return BuiltQuery(sql, params)


def lane_runs_sql(
    lane: str, session_rows: Sequence[int], subjects: Sequence[str], *, take: int, as_of: AsOf | None = None
) -> BuiltQuery:
    """The newest `take` runs of `:value` in these sessions (before `as_of`, when given); with
    `subjects`, only runs naming one of them."""
    if lane not in ("command_key", "program"):
        raise ValueError("a call lane is command_key or program")
    params: dict[str, object] = {"sessions": json.dumps(list(session_rows)), "take": take}
    runs = (
        f"SELECT entry_id, observed_epoch FROM {quote_identifier('call_details')} WHERE {lane} = :value"
        " AND session_row IN (SELECT value FROM json_each(:sessions))"
    )
    if as_of is not None:
        runs += " AND " + as_of_sql(as_of, params, session="session_row", row="entry_id", epoch="observed_epoch")
    if not subjects:
        return BuiltQuery(f"{runs}\nORDER BY observed_epoch DESC LIMIT :take", params)
    tests = []
    for i, subject in enumerate(subjects):
        params[f"subject_{i}"] = subject
        tests.append(f"instr(lower(t.command), :subject_{i}) > 0")
    params["runs"] = PROGRAM_RUNS
    sql = (
        f"SELECT c.entry_id, c.observed_epoch FROM ({runs} ORDER BY observed_epoch DESC LIMIT :runs) AS c\n"
        f"JOIN {TEXT} AS t ON t.rowid = c.entry_id\nWHERE {' OR '.join(tests)}\n"
        "ORDER BY c.observed_epoch DESC LIMIT :take"
    )
    return BuiltQuery(sql, params)


def call_lane(
    connection: sqlite3.Connection,
    lane: str,
    value: str,
    subjects: Sequence[str],
    sessions: dict[int, bool],
    scope: ScopeFilter,
    evidence_types: Sequence[str],
) -> tuple[list[Candidate], bool]:
    """A call lane's newest in-scope runs (at most `CALL_LANE_ROWS`), and whether a bound cut it."""
    chosen: list[tuple[int, float | None]] = []
    offset, groups = 0, PROGRAM_GROUPS if subjects else LANE_WALK
    cut = False
    while len(chosen) < CALL_LANE_ROWS and groups > 0:
        if offset >= LANE_WALK:
            cut = True
            break
        window = lane_sessions_sql(lane, window=SESSION_WINDOW, offset=offset, as_of=scope.as_of)
        met = [row for (row,) in connection.execute(window.sql, {**window.params, "value": value})]
        _check_sessions(connection, scope, met, sessions)
        inside = [row for row in met if sessions[row]]
        for start in range(0, len(inside), CALL_LANE_ROWS):
            runs = lane_runs_sql(
                lane, inside[start : start + CALL_LANE_ROWS], subjects, take=CALL_LANE_ROWS, as_of=scope.as_of
            )
            chosen += connection.execute(runs.sql, {**runs.params, "value": value}).fetchall()
            groups -= 1
            if len(chosen) >= CALL_LANE_ROWS or groups == 0:
                cut = cut or start + CALL_LANE_ROWS < len(inside) or len(met) == SESSION_WINDOW
                break
        offset += len(met)
        if len(met) < SESSION_WINDOW:
            break
    if not chosen:
        return [], cut
    newest = [entry_id for entry_id, _ in sorted(chosen, key=lambda run: -(run[1] or 0.0))][:CALL_LANE_ROWS]
    # The scope again in SQL (with the evidence types), newest first: the same order as the walk.
    query = newest_sql(newest, scope, evidence_types=evidence_types, take=CALL_LANE_ROWS)
    return candidates(connection, query), cut or len(chosen) >= CALL_LANE_ROWS


def _check_sessions(
    connection: sqlite3.Connection, scope: ScopeFilter, session_rows: Sequence[int], known: dict[int, bool]
) -> None:
    """Record in `known` whether each session not yet in it is in scope."""
    unknown = [row for row in dict.fromkeys(session_rows) if row not in known]
    if unknown:
        query = scope_sessions_sql(unknown, scope)
        inside = {row for (row,) in connection.execute(query.sql, query.params)}
        known.update((row, row in inside) for row in unknown)


EDIT_LANE_ROWS: Final = 16
"""Changes (edits, file-changing commands) the change lane contributes, newest first."""
EDIT_SCAN: Final = 200
"""Newest in-scope candidate calls after the matched runs that the change lane reads."""
CHANGE_WINDOW: Final = 2000
"""Newest calls after the matched runs (of any scope) the change lane walks, by time."""
FILE_EDIT_TOOLS: Final = ("edit", "write", "multiedit", "notebookedit", "apply_patch", "str_replace")
CHANGER_PROGRAMS: Final = (
    "mix",
    "sed",
    "perl",
    "git",
    "prettier",
    "black",
    "isort",
    "ruff",
    "eslint",
    "biome",
    "gofmt",
    "goimports",
    "cargo",
    "rustfmt",
    "clang-format",
    "autopep8",
    "patch",
    "cp",
    "mv",
    "rm",
    "touch",
    "mkdir",
    "truncate",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "pdm",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "npx",
    "bundle",
    "composer",
    "go",
    "make",
    "bunx",
    "pnpx",
    "just",
    "task",
    "tsc",
    "vite",
    "webpack",
    "rollup",
    "esbuild",
    "tsup",
    "gradle",
    "mvn",
    "dotnet",
    "swift",
    "zig",
    "bazel",
    "terraform",
    "dart",
)
"""Programs a shell command that changes files may start with (the SQL pre-filter): changers,
package runners (`bunx biome check --write`) and builds."""
_CHANGES: Final = re.compile(
    r"(?:^| )(?:mix (?:format|deps \w+|igniter install)|sed (?:i|in place)|perl \w*i"
    r"|git (?:add|checkout|restore|stash|apply|am|reset|rm|mv|merge|rebase|pull|cherry pick|revert|switch)"
    r"|prettier|black|isort|ruff|eslint|biome|gofmt|goimports|cargo (?:fmt|add|update)|rustfmt"
    r"|clang format|autopep8|patch|cp|mv|rm|touch|mkdir|truncate|make install|go (?:get|mod)"
    r"|(?:pip3?|uv|poetry|pdm|npm|pnpm|yarn|bun|bundle|composer) (?:install|sync|add|ci|remove|uninstall|update"
    r"|require|pip|run (?:format|fmt|fix|lint fix)))(?: |$)"
    r"|(?:^| )(?:(?:npm|pnpm|yarn|bun) (?:run )?[\w ]*"
    r"(?:build|compile|bundle|dist|generate|codegen|prepare|fix|format|write)"
    r"|make|just|task|tsc|vite build|webpack|rollup|esbuild|tsup|(?:cargo|go|gradle|swift|zig|bazel|dotnet) build"
    r"|mvn (?:package|install)|mix compile|terraform fmt|dart format)(?: |$)"
)
"""A shell command that may change files, read from its `command_key` (its first tokens, lower-case,
without punctuation: a changer past them is not seen); a superset: compare-route decides what counts."""


def change_lane(
    connection: sqlite3.Connection, since: float, scope: ScopeFilter, evidence_types: Sequence[str]
) -> tuple[list[Candidate], bool]:
    """The newest in-scope changes observed after `since` (file edits and shell commands that may
    change files), at most `EDIT_LANE_ROWS`; and whether a bound cut them."""
    query = change_candidates_sql(since, scope, evidence_types)
    found: list[Candidate] = []
    read = 0
    for entry_id, source, kind, uid, tool_name, key in connection.execute(query.sql, query.params):
        read += 1
        if (tool_name or "").lower() in FILE_EDIT_TOOLS or _CHANGES.search(key or ""):
            found.append(Candidate(entry_id, (source, kind, uid)))
            if len(found) >= EDIT_LANE_ROWS:
                return found, True
    params: dict[str, object] = {"since": since, "window": CHANGE_WINDOW}
    (later,) = connection.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {quote_identifier('call_details')}"
        f" WHERE observed_epoch > :since{_before_cut(scope, params)} LIMIT :window)",
        params,
    ).fetchone()
    return found, read >= EDIT_SCAN or later >= CHANGE_WINDOW


def change_candidates_sql(since: float, scope: ScopeFilter, evidence_types: Sequence[str]) -> BuiltQuery:
    """Of the newest `CHANGE_WINDOW` calls after `:since` (any scope, walked by time), the in-scope
    edit-tool calls and calls of `CHANGER_PROGRAMS`, newest first, at most `EDIT_SCAN`."""
    params: dict[str, object] = {"since": since, "scan": EDIT_SCAN, "window": CHANGE_WINDOW}
    where = scope_clauses(scope, evidence_types, params)
    tools = ", ".join(f":tool_{i}" for i in range(len(FILE_EDIT_TOOLS)))
    programs = ", ".join(f":program_{i}" for i in range(len(CHANGER_PROGRAMS)))
    params.update({f"tool_{i}": name for i, name in enumerate(FILE_EDIT_TOOLS)})
    params.update({f"program_{i}": name for i, name in enumerate(CHANGER_PROGRAMS)})
    window = (
        f"SELECT entry_id, program, command_key, observed_epoch FROM {quote_identifier('call_details')}"
        f" WHERE observed_epoch > :since{_before_cut(scope, params)} ORDER BY observed_epoch DESC LIMIT :window"
    )
    sql = (
        # CROSS JOIN keeps the walk by time the outer loop (SQLite never reorders it).
        f"SELECT e.id, s.source, e.kind, e.uid, e.tool_name, c.command_key FROM ({window}) AS c\n"
        f"CROSS JOIN {quote_identifier('entries')} AS e ON e.id = c.entry_id\n{JOINS.replace('JOIN', 'CROSS JOIN')}\n"
        f"WHERE (lower(e.tool_name) IN ({tools}) OR c.program IN ({programs}))\n"
        f"  AND {where}\nORDER BY c.observed_epoch DESC, e.id DESC LIMIT :scan"
    )
    return BuiltQuery(sql, params)


def _before_cut(scope: ScopeFilter, params: dict[str, object]) -> str:
    """The as-of cut over `call_details`' columns, as an AND clause; empty without a cut (the walk
    by time must not spend its window on calls after the cut)."""
    if scope.as_of is None:
        return ""
    return " AND " + as_of_sql(scope.as_of, params, session="session_row", row="entry_id", epoch="observed_epoch")


def may_change_files(key: str) -> bool:
    """True when a shell command's `command_key` reads as one that may change files (`_CHANGES`);
    the Obelisk adapter checks its change candidates with the rule the change lane uses."""
    return _CHANGES.search(key) is not None
