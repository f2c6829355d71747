#!/usr/bin/env bash
# record --py-stack: Debian's python3 calls the stand-in runtime through
# ctypes from known lines, functions, a method and a lambda, on three
# threads, and logs each call's own sys._getframe() chain with its thread
# and start and end (tests/workloads/pysites.py).  Every call whose Python
# frames were read in flight has exactly the logged frames; at least 99% of
# the calls of 100 us or more that the machine gives time to read (twice the
# recorder's measured lag, py.lag_p99_ns) have them, 80% of all calls of
# 100 us or more (pysitescheck.py); the share of the faster ones is printed.
# The recorder's counts agree with the calls' flags, and a trace without
# --py-stack has no Python frame.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
need_debian_python
need_simcuda
work=$IFT_SRC/tests/workloads/pysites.py

"$IFT" record -v --cuda-lib "$sim" --py-stack=cudaStreamSynchronize -o py.trace -- \
	$py "$work" "$sim" log.json 100 >record.out 2>record.err &
rp=$!
wait $rp || fail "record failed: $(tail -3 record.err)"
assert_no_leftover_of $rp
grep -q '^  python ' record.err || fail "record -v says nothing of Python frames: $(cat record.err)"
"$IFT" export --format sqlite -i py.trace -o py.db || fail "export of py.trace failed"
python3 "$IFT_SRC/tests/e2e/pysitescheck.py" py.db log.json >check.out ||
	fail "Python frames differ from the workload's: $(cat check.out)"
echo "pysites: $(cat check.out)"

# the recorder's own counts: every sampled call is in flight, late or
# without frames, and the calls' flags say the same
"$IFT" info -i py.trace >info.out || fail "info failed"
python3 - py.db info.out <<'PY' || fail "py.* counts disagree with the calls"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
info = dict(l.split(None, 1) for l in open(sys.argv[2]) if l.startswith("py."))
info = {k: int(v) for k, v in info.items()}
fl = db.execute("SELECT SUM(flags & 4 != 0), SUM(flags & 8 != 0), COUNT(*) FROM calls "
                "WHERE op = 'cudaStreamSynchronize'").fetchone()
if (info["py.in_flight"], info["py.late"]) != (fl[0], fl[1]):
    sys.exit("info: %d in flight, %d late; calls: %d, %d" % (info["py.in_flight"],
             info["py.late"], fl[0], fl[1]))
if info["py.read"] + info["py.none"] + info["py.failed"] != fl[2]:
    sys.exit("%d reads, %d without frames, %d failed for %d calls" % (info["py.read"],
             info["py.none"], info["py.failed"], fl[2]))
# no Python frame outside the sites of calls read in flight, none in a
# site a call without the flag points to
bad = db.execute("SELECT COUNT(*) FROM calls c JOIN stacks s ON s.stack_id = c.stack_id "
                 "WHERE s.flags & 4 AND NOT c.flags & 4").fetchone()[0]
if bad:
    sys.exit("%d Python frames in the sites of calls not read in flight" % bad)
# the lag from a call's entry to its frames' read: ordered, and no late call
# lasted as long as the longest lag (it returned before its read ended)
lag = [info["py.lag_p50_ns"], info["py.lag_p99_ns"], info["py.lag_max_ns"]]
if not 0 < lag[0] <= lag[1] <= lag[2]:
    sys.exit("py.lag_p50_ns, _p99_ns, _max_ns: %s" % lag)
longest = db.execute("SELECT MAX(dur_ns) FROM calls WHERE flags & 8").fetchone()[0]
if longest is not None and longest >= lag[2]:
    sys.exit("a call of %d ns was late, the longest lag is %d ns" % (longest, lag[2]))
PY

# report: the Python call sites of cudaStreamSynchronize, each line's calls
# and time as the calls read in flight say (their innermost Python frame),
# and the coverage line's counts as the calls' flags say
"$IFT" report --json -i py.trace >report.json || fail "report failed"
"$IFT" report -i py.trace >report.txt || fail "report failed"
python3 - py.db report.json report.txt <<'PY' || fail "report's Python call sites disagree with the calls"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rep = json.load(open(sys.argv[2]))
txt = open(sys.argv[3]).read()
inner = {}
for sid, mod, sym, line in db.execute(
        "SELECT stack_id, module, symbol, offset FROM stacks WHERE flags & 4 ORDER BY stack_id, depth"):
    inner.setdefault(sid, (mod, sym, line))
want, late, inflight = {}, 0, 0
for sid, dur, flags in db.execute("SELECT stack_id, dur_ns, flags FROM calls "
                                  "WHERE op = 'cudaStreamSynchronize'"):
    late += bool(flags & 8)
    if flags & 4:
        inflight += 1
        w = want.setdefault(inner[sid], [0, 0])
        w[0] += 1
        w[1] += dur
ops = [o for o in rep.get("py_sites", []) if o["op"] == "cudaStreamSynchronize"]
if len(ops) != 1:
    sys.exit("report --json: no Python call sites for cudaStreamSynchronize")
o = ops[0]
if (o["in_flight"], o["late"]) != (inflight, late):
    sys.exit("report: %d in flight, %d late; the calls: %d, %d" % (o["in_flight"], o["late"], inflight, late))
top = sorted(want.items(), key=lambda kv: -kv[1][1])[:len(o["sites"])]
got = [((s["file"], s["function"], s["line"]), [s["calls"], s["total_ns"]]) for s in o["sites"]]
if got != top or o["sites_total"] != len(want):
    sys.exit("report: sites %s, the calls say %s (%d lines)" % (got, top, len(want)))
# the text names the top line where the user reads it: FILE:LINE in FUNC
f, fn, line = top[0][0]
if "%s:%d in %s" % (f, line, fn) not in txt:
    sys.exit("report's text does not name %s:%d in %s" % (f, line, fn))
PY

# --stack alone reads no Python frame (nor does a run without the profile,
# whose samples have them: t703)
"$IFT" record -q --cuda-lib "$sim" --stack=cudaStreamSynchronize --profile=off -o native.trace -- \
	$py "$work" "$sim" log2.json 5 >/dev/null 2>native.err || fail "record --stack failed: $(cat native.err)"
"$IFT" export --format sqlite -i native.trace -o native.db || fail "export of native.trace failed"
python3 - native.db <<'PY' || fail "--stack alone took Python frames"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("SELECT COUNT(*) FROM stacks WHERE flags & 4").fetchone()[0]
f = db.execute("SELECT COUNT(*) FROM calls WHERE flags & 12").fetchone()[0]
s = db.execute("SELECT COUNT(*) FROM calls WHERE stack_id IS NOT NULL").fetchone()[0]
if n or f or not s:
    sys.exit("%d Python frames, %d calls flagged, %d calls with stacks" % (n, f, s))
PY
assert_no_leftovers
exit 0
