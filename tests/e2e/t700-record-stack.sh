#!/usr/bin/env bash
# record --stack: stackpaths reaches cudaStreamSynchronize through three
# known paths (built without frame pointers, through a library of its own);
# every call gets the stack of the path it took, in the program's order, and
# a stripped copy of the library degrades to lib+offset without failing.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
command -v python3 >/dev/null || skip "needs python3 to parse JSON"
B=${IFT_BUILD:-${IFT_TOOLS%/tests/tools}}
prog=$B/tests/workloads/stackpaths
[ -x "$prog" ] || fail "no $prog: build it with 'make workloads'"

# check TRACE TRUTH [stripped|burst]: the calls' stacks against the
# program's truth.  burst: stacks the rings dropped are allowed, but each one
# is counted (stack.lost) and no call gets another call's stack.
check() {
	"$IFT" dump --json -i "$1" --table calls >"$1.calls.json" || fail "dump of $1 failed"
	"$IFT" report --json -i "$1" >"$1.report.json" || fail "report of $1 failed"
	"$IFT" info -i "$1" >"$1.info" 2>&1 || fail "info of $1 failed"
	python3 - "$1.calls.json" "$2" "$1.report.json" "${3:-}" "$1.info" <<'PY' || fail "stacks of $1 differ from the program's paths"
import json, re, sys
calls = [json.loads(l) for l in open(sys.argv[1])]
truth = json.loads(open(sys.argv[2]).read())
report = json.load(open(sys.argv[3]))
stripped = sys.argv[4] == "stripped"
burst = sys.argv[4] == "burst"
info = dict(l.split(None, 1) for l in open(sys.argv[5]) if l.startswith("stack."))
info = {k: int(v) for k, v in info.items() if v.strip().isdigit()}
n = {p: truth[p] for p in "abc"}
# the order the program took them in: a, b, c, a, ... skipping exhausted ones
left, order, k = dict(n), [], 0
while sum(left.values()):
    p = "abc"[k % 3]
    if left[p]:
        left[p] -= 1
        order.append(p)
    k += 1
calls = [c for c in calls if c["event"] == "cudaStreamSynchronize"]
if len(calls) != len(order):
    sys.exit("recorded %d calls, the program made %d" % (len(calls), len(order)))
def names(c):
    return [re.sub(r"\+0x[0-9a-f]+.*", "", f).replace("[python] ", "") for f in c.get("stack", [])]
bad = nostack = 0
where = []
for i, (p, c) in enumerate(zip(order, calls)):
    if burst and "stack" not in c:
        nostack += 1
        where.append(i)
        continue
    want = truth["paths"][p]
    got = names(c)
    if stripped:
        # the library's static function loses its name (lib+offset), its
        # exported ones keep theirs (.dynsym), and so does everything else
        want = [w if w != "sync_common" else "libstackpaths.so" for w in want]
    if got[:len(want)] != want:
        bad += 1
        if bad < 5:
            print("call %d took path %s: stack %s, want %s" % (i, p, c.get("stack"), want))
if bad:
    sys.exit("%d of %d calls have the wrong stack" % (bad, len(calls)))
if nostack != info["stack.lost"] + info["stack.unmatched"]:
    sys.exit("%d calls have no stack (the first %s, the last %s of %d), %d lost and %d unmatched" %
             (nostack, where[0], where[-1], len(calls), info["stack.lost"], info["stack.unmatched"]))
if info["stack.samples"] + info["stack.lost"] != len(calls):
    sys.exit("%d stacks taken and %d lost of %d calls" %
             (info["stack.samples"], info["stack.lost"], len(calls)))
# the events' own count of the calls they saw: each one sampled or lost
if info["stack.fired"] != len(calls):
    sys.exit("the events counted %d calls, the trace has %d" %
             (info["stack.fired"], len(calls)))
if burst:
    # The recorder drains the rings while the program runs: it keeps more
    # stacks than the rings could hold undrained (each sample holds at least
    # stack.bytes).  How many more depends on this machine's CPUs and memory:
    # the program makes stacks as fast as it can, the drain copies them out.
    held = info["stack.rings"] * info["stack.ring_bytes"] // info["stack.bytes"]
    if not info["stack.rings"] or info["stack.samples"] <= held:
        sys.exit("%d of %d stacks kept, the %d rings alone hold %d: not drained" %
                 (info["stack.samples"], len(calls), info["stack.rings"], held))
    print("ok: %d calls at full rate, %d stacks lost, %d kept (rings hold %d)" %
          (len(calls), nostack, info["stack.samples"], held))
    sys.exit(0)
# report: the sites of cudaStreamSynchronize, counts per path
sites = [s for s in report["stacks"] if s["op"] == "cudaStreamSynchronize"]
counts = sorted(s["calls"] for s in sites)
if counts != sorted(n.values()):
    sys.exit("report: site counts %s, the program's %s" % (counts, sorted(n.values())))
share = sum(s["share_calls"] for s in sites)
if abs(share - 1) > 1e-6:
    sys.exit("report: shares of the calls add up to %s" % share)
print("ok: %d calls, %d sites" % (len(calls), len(sites)))
PY
}

"$IFT" record -q --stack=cudaStreamSynchronize --no-host -o paths.trace -- \
	"$prog" 7 13 21 >truth.json 2>record.err &
rp=$!
wait $rp || fail "record failed: $(cat record.err)"
assert_no_leftover_of $rp
check paths.trace truth.json

# at full rate: every call sampled, as fast as the program can call
"$IFT" record -q --stack=cudaStreamSynchronize --no-host -o burst.trace -- \
	"$prog" 5000 5000 5000 >truth3.json 2>record3.err ||
	fail "record of a burst failed: $(cat record3.err)"
check burst.trace truth3.json burst

# a stripped copy of the library, in a tree of its own: frames there are
# lib+offset, the others keep their names
mkdir -p strip/tests/workloads strip/simcuda
cp "$prog" strip/tests/workloads/
cp "$B/simcuda/libcudart.so.12" strip/simcuda/
strip --strip-all -o strip/tests/workloads/libstackpaths.so "$B/tests/workloads/libstackpaths.so"
"$IFT" record -q --stack --no-host -o stripped.trace -- \
	strip/tests/workloads/stackpaths 3 4 5 >truth2.json 2>record2.err ||
	fail "record of the stripped copy failed: $(cat record2.err)"
check stripped.trace truth2.json stripped

# no --stack: no stack column, no STACKS section, reports as before
"$IFT" record -q --no-host -o plain.trace -- "$prog" 1 1 1 >/dev/null 2>plain.err ||
	fail "record without --stack failed: $(cat plain.err)"
"$IFT" dump --json -i plain.trace --table calls | grep -q '"stack":' &&
	fail "a trace without --stack has stacks"
"$IFT" report --json -i plain.trace >plain.json || fail "report failed"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(1 if d.get("stacks") else 0)' plain.json ||
	fail "report of a trace without stacks lists stacks"

# an op that is not probed is a one-line error, and leaves nothing behind
"$IFT" record --stack=noSuchFunction --no-host -o bad.trace -- "$prog" 1 1 1 >/dev/null 2>bad.err &&
	fail "record --stack=noSuchFunction succeeded"
grep -q "noSuchFunction" bad.err || fail "the error does not name the op: $(cat bad.err)"
assert_no_leftovers
exit 0
