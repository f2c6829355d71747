#!/usr/bin/env bash
# export and query on traces recorded on a real GPU host (an H200 run, in
# fixtures/h200): every table as many rows as info
# counts, the per-op view what report --json says, and the starvation query
# of docs/sql.md runs.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dir=$IFT_FIXTURES/h200
ls "$dir"/*.trace >/dev/null 2>&1 || fail "no recorded GPU traces in $dir"
command -v python3 >/dev/null || skip "needs python3 to read the database"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

for tr in "$dir"/*.trace; do
	name=$(basename "$tr" .trace)
	"$IFT" export -i "$tr" --format sqlite -o "$name.db" 2>err || fail "export of $tr failed: $(cat err)"
	"$IFT" info -i "$tr" 2>/dev/null | awk '
		$1 == "table" && $2 == "events" { on = 1; next }
		on && $1 == "total" { exit }
		on && NF == 5 { gsub(",", "", $2); print $1, $2 }' >"$name.counts"
	"$IFT" report -i "$tr" --json >"$name.json" 2>/dev/null || fail "report of $tr failed"
	python3 - "$name.db" "$name.counts" "$name.json" <<'PY' || fail "$tr: the database does not agree with info and report"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
table = {"calls": "calls", "switches": "switches", "wakeups": "wakeups",
         "page_allocs": "page_allocs", "tasks": "task_events", "samples": "samples",
         "profile": "profile", "gpu_samples": "gpu_samples"}
bad = []
for line in open(sys.argv[2]):
    t, n = line.split()
    got = db.execute("SELECT count(*) FROM " + table[t]).fetchone()[0]
    if got != int(n):
        bad.append("%s: %d rows, info says %s" % (t, got, n))
ops = {r[0]: r[1:] for r in db.execute("SELECT op, calls, p50_ns, p99_ns, total_ns FROM op_summary")}
report = json.load(open(sys.argv[3]))
for o in report["ops"]:
    want = (o["calls"], o["p50_ns"], o["p99_ns"], o["total_ns"])
    if ops.get(o["op"]) != want:
        bad.append("%s: %r, report says %r" % (o["op"], ops.get(o["op"]), want))
if len(ops) != len(report["ops"]) or not ops:
    bad.append("%d ops in the view, %d in report" % (len(ops), len(report["ops"])))
if db.execute("SELECT count(*) FROM calls WHERE op IS NULL OR comm = ''").fetchone()[0]:
    bad.append("calls without a resolved op or comm")
for b in bad[:10]:
    print(b)
sys.exit(1 if bad else 0)
PY
	# the example of docs/sql.md: who preempted the CUDA thread inside slow syncs
	"$IFT" query -i "$name.db" --csv "
		SELECT s.next_comm AS preemptor, count(*) AS times
		FROM calls c JOIN switches s ON s.tid = c.tid AND s.ts BETWEEN c.ts AND c.ts + c.dur_ns
		WHERE c.op = 'cudaStreamSynchronize' AND s.preempted
		  AND c.dur_ns > (SELECT p99_ns FROM op_summary WHERE op = 'cudaStreamSynchronize')
		GROUP BY 1 ORDER BY 2 DESC" >"$name.csv" 2>err || fail "the docs' query on $tr failed: $(cat err)"
	head -1 "$name.csv" | grep -q '^preemptor,times' || fail "the docs' query printed no header"
done
exit 0
