# record --keep-last, the flight recorder.  simtrain runs a GPU-bound loop
# (the workload of contrib/bench/live.sh, at its event rate) for 24 s and
# then stalls 1.5 s in one synchronize (a 1.5 s kernel on the modelled
# device), which it logs; 27 s in all (make bench watches the recorder's
# memory over 60 s: contrib/bench/live.sh).  Recorded with --keep-last 5s --trigger
# 'cudaStreamSynchronize>500ms' --after 1s, and asked once for a snapshot
# through `ingero-ftrace snapshot PID` before the stall:
#  - the asked-for snapshot is written before the trigger's, its window
#    ending where it was asked (between the clock read before `snapshot`
#    and the signal's delivery after it);
#  - exactly one snapshot is the trigger's: its call lies inside the
#    workload's timing of the stall, its window is 5 s and starts no
#    earlier than 5 s before the stall returned, it ends 1 s after (give
#    or take a flush), and its report finds the device the cause: a
#    GPU-bound chain on cudaStreamSynchronize costing most of the device's
#    time in the call, its slowest call the trigger's;
#  - the spool holds no more than the window's pieces and four, the
#    recorder's anonymous RSS in the run's last third is within 8 MiB of its first
#    third's (docs/benchmarks.md: the plain recording's), and nothing but
#    the snapshots is left at the end.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
need_root
need_sim

# CLOCK_MONOTONIC (the trace's clock) at the asking, from the wall clock:
# date starts in an instant where python takes seconds in an emulated guest
mono_off=$(python3 -c 'import time; print(time.monotonic_ns() - time.time_ns())')
mono() { echo $(($(date +%s%N) + mono_off)); }

$PIN "$IFT" record --keep-last 5s --trigger 'cudaStreamSynchronize>500ms' --after 1s \
	-o fr.trace -- "$SIMTRAIN" healthy --loop-ms 27000 --stall-at-ms 24000 --stall-ms 1500 \
	-o fr.jsonl >rec.out 2>rec.err &
rp=$!
trap 'kill $rp 2>/dev/null; wait $rp 2>/dev/null' EXIT

# ask for a snapshot 8 s into the loop, before the stall: the loop's
# start, which the workload logs as it comes, is the recording's (the
# command starts once every probe is armed), however long a slow machine
# takes to set it up
deadline=$((SECONDS + 120))
until grep -q '"type":"begin"' fr.jsonl 2>/dev/null; do
	kill -0 $rp 2>/dev/null || fail "the recorder ended early: $(cat rec.err)"
	[ $SECONDS -lt $deadline ] || fail "the workload's loop did not begin in 120 s: $(cat rec.err)"
	sleep 0.1
done
# the recorder's anonymous RSS (its heap: the profile's perf rings, mapped
# at a fixed size, count in VmRSS as they are first read, faster the more
# the threads run) and the spool's pieces, every half second, from the
# loop's start until the recorder ends
: >samples.txt
# (bash's own reads and globs: a fork each costs a loaded guest a second)
( shopt -s nullglob
  while kill -0 $rp 2>/dev/null; do
	rss=
	while read -r k v _; do
		[ "$k" = RssAnon: ] && rss=$v
	done </proc/$rp/status 2>/dev/null
	spool=(.fr.keep.*.trace .fr.keep.*.trace.part)
	[ -n "$rss" ] && echo "$rss ${#spool[@]}"
	sleep 0.5
done ) >>samples.txt &
sp=$!
started=$SECONDS
until [ $((SECONDS - started)) -ge 8 ]; do
	kill -0 $rp 2>/dev/null || fail "the recorder ended early: $(cat rec.err)"
	sleep 0.2
done
asked0=$(mono)
"$IFT" snapshot $rp 2>snap.err || fail "snapshot $rp failed: $(cat snap.err)"
asked1=$(mono)
until grep -q "snapshot 1: wrote 'fr.1.trace'" rec.err; do
	[ $SECONDS -lt $deadline ] || fail "no snapshot after it was asked for: $(cat rec.err)"
	kill -0 $rp 2>/dev/null || break
	sleep 0.1
done
wait $rp
rc=$?
trap - EXIT
wait $sp
[ $rc = 0 ] || fail "record --keep-last exited $rc: $(tail -3 rec.err)"
assert_no_leftover_of $rp
ls -a >left.txt
grep -q '\.keep\.' left.txt && fail "the spool was left: $(grep keep left.txt)"
[ ! -e fr.trace ] && [ ! -e fr.trace.part ] || fail "--keep-last wrote fr.trace itself"
[ -s fr.1.trace ] && [ -s fr.2.trace ] && [ ! -e fr.3.trace ] ||
	fail "not two snapshots: $(grep -v '^\.' left.txt | tr '\n' ' ')"
for i in 1 2; do
	"$IFT" info -i fr.$i.trace >info.$i || fail "snapshot $i does not open"
	"$IFT" report --json -i fr.$i.trace >fr.$i.json || fail "report on snapshot $i failed"
done
grep -q '^record.snapshot_why *asked' info.1 || fail "snapshot 1 is not the asked one: $(grep why info.1)"
grep -q '^record.snapshot_why *cudaStreamSynchronize of' info.2 ||
	fail "snapshot 2 is not the trigger's: $(grep why info.2)"

sim_check fr.jsonl info.1 info.2 fr.2.json samples.txt "$asked0" "$asked1" <<'PY' ||
import re, sys
from simcheck import *

truth = Truth(sys.argv[1])
meta = [dict(l.split(None, 1) if len(l.split(None, 1)) == 2 else (l.strip(), "")
             for l in open(p) if l.strip()) for p in sys.argv[2:4]]
r = load_report(sys.argv[4])
samples = [tuple(int(x) for x in l.split()) for l in open(sys.argv[5]) if l.strip()]
asked0, asked1 = int(sys.argv[6]), int(sys.argv[7])
chk = Checks("keep-last")
S = 1_000_000_000
span = lambda m: (int(m["record.start_ns"]), int(m["record.stop_ns"]))

# at once: its window ends where it was asked, between the clock read
# before `snapshot PID` and the signal's delivery after it returned (a
# second allowed for a loaded machine's scheduling), not at the stall or
# at the end
a0, a1 = span(meta[0])
chk.ok(asked0 <= a1 <= asked1 + S, "the asked-for snapshot ends %.3f s after the asking began, "
       "which took %.3f s" % ((a1 - asked0) / S, (asked1 - asked0) / S))

stall = truth.stall
t0, t1 = stall["t0"], stall["t1"]
s0, s1 = span(meta[1])
print("  snapshot 2: %.3f s to %.3f s around the stall %.3f-%.3f s" %
      ((s0 - t0) / S, (s1 - t0) / S, 0, (t1 - t0) / S))
chk.ok(abs((s1 - s0) - 5 * S) <= S // 1000, "its window is %.3f s, not 5 s" % ((s1 - s0) / S))
chk.ok(s0 >= t1 - 5 * S and s0 <= t0, "it starts %.3f s before the stall returned, which it "
       "must hold" % ((t1 - s0) / S))
# the trigger is the call's return as traced, the window ends --after it
chk.ok(t1 + S - S // 5 <= s1 <= t1 + S + S // 5, "it ends %.3f s after the stall returned, "
       "--after 1s" % ((s1 - t1) / S))
# the trigger's call is the stall: inside the workload's own timing of it
# (the same clock; the kernel ran from its launch, before t0, so the call
# is not the whole 1.5 s), slower than --trigger's 500 ms, and the
# snapshot's slowest synchronize
why = re.match(r"cudaStreamSynchronize of (\d+) ns by tid (\d+) at (\d+)$",
               meta[1]["record.snapshot_why"].strip())
if chk.ok(why, "the trigger's reason is not a call: %s" % meta[1]["record.snapshot_why"]):
    dur, at = int(why.group(1)), int(why.group(3))
    chk.ok(t0 <= at and at + dur <= t1 and dur > 500 * 1000000,
           "the trigger's call %.3f-%.3f s is not the stall 0-%.3f s" %
           ((at - t0) / S, (at + dur - t0) / S, (t1 - t0) / S))
    ops = {o["op"]: o for o in r["ops"]}
    sync = ops.get("cudaStreamSynchronize")
    if chk.ok(sync is not None, "no cudaStreamSynchronize in the snapshot"):
        chk.ok(sync["max_ns"] == dur, "its slowest synchronize %s, the trigger's %s" %
               (fmt(sync["max_ns"]), fmt(dur)))
# the device is the cause: a GPU-bound chain on cudaStreamSynchronize
# holding most of the device's part of the trigger's call, from its entry
# to when the modelled device finished (the workload's "done").  Not all
# of it: the thread's time on a CPU, or waiting for one, before it blocked
# in the call is CPU contention on a loaded machine (2-190 ms in the
# guests), and the call's wake-up after the device is the thread's too
c = [c for c in r["chains"] if c["cause"] == "gpu_bound"]
device_ns = None
if why:
    done = [d for (op, c0, c1), d in zip(truth.calls, truth.done)
            if op == "cudaStreamSynchronize" and c0 <= at <= c1 and d]
    device_ns = done[0] - at if done else None
if chk.ok(device_ns, "the workload has no device time for the trigger's call"):
    chk.ok(c and c[0]["op"] == "cudaStreamSynchronize" and c[0]["cost_ns"] >= 0.8 * device_ns,
           "no GPU-bound chain on cudaStreamSynchronize costing most of the device's %s in the "
           "stall: %s" % (fmt(device_ns), [(x["cause"], x["op"], fmt(x["cost_ns"]))
                                            for x in r["chains"]]))

# the spool: the window's pieces (5 s of 1.25 s ones), two before, the one written, one more
chk.ok(max(n for _, n in samples) <= 4 + 2 + 1 + 1, "the spool held %d pieces" %
       max(n for _, n in samples))
third = max(1, len(samples) // 3)
early = max(rss for rss, _ in samples[:third])
late = max(rss for rss, _ in samples[-third:])
print("  recorder anonymous RSS: %d KiB at most in the first third, %d in the last" %
      (early, late))
chk.ok(late <= early + 8192, "the recorder grew from %d to %d KiB" % (early, late))
chk.done()
PY
	fail "the flight recorder disagrees with the workload (above)"
assert_no_leftovers
