// Runs a query script under Node with stub helpers of this project (no Obelisk code), for parity tests.
const fs = require("fs");
const data = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const script = fs.readFileSync(process.argv[3], "utf8");
const sessionsById = new Map(data.sessions.map((s) => [String(s.id), s]));
function search(term, options) {
  const hits = [];
  for (const message of data.messages) {
    if ("source" in options && message.source !== options.source) continue;
    if (term.length >= 3 && !(message.text || "").toLowerCase().includes(term.toLowerCase())) continue;
    const session = sessionsById.get(String(message.session_id)) || {};
    const copy = Object.assign({}, message); delete copy.session_id;
    hits.push({message: copy, session: {id: session.id, title: session.title, project: session.project, started_at: session.started_at, source: session.source}, rank: hits.length, context: []});
    if (hits.length >= options.limit) break;
  }
  return hits;
}
function sql(query, ...params) {
  if (query.includes("FROM index_state")) {
    const limit = params[2];
    return data.index_state.filter((r) => r.jsonl_path.slice(0, 2) === params[0] && r.jsonl_path.slice(-2) === params[1])
      .sort((a, b) => (a.jsonl_path < b.jsonl_path ? -1 : a.jsonl_path > b.jsonl_path ? 1 : 0)).slice(0, limit)
      .map((r) => ({key: r.jsonl_path, mtime: r.mtime}));
  }
  if (query.includes("FROM sessions")) {
    const limit = params[params.length - 1];
    const ids = params.slice(0, -1).map(String);
    return data.sessions.filter((s) => ids.includes(String(s.id))).slice(0, limit).map((s) => ({id: s.id, project_path: s.project_path}));
  }
  throw new Error("unexpected sql");
}
const stub = () => [];
const run = new Function("sql", "search", "sessions", "fileHistory", "failures", "process", script);
process.stdout.write(JSON.stringify(run(sql, search, stub, stub, stub, {versions: {node: "22.14.0"}})));
