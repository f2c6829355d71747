# top follows a recording while it runs.  simtrain's loader feeds the GPU
# (its batches cost no CPU) until the test, having drawn a frame, asks it
# to starve (40 ms of CPU a batch on 4 workers), and logs the moment it
# does as it comes.  The frame drawn before must show no starvation for
# input; a frame whose window ends 2 s past the moment must show the
# starvation chain naming, by pid, the workers whose batches the thread
# waited for in that window (the workload's own log), and each op's calls a
# second within 10% of the rate the workload timed in that window.  Where
# the thread's own clock says it waited for batches less than half the
# window's time since the moment (an emulated guest's slow CPUs: it is
# busy copying them, or waits for a CPU), the workers kept up and no
# starvation is wanted, but a waker the chain names must be a worker.
# Once the recording is finished, a replayed frame of a window inside the
# starvation holds to the same truth.  The windows' times are checked
# against the trace, not assumed: each frame says where its window lies.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
need_root
need_sim

# the loop starves when the test says so (starve.flag) and ends when the
# test is done (stop.flag), 300 s at most: a machine of any speed
$PIN "$IFT" record -q -o live.trace -- "$SIMTRAIN" loader --loop-ms 300000 \
	--stop-file "$PWD/stop.flag" --starve-file "$PWD/starve.flag" -o live.jsonl >rec.out 2>&1 &
rp=$!
trap 'kill $rp 2>/dev/null; wait $rp 2>/dev/null' EXIT

# frame_until FILE AWK [RE]: top --once on the recording into FILE until AWK
# (given the frame's window end in seconds as `end') is true, and the frame
# has a line matching RE; 110 s at most
frame_until() {
	local out=$1 cond=$2 re=${3:-.} deadline=$((SECONDS + 110)) end
	while [ $SECONDS -lt $deadline ]; do
		kill -0 $rp 2>/dev/null ||
			fail "the recording ended before the frame ($cond) at ${SECONDS}s: $(tail -3 frames.log; cat rec.out)"
		if "$IFT" top --once -i live.trace >"$out" 2>top.err; then
			end=$(awk '/^window / { sub(/s$/, "", $4); print $4 }' "$out")
			# frames.log: when each frame came, and how far it reached
			echo "${SECONDS}s $out ends ${end:-?}s" >>frames.log
			[ -n "$end" ] && awk -v end="$end" "BEGIN { exit !($cond) }" &&
				grep -q "$re" "$out" && return 0
		elif ! grep -q . "$out"; then
			# the .part may not exist yet in the first moments
			grep -q 'cannot open' top.err || fail "top failed: $(cat top.err)"
		fi
		sleep 0.2
	done
	fail "no frame where $cond within 110 s: $(tail -3 frames.log; cat "$out" top.err)"
}

# before: a frame of at least 3 s with the loop's calls in it, taken live
frame_until before.txt 'end >= 3' '^cudaMemcpy '
grep -q 'recording' before.txt || fail "the frame does not say it follows a recording: $(head -2 before.txt)"
start_ns=$("$IFT" info -i live.trace.part 2>/dev/null | awk '$1 == "record.start_ns" { print $2 }')
[ -n "$start_ns" ] || fail "the recording's start is not in live.trace.part's metadata"

# after: a frame whose window ends 2 s past the moment the workload logged
: >starve.flag
deadline=$((SECONDS + 120))
echo "${SECONDS}s asked the workload to starve" >>frames.log
until grep -q '"type":"starve"' live.jsonl 2>/dev/null; do
	[ $SECONDS -lt $deadline ] || fail "simtrain never logged the moment it starves the GPU"
	kill -0 $rp 2>/dev/null || fail "the recording ended before the moment: $(cat rec.out)"
	sleep 0.2
done
echo "${SECONDS}s the workload logged it" >>frames.log
# its time, less the recording's start: awk, where python takes seconds to
# start on an emulated guest's loaded CPUs
moment=$(awk -v start="$start_ns" '/"type":"starve"/ {
	if (match($0, /"t_ns":[0-9]+/)) printf "%.9f\n", (substr($0, RSTART + 7, RLENGTH - 7) - start) / 1e9
}' live.jsonl)
[ -n "$moment" ] || fail "no time in the workload's starve line: $(grep starve live.jsonl)"
echo "${SECONDS}s the moment: ${moment}s into the recording" >>frames.log
frame_until after.txt "end >= $moment + 2"
cat after.txt
: >stop.flag

wait $rp
rc=$?
trap - EXIT
[ $rc = 0 ] || fail "record exited $rc: $(cat rec.out)"
[ -s live.trace ] && [ ! -e live.trace.part ] || fail "the recording did not finish its trace"
assert_no_leftover_of $rp

# replay: a window inside the starvation, from the finished trace
at=$(awk -v m="$moment" 'BEGIN { printf "%.3f", m + 4.5 }')
"$IFT" top --once --window 3s --at "${at}s" -i live.trace >replay.txt 2>&1 ||
	fail "top --once --at on the finished trace failed: $(cat replay.txt)"
grep -q 'replaying' replay.txt || fail "the replayed frame does not say so: $(head -2 replay.txt)"
"$IFT" report --json -i live.trace >live.json || fail "report failed"

sim_check live.jsonl live.json "$moment" before.txt after.txt replay.txt <<'PY' ||
import sys
from simcheck import *
from topcheck import Frame

truth, r = Truth(sys.argv[1]), load_report(sys.argv[2])
moment = float(sys.argv[3])
chk = Checks("top")
start = r["trace"]["start_ts"]
workers = {w["pid"] for w in truth.wait["woken_by"]}
waited = truth.each.get("waited", [])

def rates(f):
    """each op's calls a second in F's window, as the workload timed them"""
    lo, hi = start + f.lo * 1e9, start + f.hi * 1e9
    n = {}
    for op, t0, t1 in truth.calls:
        if lo <= t0 <= hi:
            n[op] = n.get(op, 0) + 1
    return {op: c / (f.hi - f.lo) for op, c in n.items()}

def check_rates(f):
    want = rates(f)
    for op, rate in sorted(want.items()):
        if rate * (f.hi - f.lo) < 20:
            continue        # too few calls for a rate
        got = f.ops.get(op)
        if chk.ok(got is not None, "%s: %s (%.1f/s by the workload) is not shown" %
                  (f.name, op, rate)):
            chk.ok(abs(got - rate) <= 0.1 * rate, "%s: %s %.1f calls/s, the workload made %.1f/s "
                   "in the window %.3f-%.3fs" % (f.name, op, got, rate, f.lo, f.hi))

def check_starved(f):
    lo, hi = start + f.lo * 1e9, start + f.hi * 1e9
    since = max(lo, start + moment * 1e9)
    blocked = sum(w["blocked_ns"] for w in waited if since <= w["t1"] <= hi)
    share = blocked / (hi - since)
    print("  %s: the thread waited for batches %.0f%% of the window's starved %.1f s by its "
          "clock" % (f.name, 100 * share, (hi - since) / 1e9))
    if share < 0.5:
        # the workers kept up, by the thread's clock (a slow CPU: it is busy
        # with each batch, or waits for a CPU): what the chain says of the
        # thread's own time is the guest's, but a waker it names is a worker
        chk.ok(f.woken <= workers, "%s: pids %s woke the thread, not the workers %s" %
               (f.name, sorted(f.woken - workers), sorted(workers)))
        return
    chk.ok(f.chain and "data starvation" in f.chain, "%s: the chain is not data starvation: %s" %
           (f.name, f.chain))
    fed = {w["pid"] for w in waited if lo <= w["t1"] <= hi and w["blocked_ns"] > 0}
    chk.ok(fed and fed <= f.woken, "%s: the chain names pids %s as the waker, the workers that "
           "fed the thread's waits in the window were %s" % (f.name, sorted(f.woken), sorted(fed)))
    chk.ok(f.woken <= workers, "%s: pids %s woke the thread, not the workers %s" %
           (f.name, sorted(f.woken - workers), sorted(workers)))

before, after, replay = (Frame(p) for p in sys.argv[4:7])
chk.ok(before.hi < moment, "the 'before' frame ends at %.3fs, after the moment %.3fs" %
       (before.hi, moment))
chk.ok(not before.chain or "waiting for input" not in before.chain,
       "starvation for input shown before the moment: %s" % before.chain)
check_rates(before)
chk.ok(after.hi >= moment + 2, "the 'after' frame ends at %.3fs" % after.hi)
check_starved(after)
check_rates(after)
check_starved(replay)
check_rates(replay)
chk.done()
PY
	fail "top disagrees with the workload (above)"
assert_no_leftovers
