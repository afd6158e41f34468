"""The one fixed, versioned Obelisk query template, built on what the 0.2.3 CLI really exposes.

What the recordings (shared/reference/obelisk-recordings) show, and what this template does:
- Commands live in `tool_calls.input_json` (`$.command` Claude, `$.cmd` Codex), outputs and
  `is_error` in `tool_results`; tool rows of `messages` have `text = NULL`, so `search()` never
  finds a command or an error (2.02, 2.36). Tool calls are therefore read with `sql()`: tool_calls
  joined to sessions (an orphan subagent row has none, so it drops out) and messages (the call's
  cwd and time), with its result; source, cwd and project_path are SQL predicates; every value is
  a `?` binding (lists go in as one JSON array read with `json_each`).
- Candidates come by lanes, the way the native provider's call lanes find them, never by the whole
  command as a substring (a changed message or an added `2>&1` would miss every prior run):
      command   a proposed command's program as a word of the call's command (`.venv/bin/pytest`
                and `cd x && pytest` run `pytest`) and, when it has any, one of its subjects (its
                subcommand, paths, names: `push`, `assets/build.js`) in the command text;
      file      a route file's path tail in the call's file path, command or output;
      text      every word of a term that is not a command (a blocker's text, a command past
                the command lanes or one `fts.call_shape` cannot read), the same way: words,
                not the whole term, so spacing, quoting and line breaks do not hide a repeat.
  Each lane keeps `per_lane` calls: those holding the whole term first (an exact repeat, as the
  native command-key lane), then the newest; a row says every lane it came by (`lanes`), and the
  adapter checks a command lane's program again.
- Changes (edit-tool calls and calls of file-changing programs), so compare-route can tell a
  re-run after a change from a dead end: the first `follow` after each matched failure in its
  session (lane -2: what the agent changed in reply to it), and the newest after the oldest
  matched call (lane -1).
- Codex results have `is_error = 0`; the exit code is only the text `Process exited with code N`,
  which the SQL cuts out (`exit_text`) for the adapter to read; a call whose output says `Process
  running with session ID N` is continued by the output of the `write_stdin` call that finished
  process N, and takes its exit (the native Codex parser folds the two into one record so too).
- `search()` is used only for decisions and summaries (message text), filtered by the script
  and verified again by the adapter.
- Freshness: `__last_build__` and the per-file `index_state` rows under the enablement's session
  roots (each under every name it may have: links resolved, the home folder), in the same
  `--query` (each `--query` refreshes first, so this is the index it answers from).
- Bounds are applied while reading: the walk over the newest in-scope calls, per-lane and change
  LIMITs, `substr` on command and output, `search()` limits and a text slice; the adapter caps
  stdout bytes on top.

A query script is a data block of JSON literals followed by fixed code:

    // -- data --
    const TEMPLATE = "obelisk-session-evidence/3";
    const STATE_SQL = "...";  ...  one line per value, each from `js_literal`
    // -- code --
    ...                            identical for every call of this template version

The code never calls `console` (anything logged lands on stdout beside the JSON).
"""

import json
from dataclasses import dataclass
from typing import Final

TEMPLATE_VERSION: Final = 3
TEMPLATE_ID: Final = f"obelisk-session-evidence/{TEMPLATE_VERSION}"
DATA_MARKER: Final = "// -- data --"
CODE_MARKER: Final = "// -- code --"
DATA_NAMES: Final = (
    "TEMPLATE",
    "STATE_SQL",
    "STATE_ARGS",
    "CALLS_SQL",
    "CALLS_ARGS",
    "TERMS",
    "SEARCH",
)
LAST_BUILD: Final = "__last_build__"
FULL_BUILD: Final = "__messages_fts_synced__"
"""Written by a full `--build` only (recordings: an incremental refresh rewrites `__last_build__`)."""
MARKERS: Final = (LAST_BUILD, FULL_BUILD)
EXIT_TEXT: Final = "Process exited with code "
RUNNING_TEXT: Final = "Process running with session ID "
"""A Codex exec call still running when it answered (see the module docstring)."""
CHANGE_LANE: Final = -1
"""The lane number of the newest changes after the oldest matched call."""
FOLLOW_LANE: Final = -2
"""The lane number of the first changes after each matched failure, in its session."""

_JS_UNSAFE: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}

_UNDER_ROOTS: Final = (
    "EXISTS (SELECT 1 FROM json_each(?) r WHERE {column} = r.value"
    " OR substr({column}, 1, length(r.value) + 1) = r.value || '/')"
)
_WORD_BREAKS: Final = "/;&|()\"'`$=\t\n"
"""Characters that end a shell word: the program of `cd x && .venv/bin/pytest` is a ` pytest ` word.
Written as `char(N)`: the statement holds no `;` or quote a statement splitter could misread."""


def _spaced_words(column: str) -> str:
    text = f"lower({column})"
    for mark in _WORD_BREAKS:
        text = f"replace({text}, char({ord(mark)}), ' ')"
    return f"' ' || {text} || ' '"


STATE_SQL: Final = (
    "SELECT jsonl_path, mtime, lines_processed, cursor FROM index_state"
    " WHERE jsonl_path IN (SELECT value FROM json_each(?)) OR "
    + _UNDER_ROOTS.format(column="jsonl_path")
    + " ORDER BY jsonl_path LIMIT ?"
)
CALLS_SQL: Final = (
    "WITH calls AS MATERIALIZED (SELECT tc.id AS call_id, tc.session_id, tc.name AS tool_name, s.source,"
    " s.project_path, m.cwd, m.timestamp, tc.file_path,"
    " COALESCE(json_extract(tc.input_json, '$.command'), json_extract(tc.input_json, '$.cmd'),"
    " json_extract(tc.input_json, '$.file_path'), json_extract(tc.input_json, '$.notebook_path'),"
    " json_extract(tc.input_json, '$.pattern'), json_extract(tc.input_json, '$.input'), '') AS command_text"
    " FROM tool_calls tc JOIN sessions s ON s.id = tc.session_id"
    " JOIN messages m ON m.uuid = tc.message_uuid"
    " WHERE s.source IN (SELECT value FROM json_each(?))"
    " AND "
    + _UNDER_ROOTS.format(column="s.project_path")
    + " AND "
    + _UNDER_ROOTS.format(column="m.cwd")
    + " ORDER BY m.timestamp DESC, tc.id LIMIT ?),"
    " worded AS MATERIALIZED (SELECT call_id, timestamp, lower(command_text) AS text, lower(tool_name) AS tool,"
    " lower(COALESCE(file_path, '')) AS path, " + _spaced_words("command_text") + " AS words FROM calls),"
    " laned AS (SELECT w.call_id, w.timestamp, CAST(l.key AS INTEGER) AS lane,"
    " instr(w.text, json_extract(l.value, '$.text')) > 0 AS exact FROM worded w, json_each(?) l"
    " WHERE (json_extract(l.value, '$.kind') = 'command'"
    " AND instr(w.words, ' ' || json_extract(l.value, '$.program') || ' ') > 0"
    " AND (json_array_length(l.value, '$.subjects') = 0"
    " OR EXISTS (SELECT 1 FROM json_each(l.value, '$.subjects') j WHERE instr(w.text, j.value) > 0)))"
    " OR (json_extract(l.value, '$.kind') IN ('file', 'text')"
    " AND NOT EXISTS (SELECT 1 FROM json_each(l.value, '$.words') j WHERE NOT (instr(w.path, j.value) > 0"
    " OR instr(w.text, j.value) > 0 OR EXISTS (SELECT 1 FROM tool_results o WHERE o.tool_use_id = w.call_id"
    " AND instr(lower(o.content), j.value) > 0))))),"
    " ranked AS (SELECT call_id, lane, exact,"
    " ROW_NUMBER() OVER (PARTITION BY lane ORDER BY exact DESC, timestamp DESC, call_id)"
    " AS place FROM laned),"
    " matched AS (SELECT call_id, MIN(lane) AS lane, group_concat(lane) AS lanes, MAX(exact) AS exact FROM ranked"
    " WHERE place <= ? GROUP BY call_id),"
    " since AS (SELECT MIN(c.timestamp) AS moment FROM matched JOIN calls c USING (call_id)),"
    " changers AS (SELECT w.call_id, w.timestamp, c.session_id FROM worded w JOIN calls c USING (call_id)"
    " WHERE w.call_id NOT IN (SELECT call_id FROM matched)"
    " AND (w.tool IN (SELECT value FROM json_each(?))"
    " OR EXISTS (SELECT 1 FROM json_each(?) p WHERE instr(w.words, ' ' || p.value || ' ') > 0))),"
    " failed AS (SELECT m.call_id, c.session_id, c.timestamp FROM matched m JOIN calls c USING (call_id)"
    " LEFT JOIN tool_results f ON f.tool_use_id = m.call_id WHERE f.is_error = 1"
    " OR (instr(f.content, ?) > 0 AND substr(f.content, instr(f.content, ?) + ?, 1) <> '0')),"
    " following AS (SELECT call_id, -2 AS lane, '-2' AS lanes, 0 AS exact"
    " FROM (SELECT k.call_id, MIN(k.timestamp) AS moment,"
    " MIN(place) AS place FROM (SELECT k.call_id, k.timestamp, ROW_NUMBER() OVER (PARTITION BY f.call_id"
    " ORDER BY k.timestamp, k.call_id) AS place FROM failed f JOIN changers k ON k.session_id = f.session_id"
    " AND k.timestamp > f.timestamp) k WHERE place <= ? GROUP BY k.call_id ORDER BY place, moment LIMIT ?)),"
    " changes AS (SELECT k.call_id, -1 AS lane, '-1' AS lanes, 0 AS exact FROM changers k, since"
    " WHERE since.moment IS NOT NULL AND k.timestamp > since.moment"
    " AND k.call_id NOT IN (SELECT call_id FROM following)"
    " ORDER BY k.timestamp DESC, k.call_id LIMIT ?),"
    " chosen AS (SELECT call_id, lane, lanes, exact FROM matched"
    " UNION ALL SELECT call_id, lane, lanes, exact FROM following"
    " UNION ALL SELECT call_id, lane, lanes, exact FROM changes),"
    " outs AS (SELECT ch.call_id, ch.lane, ch.lanes, ch.exact, tr.is_error,"
    " CASE WHEN instr(tr.content, ?) > 0 THEN COALESCE(tr.content || char(10) || (SELECT r2.content"
    " FROM tool_calls t2 JOIN tool_results r2 ON r2.tool_use_id = t2.id"
    " WHERE t2.session_id = c.session_id AND t2.name = 'write_stdin' AND instr(r2.content, ?) > 0"
    " AND CAST(json_extract(t2.input_json, '$.session_id') AS INTEGER)"
    " = CAST(substr(tr.content, instr(tr.content, ?) + ?, 12) AS INTEGER) ORDER BY t2.rowid LIMIT 1),"
    " tr.content) ELSE tr.content END AS content"
    " FROM chosen ch JOIN calls c USING (call_id) LEFT JOIN tool_results tr ON tr.tool_use_id = ch.call_id)"
    " SELECT c.call_id, c.session_id, c.tool_name, c.source, c.project_path, c.cwd, c.timestamp, c.file_path,"
    " substr(c.command_text, 1, ?) AS command, length(c.command_text) AS command_chars, o.is_error,"
    " substr(o.content, 1, ?) AS output_head,"
    " CASE WHEN length(o.content) > ? THEN substr(o.content, -?) END AS output_tail,"
    " length(o.content) AS output_chars,"
    " CASE WHEN instr(o.content, ?) > 0 THEN substr(o.content, instr(o.content, ?) + ?, 12) END AS exit_text,"
    " o.lane, o.lanes"
    " FROM outs o JOIN calls c USING (call_id)"
    " ORDER BY o.lane < 0, o.lane, o.exact DESC, c.timestamp DESC, c.call_id"
)

CODE: Final = r"""const guarded = (query, args) => {
  try {
    const rows = sql(query, ...args);
    return { rows: Array.isArray(rows) ? rows : [], failed: false };
  } catch (error) {
    return { rows: [], failed: true };
  }
};
const objectOf = (value) => (typeof value === "object" && value !== null ? value : {});
// A lone surrogate would be printed as a `\udXXX` escape, which strict JSON readers refuse.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const wellFormed = (text) => (typeof text.toWellFormed === "function" ? text.toWellFormed()
  : text.replace(LONE_SURROGATE, "\ufffd"));
const underRoot = (path) => typeof path === "string"
  && SEARCH.roots.some((root) => path === root || path.startsWith(root + "/"));
const state = guarded(STATE_SQL, STATE_ARGS);
const calls = guarded(CALLS_SQL, CALLS_ARGS);
const hits = [];
let dropped = 0;
let searchFailed = 0;
const options = SEARCH.source === null ? { limit: SEARCH.limit }
  : { limit: SEARCH.limit, source: SEARCH.source };
for (let termIndex = 0; termIndex < TERMS.length; termIndex += 1) {
  let found = [];
  try {
    found = search(TERMS[termIndex], options);
  } catch (error) {
    searchFailed += 1;
  }
  for (const hit of Array.isArray(found) ? found : []) {
    const message = objectOf(objectOf(hit).message);
    const session = objectOf(objectOf(hit).session);
    if (!SEARCH.sources.includes(message.source) || session.id === null
      || session.id === undefined || session.source !== message.source
      || !underRoot(message.cwd)) {
      dropped += 1;
      continue;
    }
    const text = typeof message.text === "string" ? message.text : null;
    hits.push({
      term: termIndex,
      uuid: message.uuid ?? null,
      source: message.source,
      cwd: message.cwd,
      timestamp: message.timestamp ?? null,
      role: message.role ?? null,
      content_type: message.content_type ?? null,
      is_meta: message.is_meta ?? null,
      text: text === null ? null : wellFormed(text.slice(0, SEARCH.text_chars)),
      text_chars: text === null ? 0 : text.length,
      session_id: session.id,
      session_source: session.source,
      project: session.project ?? null,
      rank: typeof objectOf(hit).rank === "number" ? hit.rank : null,
    });
  }
}
return {
  template: TEMPLATE,
  state: state.rows,
  state_failed: state.failed,
  calls: calls.rows,
  calls_failed: calls.failed,
  hits: hits,
  hits_dropped: dropped,
  search_failed: searchFailed,
};
"""


@dataclass(frozen=True, slots=True)
class TemplateLimits:
    """The bounds the script applies inside Obelisk, before anything is printed."""

    walk: int
    """Newest in-scope tool calls the lanes look at."""
    per_lane: int
    """Newest calls each lane keeps."""
    changes: int
    """Most changes after the oldest matched call, and most changes after the matched failures."""
    follow: int
    """Changes kept after each matched failure."""
    command_chars: int
    """Longest command text read (one more than kept, so a cut is visible)."""
    output_head_chars: int
    """Head of each output read."""
    output_tail_chars: int
    """Tail of each output read, when the output is longer than the head."""
    per_term: int
    """`limit` passed to each `search()` call."""
    text_chars: int
    """Longest message text kept per search hit."""
    state_rows: int
    """Most `index_state` rows read."""

    def call_cap(self, lanes: int) -> int:
        """Most tool-call rows an answer with `lanes` lanes can hold."""
        return lanes * self.per_lane + 2 * self.changes


@dataclass(frozen=True, slots=True)
class Lane:
    """One way a prior call can match the route (see the module docstring)."""

    kind: str
    """`command`, `file` or `text`."""
    program: str = ""
    """command: the program, lower-case."""
    subjects: tuple[str, ...] = ()
    """command: its subjects, lower-case; one must be in the call's command."""
    words: tuple[str, ...] = ()
    """file: the path tail; text: the term's words; lower-case; every one must be in the call."""
    text: str = ""
    """The whole term, lower-case: calls holding it come first in the lane."""

    def literal(self) -> dict[str, object]:
        """The lane as the JSON object the SQL reads."""
        if self.kind == "command":
            return {"kind": "command", "program": self.program, "subjects": list(self.subjects), "text": self.text}
        return {"kind": self.kind, "words": list(self.words), "text": self.text}


@dataclass(frozen=True, slots=True)
class TemplateValues:
    """Everything a lookup embeds; each value becomes a JSON literal in the data block."""

    lanes: tuple[Lane, ...]
    """The lanes tool calls are matched by (every lookup)."""
    search_terms: tuple[str, ...]
    """Terms sent to `search()`: empty unless decisions or summaries were requested."""
    sources: tuple[str, ...]
    roots: tuple[str, ...]
    session_roots: tuple[str, ...]
    """Every name of every session root (as written, links resolved, under Obelisk's HOME)."""
    change_tools: tuple[str, ...]
    """Edit tools whose calls are changes (lower-case)."""
    change_programs: tuple[str, ...]
    """Programs whose calls may change files (lower-case; the adapter checks the command)."""
    limits: TemplateLimits


def js_literal(value: object) -> str:
    """`value` as one line of JSON that is also inert JavaScript source.

    `ensure_ascii` escapes every non-ASCII character (U+2028 and U+2029 included) and every
    control character; `<`, `>` and `&` are escaped too. NaN and infinities are refused.
    """
    text = json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    for unsafe, escaped in _JS_UNSAFE.items():
        text = text.replace(unsafe, escaped)
    return text


def query_script(values: TemplateValues) -> str:
    """The query script for one lookup: the data block, then the fixed code."""
    limits = values.limits
    roots = json.dumps(list(values.roots))
    constants = {
        "TEMPLATE": TEMPLATE_ID,
        "STATE_SQL": STATE_SQL,
        "STATE_ARGS": [json.dumps(list(MARKERS)), json.dumps(list(values.session_roots)), limits.state_rows],
        "CALLS_SQL": CALLS_SQL,
        "CALLS_ARGS": [
            json.dumps(list(values.sources)),
            roots,
            roots,
            limits.walk,
            json.dumps([lane.literal() for lane in values.lanes]),
            limits.per_lane,
            json.dumps(list(values.change_tools)),
            json.dumps(list(values.change_programs)),
            EXIT_TEXT,
            EXIT_TEXT,
            len(EXIT_TEXT),
            limits.follow,
            limits.changes,
            limits.changes,
            RUNNING_TEXT,
            EXIT_TEXT,
            RUNNING_TEXT,
            len(RUNNING_TEXT),
            limits.command_chars,
            limits.output_head_chars,
            limits.output_head_chars,
            limits.output_tail_chars,
            EXIT_TEXT,
            EXIT_TEXT,
            len(EXIT_TEXT),
        ],
        "TERMS": list(values.search_terms),
        "SEARCH": {
            "limit": limits.per_term,
            "text_chars": limits.text_chars,
            "source": values.sources[0] if len(values.sources) == 1 else None,
            "sources": list(values.sources),
            "roots": list(values.roots),
        },
    }
    data = "\n".join(f"const {name} = {js_literal(constants[name])};" for name in DATA_NAMES)
    header = f"// {TEMPLATE_ID}: fixed code; values are JSON literals."
    return f"{header}\n{DATA_MARKER}\n{data}\n{CODE_MARKER}\n{CODE}"
