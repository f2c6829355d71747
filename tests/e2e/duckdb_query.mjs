// duckdb_query.mjs NPM_DIR QUERIES.json: runs each SQL of QUERIES.json
// ({"name": "SQL", ...}) in one in-memory DuckDB (@duckdb/node-api, which
// t506 installs under NPM_DIR) and prints {"name": [row objects]}: BIGINT
// as decimal strings (JSON numbers are doubles), DOUBLE as numbers,
// VARCHAR as strings, NULL as null.
import { createRequire } from "module";
import { readFileSync } from "fs";

const require = createRequire(process.argv[2] + "/");
const { DuckDBInstance } = require("@duckdb/node-api");
const queries = JSON.parse(readFileSync(process.argv[3], "utf8"));
const inst = await DuckDBInstance.create(":memory:");
const con = await inst.connect();
const out = {};
for (const [name, sql] of Object.entries(queries)) {
	const r = await con.runAndReadAll(sql);
	out[name] = r.getRowObjectsJson();
}
console.log(JSON.stringify(out));
