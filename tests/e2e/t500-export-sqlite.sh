#!/usr/bin/env bash
# export --format sqlite keeps every event: each table has as many rows as
# info counts in the trace, the task tables as many processes and threads as
# info's task line; the views give the figures report --json gives (per op:
# calls, errors, total, min, p50, p95, p99, max; per process: CUDA time and
# the scheduler's split); the chains are report's; indexes on time and task.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 (its sqlite3 module) to read the database"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

"$IFT_TOOLS/gentrace" -o g.trace -n 300000 -s 11 -w 6 >/dev/null || fail "gentrace failed"
"$IFT" info -i g.trace >info.out 2>&1 || fail "info failed: $(cat info.out)"
"$IFT" report -i g.trace --json >report.json 2>err || fail "report --json failed: $(cat err)"

echo stale >g.db	# replaced, not appended to
"$IFT" export -i g.trace --format sqlite -o g.db >out 2>err; rc=$?
[ $rc -eq 0 ] || fail "export exited $rc: $(cat err)"
[ ! -s out ] && [ ! -s err ] || fail "export of a good trace printed something: $(cat out err)"
[ ! -e g.db.part ] || fail "export left g.db.part"

# info's table block: "name events chunks bytes bytes/ev"
awk '
	$1 == "table" && $2 == "events" { on = 1; next }
	on && $1 == "total" { gsub(",", "", $2); print "total", $2; exit }
	on && NF == 5 { gsub(",", "", $2); print $1, $2 }
' info.out >counts
read -r nproc nother < <(sed -n 's/^tasks: *\([0-9]*\) processes, \([0-9]*\) other threads.*/\1 \2/p' info.out)
[ -n "$nproc" ] || fail "info has no tasks line: $(cat info.out)"

python3 - g.db counts report.json "$nproc" "$nother" <<'PY' || fail "the database does not agree with info and report"
import json, sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
q = lambda sql, *a: db.execute(sql, a).fetchall()
counts = dict(l.split() for l in open(sys.argv[2]))
report = json.load(open(sys.argv[3]))
bad = []

def same(what, got, want):
    if got != want:
        bad.append("%s: database %r, want %r" % (what, got, want))

table = {"calls": "calls", "switches": "switches", "wakeups": "wakeups",
         "page_allocs": "page_allocs", "tasks": "task_events", "samples": "samples",
         "profile": "profile", "gpu_samples": "gpu_samples"}
for name, n in counts.items():
    if name == "total":
        same("rows of the events view", q("SELECT count(*) FROM events")[0][0], int(n))
    else:
        same("rows of " + table[name], q("SELECT count(*) FROM " + table[name])[0][0], int(n))
nproc, nother = int(sys.argv[4]), int(sys.argv[5])
same("processes", q("SELECT count(*) FROM processes")[0][0], nproc)
same("threads", q("SELECT count(*) FROM threads")[0][0], nproc + nother)

# per op, in report's order (most time first)
keys = ["calls", "nested_calls", "errors", "total_ns", "mean_ns", "min_ns",
        "p50_ns", "p95_ns", "p99_ns", "max_ns"]
rows = q("SELECT op, api, %s FROM op_summary" % ", ".join(keys))
same("ops in op_summary", [r[0] for r in rows], [o["op"] for o in report["ops"]])
for r, o in zip(rows, report["ops"]):
    same(o["op"] + " api", r[1], o["api"])
    for k, v in zip(keys, r[2:]):
        same("%s %s" % (o["op"], k), v, o[k])

# per process
keys = [("cuda_calls", "cuda_calls"), ("cuda_ns", "cuda_ns"), ("on_cpu_ns", "on_cpu_ns"),
        ("runqueue_wait_ns", "runqueue_wait_ns"), ("blocked_ns", "blocked_ns"),
        ("involuntary_switches", "involuntary_switches"),
        ("voluntary_switches", "voluntary_switches"),
        ("wakeups", "wakeups"), ("max_off_cpu_ns", "max_off_cpu_ns"),
        ("page_allocs", "page_allocs"), ("page_alloc_bytes", "page_alloc_bytes")]
rows = q("SELECT pid, comm, role, thread_count, %s FROM process_summary" % ", ".join(k for k, _ in keys))
same("processes in process_summary", [r[0] for r in rows], [p["pid"] for p in report["processes"]])
for r, p in zip(rows, report["processes"]):
    same("%d comm" % p["pid"], r[1], p["comm"])
    same("%d role" % p["pid"], r[2], p.get("role"))
    same("%d threads" % p["pid"], r[3], len(p["threads"]))
    for (k, jk), v in zip(keys, r[4:]):
        same("%d %s" % (p["pid"], k), v, p[jk])

# the chains, in rank order, with their evidence and recommendations
rows = q("SELECT rank, severity, cause, phase, op, pid, tid, cost_ns, summary, stage FROM chains ORDER BY rank")
same("chains", len(rows), len(report["chains"]))
for r, c in zip(rows, report["chains"]):
    same("chain %d" % r[0], r[1:], (c["severity"], c["cause"], c["phase"], c["op"], c["pid"],
                                     c["tid"], c["cost_ns"], c["summary"], c["stage"]))
    recs = [x[0] for x in q("SELECT text FROM chain_recommendations WHERE chain = ? ORDER BY seq", r[0])]
    same("chain %d recommendations" % r[0], recs, c["recommendations"])
    steps = q("SELECT count(*) FROM chain_steps WHERE chain = ?", r[0])[0][0]
    same("chain %d steps" % r[0], steps, len(c["timeline"]))
if not report["chains"]:
    bad.append("report found no chain on this trace: the test checks nothing of them")

# one call's split adds up, and the trace row is report's
same("trace start", q("SELECT start_ts FROM trace")[0][0], report["trace"]["start_ts"])
same("trace duration", q("SELECT duration_ns FROM trace")[0][0], report["trace"]["duration_ns"])
over = q("SELECT count(*) FROM calls WHERE on_cpu_ns + runqueue_wait_ns + blocked_ns > dur_ns")[0][0]
same("calls whose split exceeds their duration", over, 0)
same("calls without a split", q("SELECT count(*) FROM calls WHERE on_cpu_ns IS NULL")[0][0], 0)

# the names of 0.1 (docs/report.md, Names) hold the same values until 0.2
for table, pairs in (("calls", ("runqueue_ns runqueue_wait_ns", "involuntary involuntary_switches",
                                "voluntary voluntary_switches")),
                     ("threads", ("first_ts first_seen_ts", "last_ts last_seen_ts",
                                  "involuntary involuntary_switches", "voluntary voluntary_switches",
                                  "max_off_cpu_ts max_off_cpu_at_ts")),
                     ("process_summary", ("threads thread_count", "involuntary involuntary_switches",
                                          "voluntary voluntary_switches"))):
    differ = " OR ".join("%s IS NOT %s" % tuple(p.split()) for p in pairs)
    n, odd = q("SELECT count(*), sum(%s) FROM %s" % (differ, table))[0]
    same("%s rows whose 0.1 names differ from the new" % table, (n > 0, odd), (True, 0))

# indexes on time and on task, used by the planner
idx = {r[0]: r[1] for r in q("SELECT name, sql FROM sqlite_master WHERE type = 'index'")}
for t in ("calls", "switches", "wakeups", "page_allocs"):
    if not any(n.startswith(t + "_") and "(ts)" in s for n, s in idx.items()):
        bad.append("no index on %s(ts)" % t)
    if not any(n.startswith(t + "_") and "(tid, ts)" in s for n, s in idx.items()):
        bad.append("no index on %s(tid, ts)" % t)
plan = " ".join(r[3] for r in q("EXPLAIN QUERY PLAN SELECT * FROM switches WHERE tid = 1 AND ts > 5"))
if "USING INDEX" not in plan:
    bad.append("a lookup by task does not use an index: " + plan)

for b in bad[:20]:
    print(b)
sys.exit(1 if bad else 0)
PY

# record --stack: calls.stack_id and the stacks table hold the frames
# report --json lists per call site; the call_sites view counts as it does
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train --workers 5" stacks >s.tsv ||
	fail "starve-tsv.py failed"
"$IFT_TOOLS/tsv2trace" -o s.trace <s.tsv >/dev/null || fail "tsv2trace failed"
"$IFT" report -i s.trace --json >s.json 2>err || fail "report --json of s.trace failed: $(cat err)"
"$IFT" export -i s.trace --format sqlite -o s.db 2>err || fail "export of s.trace failed: $(cat err)"
python3 - s.db s.json <<'PY' || fail "the stacks in the database are not report's"
import json, sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
q = lambda sql, *a: db.execute(sql, a).fetchall()
sites = json.load(open(sys.argv[2])).get("stacks") or []
bad = []
if not sites:
    bad.append("report found no call sites: the test checks nothing")
for s in sites:
    got = [r[0] for r in q("SELECT frame FROM stacks WHERE stack_id = ? ORDER BY depth", s["stack_id"])]
    if got != s["frames"]:
        bad.append("stack %d: %s, report: %s" % (s["stack_id"], got, s["frames"]))
    n = q("SELECT count(*) FROM calls WHERE op = ? AND stack_id = ?", s["op"], s["stack_id"])[0][0]
    if n != s["calls"]:
        bad.append("stack %d of %s: %d calls, report: %d" % (s["stack_id"], s["op"], n, s["calls"]))
    v = q("SELECT calls, frames FROM call_sites WHERE op = ? AND stack_id = ?", s["op"], s["stack_id"])
    if v != [(s["calls"], " <- ".join(s["frames"]))]:
        bad.append("call_sites of stack %d: %s" % (s["stack_id"], v))
# the columns are the frame's parts
for sid, depth, mod, sym, frame in q("SELECT stack_id, depth, module, symbol, frame FROM stacks"):
    if sym is not None and not frame.replace("[python] ", "").startswith(sym + "+0x"):
        bad.append("stack %d frame %d: symbol %s, frame %s" % (sid, depth, sym, frame))
    if mod is not None and sym is not None and not frame.endswith("(%s)" % mod.rsplit("/", 1)[-1]):
        bad.append("stack %d frame %d: module %s, frame %s" % (sid, depth, mod, frame))
if q("SELECT count(*) FROM calls WHERE stack_id NOT IN (SELECT stack_id FROM stacks)")[0][0]:
    bad.append("calls name stacks the table lacks")
for b in bad[:20]:
    print(b)
sys.exit(1 if bad else 0)
PY
# the GPUs NVML measured (starve-tsv.py gpubound): gpu_stages and chain_gpu
# hold report --json's gpu.stages and chains[].gpu; g.trace, unmeasured, none
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train" gpubound >gb.tsv &&
	"$IFT_TOOLS/tsv2trace" -o gb.trace <gb.tsv >/dev/null || fail "no gpubound trace"
"$IFT" report -i gb.trace --json >gb.json 2>err || fail "report --json of gb.trace failed: $(cat err)"
"$IFT" export -i gb.trace --format sqlite -o gb.db 2>err || fail "export of gb.trace failed: $(cat err)"
python3 - gb.db gb.json g.db <<'PY' || fail "the GPU's figures in the database are not report's"
import json, sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
q = lambda sql: db.execute(sql).fetchall()
r = json.load(open(sys.argv[2]))
bad = []
st = r["gpu"]["stages"]
want = sorted((k, v["covered_ns"], v["busy_ns"], v["idle_ns"], v["explained_ns"], v["unexplained_ns"])
              for k, v in st.items())
if sorted(q("SELECT * FROM gpu_stages")) != want:
    bad.append("gpu_stages %r, report %r" % (q("SELECT * FROM gpu_stages"), want))
want = [(i + 1, c["gpu"]["idle_ns"], c["gpu"]["idle_permille"], c["gpu"]["meanwhile"]["covered_ns"],
         c["gpu"]["meanwhile"]["busy_ns"], int(c["gpu"]["not_waiting"])) for i, c in enumerate(r["chains"])]
if q("SELECT * FROM chain_gpu ORDER BY chain") != want or not want:
    bad.append("chain_gpu %r, report %r" % (q("SELECT * FROM chain_gpu ORDER BY chain"), want))
un = sqlite3.connect("file:%s?mode=ro" % sys.argv[3], uri=True)
if un.execute("SELECT (SELECT count(*) FROM gpu_stages) + (SELECT count(*) FROM chain_gpu)").fetchone()[0]:
    bad.append("a trace without NVML has GPU rows")
sys.exit("\n".join(bad) or None)
PY
# a trace without stacks: an empty table, no stack_id
python3 - g.db <<'PY' || fail "a trace without stacks has some in the database"
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
n = db.execute("SELECT (SELECT count(*) FROM stacks), (SELECT count(*) FROM calls WHERE stack_id IS NOT NULL)").fetchone()
sys.exit(0 if n == (0, 0) else "%d frames, %d calls with a stack" % n)
PY
exit 0
