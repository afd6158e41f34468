"""The one fixed, versioned Obelisk query template, built on what the 0.2.3 CLI really exposes.

What the recordings (shared/reference/obelisk-recordings) show, and what this template does:
- Commands live in `tool_calls.input_json` (`$.command` Claude, `$.cmd` Codex), outputs and
  `is_error` in `tool_results`; tool rows of `messages` have `text = NULL`, so `search()` never
  finds a command or an error. Tool calls are therefore read with `sql()`: tool_calls joined to
  sessions (an orphan subagent row has none, so it drops out) and messages (the call's cwd and
  time), with its result; source, cwd and project_path are SQL predicates; every value is a `?`
  binding (lists go in as one JSON array read with `json_each`).
- Codex results have `is_error = 0`; the exit code is only the text `Process exited with code N`,
  which the SQL cuts out (`exit_text`) for the adapter to read.
- `search()` is used only for decisions and summaries (message text), filtered by the script
  and verified again by the adapter.
- Freshness: `__last_build__` and the per-file `index_state` rows under the enablement's session
  roots, in the same `--query` (each `--query` refreshes first, so this is the index it answers
  from).
- Caps are applied while reading: SQL LIMITs, `substr` on command and output, `search()` limits
  and a text slice; the adapter caps stdout bytes on top.

A query script is a data block of JSON literals followed by fixed code:

    // -- data --
    const TEMPLATE = "obelisk-session-evidence/2";
    const STATE_SQL = "...";  ...  one line per value, each from `js_literal`
    // -- code --
    ...                            identical for every call of this template version

The code never calls `console` (anything logged lands on stdout beside the JSON).
"""

import json
from dataclasses import dataclass
from typing import Final

TEMPLATE_VERSION: Final = 2
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
EXIT_TEXT: Final = "Process exited with code "

_JS_UNSAFE: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}

_UNDER_ROOTS: Final = (
    "EXISTS (SELECT 1 FROM json_each(?) r WHERE {column} = r.value"
    " OR substr({column}, 1, length(r.value) + 1) = r.value || '/')"
)
STATE_SQL: Final = (
    "SELECT jsonl_path, mtime, lines_processed, cursor FROM index_state"
    " WHERE jsonl_path = ? OR " + _UNDER_ROOTS.format(column="jsonl_path") + " ORDER BY jsonl_path LIMIT ?"
)
CALLS_SQL: Final = (
    "WITH calls AS (SELECT tc.id AS call_id, tc.session_id, tc.name AS tool_name, s.source,"
    " s.project_path, m.cwd, m.timestamp, tc.file_path,"
    " COALESCE(json_extract(tc.input_json, '$.command'), json_extract(tc.input_json, '$.cmd'),"
    " json_extract(tc.input_json, '$.file_path'), json_extract(tc.input_json, '$.pattern'),"
    " json_extract(tc.input_json, '$.input'), '') AS command_text,"
    " tr.is_error, tr.content AS output"
    " FROM tool_calls tc JOIN sessions s ON s.id = tc.session_id"
    " JOIN messages m ON m.uuid = tc.message_uuid"
    " LEFT JOIN tool_results tr ON tr.tool_use_id = tc.id"
    " WHERE s.source IN (SELECT value FROM json_each(?))"
    " AND "
    + _UNDER_ROOTS.format(column="s.project_path")
    + " AND "
    + _UNDER_ROOTS.format(column="m.cwd")
    + "), scored AS (SELECT *,"
    " (SELECT COUNT(*) FROM json_each(?) t WHERE instr(lower(command_text), lower(t.value)) > 0)"
    " AS command_hits,"
    " (SELECT COUNT(*) FROM json_each(?) t"
    " WHERE instr(lower(COALESCE(output, '')), lower(t.value)) > 0) AS output_hits,"
    " CASE WHEN instr(output, ?) > 0 THEN substr(output, instr(output, ?) + ?, 12) END AS exit_text"
    " FROM calls)"
    " SELECT call_id, session_id, tool_name, source, project_path, cwd, timestamp, file_path,"
    " substr(command_text, 1, ?) AS command, length(command_text) AS command_chars, is_error,"
    " substr(output, 1, ?) AS output_head,"
    " CASE WHEN length(output) > ? THEN substr(output, -?) END AS output_tail,"
    " length(output) AS output_chars, exit_text, command_hits, output_hits"
    " FROM scored WHERE command_hits + output_hits > 0"
    " ORDER BY command_hits DESC,"
    " (is_error = 1 OR (exit_text IS NOT NULL AND exit_text NOT LIKE '0%')) DESC,"
    " output_hits DESC, timestamp DESC LIMIT ?"
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

    calls: int
    """Most tool-call rows read."""
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


@dataclass(frozen=True, slots=True)
class TemplateValues:
    """Everything a lookup embeds; each value becomes a JSON literal in the data block."""

    terms: tuple[str, ...]
    """Terms for the tool-call match (every lookup)."""
    search_terms: tuple[str, ...]
    """Terms sent to `search()`: empty unless decisions or summaries were requested."""
    sources: tuple[str, ...]
    roots: tuple[str, ...]
    session_roots: tuple[str, ...]
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
    roots, terms = json.dumps(list(values.roots)), json.dumps(list(values.terms))
    constants = {
        "TEMPLATE": TEMPLATE_ID,
        "STATE_SQL": STATE_SQL,
        "STATE_ARGS": [LAST_BUILD, json.dumps(list(values.session_roots)), limits.state_rows],
        "CALLS_SQL": CALLS_SQL,
        "CALLS_ARGS": [
            json.dumps(list(values.sources)),
            roots,
            roots,
            terms,
            terms,
            EXIT_TEXT,
            EXIT_TEXT,
            len(EXIT_TEXT),
            limits.command_chars,
            limits.output_head_chars,
            limits.output_head_chars,
            limits.output_tail_chars,
            limits.calls,
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
