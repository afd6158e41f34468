"""The one fixed, versioned Obelisk query template, and the only place its values are embedded.

A query script is a data block followed by fixed code:

    // -- data --
    const TEMPLATE = "obelisk-session-evidence/1";
    const TERMS = [...];        one line per value, each a JSON literal from `js_literal`
    // -- code --
    ...                         identical for every call of this template version

Values never reach the code: each one is a JSON literal assigned to a `const`, which JavaScript
reads as data. `js_literal` additionally keeps the literal to printable ASCII (no raw line
terminators, U+2028/U+2029 or `</script>`), so one value is always exactly one line.

The code only calls Obelisk's documented sandbox helpers: `sql()` with `?` bindings and an explicit
LIMIT (for `index_state` markers and `sessions.project_path`) and `search(text, {limit, source})`.
The window is applied by the script itself, not passed as `after`/`before`: their value format is
not documented, and a misread bound would silently return nothing, which reads as "no history".
It never calls `console` (anything logged would land on stdout beside the JSON). It filters rows
by literal match, source, window and repository root, cuts each message to a window around the
match, replaces lone surrogates, and returns one JSON object; the adapter verifies every row again.
"""

import json
from dataclasses import asdict, dataclass
from typing import Final

TEMPLATE_VERSION: Final = 1
TEMPLATE_ID: Final = f"obelisk-session-evidence/{TEMPLATE_VERSION}"
DATA_MARKER: Final = "// -- data --"
CODE_MARKER: Final = "// -- code --"
DATA_NAMES: Final = ("TEMPLATE", "TERMS", "SOURCES", "ROOTS", "AFTER", "BEFORE", "LIMITS")
"""The data block's constants, in order; the code reads nothing else from outside."""

_JS_UNSAFE: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}

CODE: Final = r"""const MARKER_SQL = "SELECT jsonl_path AS key, mtime FROM index_state"
  + " WHERE substr(jsonl_path, 1, 2) = ? AND substr(jsonl_path, -2) = ?"
  + " ORDER BY jsonl_path LIMIT ?";
const SESSION_SQL_HEAD = "SELECT id, project_path FROM sessions WHERE id IN (";
const SESSION_SQL_TAIL = ") LIMIT ?";
const SESSION_CHUNK = 100;
const helpersFound = {
  sql: typeof sql === "function",
  search: typeof search === "function",
  sessions: typeof sessions === "function",
  fileHistory: typeof fileHistory === "function",
  failures: typeof failures === "function",
  messages: typeof messages === "function",
};
const nodeFound = typeof process === "object" && process !== null
  && typeof process.versions === "object" && process.versions !== null
  && typeof process.versions.node === "string" ? process.versions.node.slice(0, 32) : null;
const counts = {
  hits: 0, not_literal: 0, out_of_scope: 0, eligible: 0, returned: 0,
  search_errors: 0, saturated_terms: 0, marker_lookup_failed: false, session_lookup_failed: false,
};
const answer = {
  template: TEMPLATE, helpers: helpersFound, node: nodeFound, markers: [], rows: [], counts: counts,
};
if (!helpersFound.sql || !helpersFound.search) {
  return answer;
}
const asArray = (value) => (Array.isArray(value) ? value : []);
const objectOf = (value) => (typeof value === "object" && value !== null ? value : {});
// A lone surrogate would be printed as a `\udXXX` escape, which strict JSON readers refuse.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const wellFormed = (value) => (typeof value.toWellFormed === "function" ? value.toWellFormed()
  : value.replace(LONE_SURROGATE, "\ufffd"));
const textOf = (value, max) => (typeof value === "string" ? wellFormed(value.slice(0, max)) : null);
const numberOf = (value) => (typeof value === "bigint" ? Number(value)
  : typeof value === "number" && Number.isFinite(value) ? value : null);
const idOf = (value) => (typeof value === "string" || typeof value === "number"
  || typeof value === "bigint" ? wellFormed(String(value).slice(0, 512)) : null);
const epochMs = (value) => {
  const number = numberOf(value);
  if (number !== null) return number > 100000000000 ? number : number * 1000;
  if (typeof value !== "string") return null;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? null : parsed;
};
const afterMs = AFTER === null ? null : Date.parse(AFTER);
const beforeMs = BEFORE === null ? null : Date.parse(BEFORE);
const inWindow = (value) => {
  if (afterMs === null && beforeMs === null) return true;
  const moment = epochMs(value);
  return moment !== null && (afterMs === null || moment >= afterMs)
    && (beforeMs === null || moment <= beforeMs);
};
const underRoot = (path) => typeof path === "string"
  && ROOTS.some((root) => path === root || path.startsWith(root + "/"));
const rankOf = (row) => (row.rank === null ? 1e308 : row.rank);
const isHigh = (code) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code) => code >= 0xdc00 && code <= 0xdfff;

try {
  for (const row of asArray(sql(MARKER_SQL, "__", "__", LIMITS.markers))) {
    const key = textOf(objectOf(row).key, 64);
    if (key !== null) answer.markers.push({ key: key, mtime: numberOf(objectOf(row).mtime) });
  }
} catch (error) {
  counts.marker_lookup_failed = true;
}

const candidates = new Map();
TERMS.forEach((term, termIndex) => {
  const options = { limit: LIMITS.per_term };
  if (SOURCES.length === 1) options.source = SOURCES[0];
  let hits;
  try {
    hits = asArray(search(term, options));
  } catch (error) {
    counts.search_errors += 1;
    return;
  }
  if (hits.length >= LIMITS.per_term) counts.saturated_terms += 1;
  const needle = term.toLowerCase();
  for (const hit of hits) {
    counts.hits += 1;
    const message = objectOf(objectOf(hit).message);
    const session = objectOf(objectOf(hit).session);
    const text = typeof message.text === "string" ? message.text
      : typeof message.snippet === "string" ? message.snippet : "";
    const at = text.toLowerCase().indexOf(needle);
    if (at < 0) {
      counts.not_literal += 1;
      continue;
    }
    const source = textOf(message.source, 32) ?? textOf(session.source, 32);
    const sessionSource = textOf(session.source, 32);
    const sessionId = idOf(session.id) ?? idOf(message.session_id);
    if (source === null || !SOURCES.includes(source) || sessionId === null
      || (sessionSource !== null && sessionSource !== source) || !inWindow(message.timestamp)) {
      counts.out_of_scope += 1;
      continue;
    }
    const messageId = idOf(message.uuid);
    const key = source + "\u0000" + sessionId + "\u0000"
      + (messageId ?? "#" + termIndex + ":" + at + ":" + text.length);
    const known = candidates.get(key);
    if (known !== undefined) {
      if (!known.terms.includes(termIndex)) known.terms.push(termIndex);
      continue;
    }
    const width = LIMITS.snippet_chars;
    const centred = at - Math.floor((width - needle.length) / 2);
    let start = Math.max(0, Math.min(centred, text.length - width));
    if (start > 0 && isLow(text.charCodeAt(start))) start -= 1;
    let end = Math.min(text.length, start + width);
    if (end < text.length && isHigh(text.charCodeAt(end - 1))) end -= 1;
    const timestamp = numberOf(message.timestamp) ?? textOf(message.timestamp, 64);
    const exitCode = numberOf(message.exit_code);
    candidates.set(key, {
      term: termIndex,
      terms: [termIndex],
      source: source,
      session_source: sessionSource,
      session_id: sessionId,
      message_id: messageId,
      timestamp: timestamp,
      cwd: textOf(message.cwd, 4096),
      project_path: null,
      role: textOf(message.role, 32),
      content_type: textOf(message.content_type, 64),
      is_meta: message.is_meta === true || message.is_meta === 1,
      rank: numberOf(objectOf(hit).rank),
      text: wellFormed(text.slice(start, end)),
      text_chars: text.length,
      window_start: start,
      tool_name: textOf(message.tool_name, 128),
      is_error: typeof message.is_error === "boolean" ? message.is_error : null,
      exit_code: Number.isInteger(exitCode) ? exitCode : null,
    });
  }
});

const ordered = [...candidates.values()].sort(
  (a, b) => (b.terms.length - a.terms.length) || (rankOf(a) - rankOf(b)));
const sessionIds = [...new Set(ordered.map((row) => row.session_id))].slice(0, LIMITS.sessions);
const projectPaths = new Map();
for (let offset = 0; offset < sessionIds.length; offset += SESSION_CHUNK) {
  const chunk = sessionIds.slice(offset, offset + SESSION_CHUNK);
  const query = SESSION_SQL_HEAD + chunk.map(() => "?").join(", ") + SESSION_SQL_TAIL;
  try {
    for (const row of asArray(sql(query, ...chunk, chunk.length))) {
      const id = idOf(objectOf(row).id);
      if (id !== null) projectPaths.set(id, textOf(objectOf(row).project_path, 4096));
    }
  } catch (error) {
    counts.session_lookup_failed = true;
  }
}
for (const row of ordered) {
  row.project_path = projectPaths.has(row.session_id) ? projectPaths.get(row.session_id) : null;
  const paths = [row.cwd, row.project_path].filter((path) => path !== null);
  if (paths.length === 0 || !paths.every(underRoot)) {
    counts.out_of_scope += 1;
    continue;
  }
  counts.eligible += 1;
  if (answer.rows.length < LIMITS.rows) answer.rows.push(row);
}
counts.returned = answer.rows.length;
return answer;
"""


@dataclass(frozen=True, slots=True)
class TemplateLimits:
    """The bounds the script applies inside Obelisk, before anything is printed."""

    per_term: int
    """`limit` passed to each `search()` call."""
    rows: int
    """Most rows the script returns."""
    snippet_chars: int
    """Width of the window cut around each match."""
    sessions: int
    """Most sessions whose `project_path` is looked up."""
    markers: int
    """Most `index_state` marker rows read."""


def js_literal(value: object) -> str:
    """`value` as one line of JSON that is also inert JavaScript source.

    `json.dumps` with `ensure_ascii` escapes every non-ASCII character (U+2028 and U+2029
    included) and every control character (NUL, newlines); `<`, `>` and `&` are escaped too, so
    no `</script>` or `<!--` survives. NaN and infinities are refused.
    """
    text = json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    for unsafe, escaped in _JS_UNSAFE.items():
        text = text.replace(unsafe, escaped)
    return text


def query_script(
    *,
    terms: tuple[str, ...],
    sources: tuple[str, ...],
    roots: tuple[str, ...],
    after: str | None,
    before: str | None,
    limits: TemplateLimits,
) -> str:
    """The query script for one lookup: the data block, then the fixed code."""
    values = {
        "TEMPLATE": TEMPLATE_ID,
        "TERMS": list(terms),
        "SOURCES": list(sources),
        "ROOTS": list(roots),
        "AFTER": after,
        "BEFORE": before,
        "LIMITS": asdict(limits),
    }
    data = "\n".join(f"const {name} = {js_literal(values[name])};" for name in DATA_NAMES)
    header = f"// {TEMPLATE_ID}: fixed code; values are JSON literals."
    return f"{header}\n{DATA_MARKER}\n{data}\n{CODE_MARKER}\n{CODE}"
