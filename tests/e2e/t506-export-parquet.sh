#!/usr/bin/env bash
# export --format parquet, read by an engine written by others: DuckDB
# (@duckdb/node-api from npm, installed by this test under $IFT_BUILD/npm-duckdb,
# never by make).
# - Random files of every column kind (tests/tools/pqfuzz: nulls, extremes,
#   dictionaries past their limit, many row groups) read back as written,
#   and filters that use the statistics count what the rows say.
# - Three traces of three hosts, one of them a NCCL job of two ranks,
#   exported into one directory: host=/rank= partitions; every table equals
#   the SQLite export of its trace row for row (the trace's own tables once
#   per partition); the queries of docs/sql.md ("Parquet") equal report
#   --json's per-op percentiles of each rank and each feeding thread's
#   blocked time.  The traces: a fixture job of two ranks, a DataLoader
#   recorded here, the H200's run given another host name (no root: the
#   engine is what is tested, t421 records jobs).
# Without node, npm or the network the test skips, except under CI=true.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

missing() {
	[ "${CI:-}" = true ] && fail "$* (CI must run it: contrib/install-deps.sh test installs nodejs and npm)"
	skip "$*"
}
command -v node >/dev/null || missing "needs node (contrib/install-deps.sh test)"
npm_dir=${IFT_BUILD:-$IFT_SRC/build}/npm-duckdb
if [ ! -f "$npm_dir/node_modules/@duckdb/node-api/package.json" ]; then
	command -v npm >/dev/null || missing "needs npm to install @duckdb/node-api"
	mkdir -p "$npm_dir" || fail "cannot make $npm_dir"
	if ! timeout 300 npm install --prefix "$npm_dir" --no-audit --no-fund --no-save \
		@duckdb/node-api >npm.log 2>&1; then
		tail -5 npm.log
		missing "cannot install @duckdb/node-api from npm (offline?)"
	fi
fi
duck() {	# duck QUERIES.json > OUT.json
	timeout 300 node "$IFT_SRC/tests/e2e/duckdb_query.mjs" "$npm_dir/node_modules" "$1"
}

# ---- random files: as written, filters included
"$IFT_TOOLS/pqfuzz" -o groups.parquet -s 1 -n 5000 -g 701 >groups.json || fail "pqfuzz failed"
"$IFT_TOOLS/pqfuzz" -o big.parquet -s 2 -n 60000 >big.json || fail "pqfuzz failed"
for f in groups big; do
	python3 - $f <<'PY' >$f.q || fail "queries"
import json, sys
f = sys.argv[1] + ".parquet"
print(json.dumps({
    "rows": "SELECT * FROM read_parquet('%s') ORDER BY id" % f,
    "neg": "SELECT count(*) AS n FROM read_parquet('%s') WHERE v < 0" % f,
    "max": "SELECT count(*) AS n FROM read_parquet('%s') WHERE v = 9223372036854775807" % f,
    "few": "SELECT count(*) AS n FROM read_parquet('%s') WHERE few = 'ncclAllReduce'" % f,
    "gt": "SELECT count(*) AS n FROM read_parquet('%s') WHERE many > 'row 5'" % f,
    "huge": "SELECT count(*) AS n FROM read_parquet('%s') WHERE d > 1e299" % f,
    "nulls": "SELECT count(*) AS n FROM read_parquet('%s') WHERE many IS NULL" % f,
}))
PY
	duck $f.q >$f.out || fail "DuckDB could not read $f.parquet: $(tail -3 $f.out)"
	python3 - $f.json $f.out <<'PY' || fail "DuckDB read $f.parquet otherwise than written"
import json, sys
truth = [json.loads(l) for l in open(sys.argv[1])]
got = json.load(open(sys.argv[2]))
err = []
if len(got["rows"]) != len(truth):
    err.append("%d rows read, %d written" % (len(got["rows"]), len(truth)))
for a, b in zip(got["rows"], truth):
    row = [int(a["id"]), a["v"], a["d"], a["few"], a["many"], a["none"]]
    same = row[0] == b[0] and row[1] == b[1] and row[3:] == b[3:] and \
        (row[2] is None) == (b[2] is None) and (row[2] is None or float(row[2]) == b[2])
    if not same:
        err.append("row %s read as %s" % (b, row))
        break
want = {
    "neg": sum(1 for r in truth if r[1] is not None and int(r[1]) < 0),
    "max": sum(1 for r in truth if r[1] == str(2**63 - 1)),
    "few": sum(1 for r in truth if r[3] == "ncclAllReduce"),
    "gt": sum(1 for r in truth if r[4] is not None and r[4].encode() > b"row 5"),
    "huge": sum(1 for r in truth if r[2] is not None and r[2] > 1e299),
    "nulls": sum(1 for r in truth if r[4] is None),
}
for k, w in want.items():
    n = int(got[k][0]["n"])
    if n != w or not w:
        err.append("%s: %d rows, %d written" % (k, n, w))
print(sys.argv[1], len(truth), "rows,", {k: w for k, w in want.items()})
if err:
    sys.exit("; ".join(err))
PY
done

# ---- several traces into one directory: a job of two ranks (starve-tsv.py's
# fixture), a DataLoader recorded on this machine, the H200's run as another
# host (tracemeta.py gives it its own host.name)
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train --workers 5" ranks >job.tsv ||
	fail "starve-tsv.py failed"
"$IFT_TOOLS/tsv2trace" -o a.trace <job.tsv >/dev/null || fail "tsv2trace failed"
cp "$IFT_FIXTURES/examples/dataloader-starvation.trace" b.trace
python3 "$IFT_SRC/tests/e2e/tracemeta.py" "$IFT_FIXTURES/h200/direct.trace" c.trace \
	host.name=h200-node1 || fail "tracemeta failed"
"$IFT" export --format parquet -i a.trace -i b.trace -i c.trace -o pq ||
	fail "export --format parquet failed"
for t in a b c; do
	"$IFT" export --format sqlite -i $t.trace -o $t.db || fail "export --format sqlite failed"
done
"$IFT" report --json -i a.trace -i b.trace -i c.trace >report.json || fail "report failed"
for part in host=unknown/rank=-1 host=unknown/rank=0 host=unknown/rank=1 host=vm/rank=-1 \
	host=h200-node1/rank=-1; do
	[ -f "pq/$part/calls.parquet" ] || fail "no $part partition: $(find pq -name calls\*)"
done
[ ! -e pq/host=vm/rank=0 ] || fail "a rank partition for a trace without NCCL"
# the queries: every table in full, and docs/sql.md's Parquet queries
python3 - a.db "$IFT_SRC/docs/sql.md" <<'PY' >pq.q || fail "queries"
import json, re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                   "AND name NOT LIKE 'sqlite%' ORDER BY name")]
q = {"table " + t: "SELECT * EXCLUDE (host, rank) FROM read_parquet('pq/*/*/%s.*parquet', "
     "hive_partitioning = true, union_by_name = true)" % t for t in tables}
q["partitions"] = "SELECT DISTINCT host, rank FROM read_parquet('pq/*/*/meta*.parquet', " \
    "hive_partitioning = true)"
# a call's attributions sit in its call's partition (a rank's holds one trace's)
q["stray attrs"] = "SELECT count(*) AS n, (SELECT count(*) FROM read_parquet(" \
    "'pq/*/*/call_attrs*.parquet', hive_partitioning = true) WHERE rank >= 0) AS total " \
    "FROM read_parquet('pq/*/*/call_attrs*.parquet', hive_partitioning = true) a " \
    "ANTI JOIN read_parquet('pq/*/*/calls*.parquet', hive_partitioning = true) c " \
    "ON a.host = c.host AND a.rank = c.rank AND a.call_id = c.id WHERE a.rank >= 0"
doc = open(sys.argv[2]).read()
doc = doc[doc.index("## Parquet"):]
for m in re.finditer(r"```sql\n-- (.+?)\n(.*?)```", doc, re.S):
    q["doc " + m.group(1)] = m.group(2).replace("'DIR/", "'pq/")
print(json.dumps(q))
PY
grep -q '"doc per-op percentiles per rank"' pq.q && grep -q '"doc blocked time of each feeding thread"' pq.q ||
	fail "docs/sql.md lost its Parquet queries"
duck pq.q >pq.out || fail "DuckDB could not query the export: $(tail -3 pq.out)"
python3 - pq.out a.db b.db c.db report.json <<'PY' || fail "DuckDB's answers differ from the SQLite export or the report"
import collections, json, sqlite3, sys
got = json.load(open(sys.argv[1]))
dbs = [sqlite3.connect(p) for p in sys.argv[2:5]]
rep = json.load(open(sys.argv[5]))
err = []
def norm(v):
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, float):
        return round(v, 6)
    return str(v)
nparts = len(got["partitions"])
for name, rows in got.items():
    if not name.startswith("table "):
        continue
    t = name[6:]
    want = collections.Counter()
    for db in dbs:
        cur = db.execute('SELECT * FROM "%s"' % t)
        cols = [d[0] for d in cur.description]
        # the trace's own tables are in each of its partitions: its ranks' and -1
        ranks = db.execute("SELECT count(DISTINCT pid) FROM calls "
                           "WHERE op LIKE 'ncclCommInitRank%'").fetchone()[0]
        copies = 1 if "pid" in cols else 1 + ranks
        for r in cur:
            want[tuple(norm(v) if not isinstance(v, float) else round(v, 6) for v in r)] += copies
    # DuckDB's JSON: BIGINT as strings, DOUBLE as numbers (499.0 as 499)
    have = collections.Counter(tuple(round(float(r[c]), 6) if isinstance(r[c], (int, float))
                                     else r[c] for c in r) for r in rows)
    if have != want:
        diff = list((have - want).items())[:1] + list((want - have).items())[:1]
        err.append("%s: %d rows in Parquet, %d in SQLite; e.g. %s" % (t, sum(have.values()),
                   sum(want.values()), diff))
stray = got["stray attrs"][0]
if int(stray["n"]) or not int(stray["total"]):
    err.append("%s of %s call attributions of the ranks' partitions away from their call"
               % (stray["n"], stray["total"]))
# the docs' queries against report --json: each trace's processes, by host
want = collections.Counter()
for tr in rep["traces"]:
    host = tr["host"] or "unknown"
    for p in tr["report"]["processes"]:
        for o in p["ops"]:
            want[(host, p["pid"], o["op"], o["calls"], o["p50_ns"], o["p99_ns"], o["max_ns"])] += 1
have = collections.Counter((r["host"], int(r["pid"]), r["op"], int(r["calls"]), int(r["p50_ns"]),
                            int(r["p99_ns"]), int(r["max_ns"]))
                           for r in got["doc per-op percentiles per rank"])
n = sum(have.values())
if have != want:
    err.append("per-op percentiles: DuckDB alone %s, report alone %s"
               % (list(have - want)[:2], list(want - have)[:2]))
want = collections.Counter((tr["host"] or "unknown", t["tid"], t["blocked_ns"], t["runqueue_wait_ns"])
                           for tr in rep["traces"] for p in tr["report"]["processes"]
                           for t in p["threads"] if t["role"] == "cuda thread")
feeding = got["doc blocked time of each feeding thread"]
have = collections.Counter((r["host"], int(r["tid"]), int(r["blocked_ns"]), int(r["runqueue_wait_ns"]))
                           for r in feeding)
if have != want or len(feeding) < 3:
    err.append("feeding threads: DuckDB %s, report %s" % (sorted(have), sorted(want)))
ranks = {r["rank"] for r in got["doc per-op percentiles per rank"]}
if ranks != {"-1", "0", "1"}:
    err.append("ranks in the percentiles: %s" % sorted(ranks))
if n < 8:
    err.append("only %d per-op rows" % n)
print("tables:", sum(1 for k in got if k.startswith("table ")), "partitions:", nparts,
      "per-op rows:", n, "feeding threads:", len(feeding))
if err:
    sys.exit("; ".join(err[:5]))
PY

exit 0
