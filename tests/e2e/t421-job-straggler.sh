#!/usr/bin/env bash
# The job of a NCCL communicator (report's "JOB"): 4 ranks on the stand-in
# runtime and NCCL (tests/workloads/ranks.py), rank 2 fed by a starved
# input worker.  Recorded as one trace, and as two (ranks 0-1 and 2-3, two
# launchers and two recorders, as two nodes would): the report names rank 2
# as the straggler with its own host's cause (data starvation, or CPU
# contention where its run-queue wait was half as long or more), and each
# other rank's waiting for it is within 10% of the time it measured inside
# its all-reduces (or less by what it logged on or waiting for a CPU there,
# where that is more).  Then the second trace's wall clock is shifted by a known
# amount (tracemeta.py rewrites clock.wall_offset_ns): the collectives put it
# back to within 100 us.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
need_debian_python
need_simcuda nccl
ranks=$IFT_SRC/tests/workloads/ranks.py

# jobcheck.py REPORT.json TRUTH.json...: the job's straggler, its cause and
# the others' waiting against the ranks' own account
cat >jobcheck.py <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
truth = [json.load(open(p)) for p in sys.argv[2:]]
job = rep["job"]
slow = truth[0]["slow"]
ranks = {r["rank"]: r for t in truth for r in t["ranks"]}
err = []
if job is None or len(job["ranks"]) != len(ranks) or job["world"] != truth[0]["world"]:
    sys.exit("job: %s, the ranks: %s" % (job and (job["world"], len(job["ranks"])),
                                          sorted(ranks)))
steps = len(ranks[slow]["steps"])
if job["collectives"] != steps:
    err.append("%d collectives matched, each rank made %d" % (job["collectives"], steps))
st = job["stragglers"]
if not st or st[0]["rank"] != slow or st[0]["pid"] != ranks[slow]["pid"]:
    err.append("first straggler %s, the slow rank is %d" % (st[:1], slow))
else:
    # its cause is its own host's: the wait for its batches, unless the
    # scheduler kept it from a CPU nearly as long (an emulated guest's two
    # CPUs run four ranks and a worker): then CPU contention may weigh more.
    # The run-queue wait is the kernel's count or, where longer, the rank's
    # from the worker's post (a 5.10 arm64 guest beside another: schedstat
    # 0.61 s, the trace 1.40 s of a 1.91 s wait for batches)
    wait = sum(s["data_wait_ns"] for s in ranks[slow]["steps"])
    delay = sum(max(s["run_delay_ns"], s["woke_ns"]) for s in ranks[slow]["steps"])
    want = {"data_starvation"} if min(s["run_delay_ns"] for s in ranks[slow]["steps"]) >= 0 \
        and wait >= 2 * delay else {"data_starvation", "cpu_contention"}
    got = (st[0]["cause"] or {}).get("cause")
    if got not in want:
        err.append("straggler's cause %s, not %s (it waited %d ns for its batches, %d for a CPU)"
                   % (got, " or ".join(sorted(want)), wait, delay))
byrank = {r["rank"]: r for r in job["ranks"]}
cost = 0
for k, r in ranks.items():
    got = byrank[k]
    if got["pid"] != r["pid"]:
        err.append("rank %d: pid %d, it was %d" % (k, got["pid"], r["pid"]))
    if k == slow:
        continue
    measured = sum(s["exit"] - s["enter"] for s in r["steps"])
    # less the way in and out of its calls, as t420: at most what it logged
    # on or waiting for a CPU over its intervals
    around = sum(s["call_cpu_ns"] + max(0, s["call_run_delay_ns"]) for s in r["steps"])
    cost += got["waited_ns"]
    if not measured - max(0.10 * measured, around) <= got["waited_ns"] <= 1.10 * measured:
        err.append("rank %d waited %d ns by the report, it measured %d in its all-reduces "
                   "(%d of it on or waiting for a CPU)" % (k, got["waited_ns"], measured, around))
# what it cost them is their waiting up to its entry (their wake-up after
# the release is not its cost): the ranks' own clocks say how much that was,
# collective by collective (one host: one CLOCK_MONOTONIC), from each one's
# entry to the slow rank's, as long as it stayed; the report's probes sit
# inside those calls, off by the way in and out of them as above
truth_cost = around_all = 0
for k, r in ranks.items():
    if k == slow:
        continue
    for s, x in zip(r["steps"], ranks[slow]["steps"]):
        truth_cost += max(0, min(x["enter"], s["exit"]) - s["enter"])
        around_all += s["call_cpu_ns"] + max(0, s["call_run_delay_ns"])
slack = max(0.10 * truth_cost, around_all)
if st and st[0]["rank"] == slow and \
        not truth_cost - slack <= st[0]["cost_ns"] <= min(cost, truth_cost + slack):
    err.append("the straggler cost %d ns, the others waited %d, %d of it for its entries "
               "by their own clocks (%d on or waiting for a CPU around their calls)"
               % (st[0]["cost_ns"], cost, truth_cost, around_all))
print(json.dumps({"stragglers": [(s["rank"], s["cost_ns"], s["share_permille"]) for s in st],
                  "cost_by_clocks": truth_cost,
                  "cause": st and (st[0]["cause"] or {}).get("cause"),
                  "waited": {k: r["waited_ns"] for k, r in byrank.items()},
                  "slow": {k: sum(s[k] for s in ranks[slow]["steps"])
                           for k in ("data_wait_ns", "run_delay_ns", "woke_ns")}}))
if err:
    sys.exit("; ".join(err[:5]))
PY

# one trace of the whole job
"$IFT" record -q --cuda-lib "$sim" --cuda-lib "$nccl" -o job.trace -- \
	$py "$ranks" --cudart "$sim" --nccl "$nccl" >job.truth 2>job.err &
rp=$!
wait $rp || fail "record failed: $(tail -3 job.err)"
assert_no_leftover_of $rp
"$IFT" report --json -i job.trace >job.json || fail "report failed"
python3 jobcheck.py job.json job.truth >check1.out || fail "one trace: $(cat check1.out)"
echo "one trace: $(cat check1.out)"
"$IFT" report -i job.trace >job.txt || fail "report failed"
pid=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); print([r["pid"] for r in t["ranks"] if r["rank"] == t["slow"]][0])' job.truth)
grep -q "^ 1\. rank 2 (pid $pid on .*) entered .* ncclAllReduce last" job.txt ||
	fail "the text report does not name rank 2 first: $(sed -n '/^JOB/,/^ rank/p' job.txt)"

# two nodes: two launchers of one communicator, each under its recorder
id=$($py "$ranks" --nccl "$nccl" --make-id) || fail "no communicator id"
for part in a:0,1 b:2,3; do
	"$IFT" record -q --cuda-lib "$sim" --cuda-lib "$nccl" -o ${part%%:*}.trace -- \
		$py "$ranks" --cudart "$sim" --nccl "$nccl" --id "$id" --only ${part#*:} \
		>${part%%:*}.truth 2>${part%%:*}.err &
	eval "rp_${part%%:*}=\$!"
done
wait $rp_a || fail "record of ranks 0,1 failed: $(tail -3 a.err)"
wait $rp_b || fail "record of ranks 2,3 failed: $(tail -3 b.err)"
assert_no_leftover_of $rp_a
assert_no_leftover_of $rp_b
"$IFT" report --json -i a.trace -i b.trace >ab.json || fail "report of two traces failed"
python3 jobcheck.py ab.json a.truth b.truth >check2.out || fail "two traces: $(cat check2.out)"
echo "two traces: $(cat check2.out)"

# the second node's wall clock 37.123456 ms ahead: the shift found undoes it
shift_ns=37123456
wall=$("$IFT" info -i b.trace | awk '$1 == "clock.wall_offset_ns" { print $2 }')
[ -n "$wall" ] || fail "b.trace has no clock.wall_offset_ns"
python3 "$IFT_SRC/tests/e2e/tracemeta.py" b.trace b-shifted.trace \
	clock.wall_offset_ns=$((wall + shift_ns)) || fail "tracemeta failed"
"$IFT" report --json -i a.trace -i b-shifted.trace >shifted.json || fail "report failed"
python3 jobcheck.py shifted.json a.truth b.truth >check3.out || fail "shifted: $(cat check3.out)"
python3 - ab.json shifted.json $shift_ns <<'PY' || fail "the clocks were not put back"
import json, sys
ab, sh = (json.load(open(p))["job"]["clocks"] for p in sys.argv[1:3])
want = -int(sys.argv[3])
# one machine's two recordings share its clocks: the unshifted pair needs
# (almost) none, the shifted one the shift undone; to within 100 us (the
# issue's), or one wake-up where the machine's is longer (an emulated guest:
# the bound is tight to within a wake-up, measured in the trace itself), or
# half the window the bounds leave where both sides bind (a 6.1 arm64 guest
# beside the host's CI: 1.12 ms off in a window of 4.7 ms)
for name, c, w in (("unshifted", ab[1], 0), ("shifted", sh[1], want)):
    if not c["refined"]:
        sys.exit("%s: shift %d ns, not refined by the collectives" % (name, c["shift_ns"]))
    # the collectives bound the shift, hard: B leaves after A entered, A
    # after B entered
    lo, hi, wake = c["lo_ns"], c["hi_ns"], c["wake_ns"]
    if not lo <= w <= hi:
        sys.exit("%s: %d wanted, outside the bounds the collectives leave [%d, %d]"
                 % (name, w, lo, hi))
    tol = max(100000, wake)
    # where both traces had a collective's last entrant (a loaded guest's
    # ranks 0 and 1 come last now and then), the report takes the middle
    # of the window a wake-up inside each bound leaves: the truth may be
    # anywhere in it
    if c["shift_ns"] not in (hi - wake, lo + wake, lo, hi):
        tol = max(tol, (hi - lo) // 2 - wake)
    if abs(c["shift_ns"] - w) > tol:
        sys.exit("%s: shift %d ns (bounds [%d, %d], wake-up %d), %d wanted to within %d ns"
                 % (name, c["shift_ns"], lo, hi, wake, w, tol))
print("shifts found: %d ns (none made), %d ns (%d made undone), residual %d ns, wake-up %d ns"
      % (ab[1]["shift_ns"], sh[1]["shift_ns"], -want, sh[1]["residual_ns"], sh[1]["wake_ns"]))
PY
"$IFT" report -i a.trace -i b-shifted.trace >shifted.txt || fail "report failed"
# the wall clocks' difference as the JSON has it: the shift made and the two
# recorders' own (77 us in a 6.1 guest), to the 0.1 ms the text shows
wall=$(python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["job"]["clocks"]
w = (c[1]["wall_offset_ns"] - c[0]["wall_offset_ns"]) / 1e6
print("|".join(sorted({"%.1f" % (w + d) for d in (-0.05, 0, 0.05)})).replace(".", "\\."))' shifted.json)
grep -Eq "b-shifted.trace \(host .*\): wall clock \+($wall)ms, then -[0-9.]+ms by 30 collectives" shifted.txt ||
	fail "the text report does not show the clocks: $(sed -n '/^JOB/,/^STRAGGLERS/p' shifted.txt)"
assert_no_leftovers
exit 0
