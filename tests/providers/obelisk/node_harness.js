// Runs a query script under Node with replayed helper answers (this project's; no Obelisk code).
// argv: answers.json script.js. answers = {sql: [[query, params, rows]], search: [[text, options, hits]]}.
const fs = require("fs");
const answers = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const script = fs.readFileSync(process.argv[3], "utf8");
const key = (value) => JSON.stringify(value);
const sqlAnswers = new Map(answers.sql.map(([query, params, rows]) => [key([query, params]), rows]));
const searchAnswers = new Map(answers.search.map(([text, options, hits]) => [key([text, options]), hits]));
function sql(query, ...params) {
  const rows = sqlAnswers.get(key([query, params]));
  if (rows === undefined) throw new Error("no replayed answer for this sql() call");
  return rows;
}
function search(text, options) {
  const hits = searchAnswers.get(key([text, options]));
  if (hits === undefined) throw new Error("no replayed answer for this search() call");
  return hits;
}
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
new AsyncFunction("sql", "search", script)(sql, search).then((value) => {
  process.stdout.write(JSON.stringify(value));
});
