#!/usr/bin/env bash
# record --page-allocs=count.  Where the kernel has hist triggers: each
# traced thread's page allocations are counted in the kernel and none is
# written as a row; the report's figure for each thread is at least the
# minor faults the thread counted itself (getrusage: one fresh page each)
# and not far above (the page tables that map them); the untraced
# bystander's allocations are in no count; a report of a window has none.
# Where the kernel has none (this host's own kernel, the 5.10 built without
# them): record refuses in one line naming the feature and its release,
# writes no trace, leaves nothing in tracefs, and check says the same.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
command -v python3 >/dev/null || skip "needs python3 to parse JSON"
cc -O2 -pthread -o pagetouch "$IFT_SRC/tests/workloads/pagetouch.c" ||
	fail "cannot build the workload"

if [ ! -e "$IFT_TRACEFS/events/kmem/mm_page_alloc/hist" ]; then
	"$IFT" record -q --page-allocs=count -o no.trace -- ./pagetouch 2 8 >/dev/null 2>err &
	rp=$!
	wait $rp && fail "record --page-allocs=count succeeded on a kernel without hist triggers"
	[ "$(wc -l <err)" = 1 ] || fail "not one line: $(cat err)"
	grep -q "hist triggers: none; Linux 4.7 brought it" err ||
		fail "the error does not name the feature: $(cat err)"
	[ ! -e no.trace ] || fail "a trace was written"
	assert_no_leftover_of $rp
	"$IFT" check >check.out 2>&1
	grep -q "hist triggers: none;.*CONFIG_HIST_TRIGGERS" check.out ||
		fail "check does not say the kernel lacks hist triggers: $(grep -i hist check.out)"
	echo "ok: no hist triggers in this kernel: refused, nothing left"
	exit 0
fi

# a bystander, untraced, allocating all along: none of its pages may count
./pagetouch 1 64 >bystander.out &
bp=$!
"$IFT" record -q --page-allocs=count -o pc.trace -- ./pagetouch 3 16 >truth 2>err &
rp=$!
wait $rp || fail "record failed: $(cat err)"
wait $bp || fail "the bystander failed"
assert_no_leftover_of $rp
[ "$(wc -l <truth)" = 3 ] || fail "the workload did not report its 3 threads: $(cat truth)"
"$IFT" info -i pc.trace >info || fail "info failed"
"$IFT" report --json -i pc.trace >whole.json || fail "report failed"
# a window of the recording: the counts have no time, so none
"$IFT" report --json -i pc.trace --from 1ms >window.json || fail "report --from failed"
"$IFT" report -i pc.trace --per-process >whole.txt || fail "report (text) failed"
"$IFT" export --format sqlite -i pc.trace -o pc.db || fail "export failed"
python3 - truth info whole.json window.json "$(cat bystander.out)" pc.db <<'PY' || fail "the counts are not the workload's"
import json, re, sqlite3, sys
truth = dict(map(int, l.split()) for l in open(sys.argv[1]))
info = open(sys.argv[2]).read()
whole, window = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
bystander = int(sys.argv[5].split()[0])
m = re.search(r"^page_allocs\s+([\d,]+)", info, re.M)
if not m or int(m.group(1).replace(",", "")):
    sys.exit("page_allocs has rows: %s" % (m.group(0) if m else "no such line"))
for r in (whole, window):
    if r["trace"]["page_allocs"] != "count":
        sys.exit("the report does not say the pages were counted: %r" % r["trace"]["page_allocs"])
threads = {t["tid"]: t for p in whole["processes"] for t in p["threads"]}
if bystander in threads and threads[bystander]["page_allocs"]:
    sys.exit("the untraced bystander %d counted %d pages" % (bystander, threads[bystander]["page_allocs"]))
for tid, flt in truth.items():
    if tid not in threads:
        sys.exit("thread %d is not in the report" % tid)
    n, b = threads[tid]["page_allocs"], threads[tid]["page_alloc_bytes"]
    # each fault a fresh page; the page tables mapping them, 1 in 512
    if not flt <= n <= flt * 1.02 + 64:
        sys.exit("thread %d: %d allocations counted, %d minor faults" % (tid, n, flt))
    if b < 4096 * n:
        sys.exit("thread %d: %d bytes for %d allocations" % (tid, b, n))
    print("ok: thread %d: %d allocations, %d faults" % (tid, n, flt))
for p in window["processes"]:
    for t in p["threads"]:
        if t["page_allocs"]:
            sys.exit("a window has counts: thread %d, %d" % (t["tid"], t["page_allocs"]))
# SQL: each thread's count in threads, none as a system sample
db = sqlite3.connect(sys.argv[6])
for tid in truth:
    got = db.execute("SELECT page_allocs FROM threads WHERE tid = ?", (tid,)).fetchall()
    if [g[0] for g in got] != [threads[tid]["page_allocs"]]:
        sys.exit("threads in SQL: %s for %d, the report %d" % (got, tid, threads[tid]["page_allocs"]))
n = db.execute("SELECT count(*) FROM samples WHERE metric LIKE 'kmem.%'").fetchone()[0]
if n:
    sys.exit("%d per-thread counts among SQL's system samples" % n)
PY
grep -q "^pages .*counted by the kernel" whole.txt || fail "the text does not say the pages were counted"
assert_no_leftovers
exit 0
