# check_examples DIR: each trace that DIR/expect.tsv lists opens with the
# current reader (info --verify, every chunk checksummed), is under 1 MB,
# has its line in DIR/README.md, and report --json on it reaches the
# conclusion expect.tsv documents (the cause, severity, phase and op of the
# first chain, or no HIGH/MEDIUM chain at all, and the role of a named task).
# With "recorded-here", for traces just recorded on a machine that may be
# shared, with the workloads' own logs beside them (NAME.jsonl): where the
# example has no host cause of its kind, CPU contention that costs no more
# than the run-queue wait the kernel counted for the thread is the
# machine's load (simcheck.neighbour_chains), left out before comparing;
# a data-starvation example's severity is the one its workload's own
# starvation share calls for (as t400: an emulated guest's CPUs are slower,
# the modelled device's time weighs more); a noisy neighbour's, the one the
# kernel's count of the thread's wait for a CPU calls for, less what the
# recorder's own CPU time may account for (the report excuses that wait);
# and CPU contention may be found
# inside the op's calls rather than before them (a slower CPU lengthens
# them more than their gaps).  Sets n to the number of traces
# checked.
check_examples() {
	local dir=$1 here=${2:-} file first task t size
	[ -s "$dir/expect.tsv" ] || fail "no $dir/expect.tsv"
	n=0
	while IFS=$'\t' read -r file first task; do
		case $file in '#'* | '') continue ;; esac
		n=$((n + 1))
		t=$dir/$file
		[ -r "$t" ] || fail "$file: listed in expect.tsv, not in $dir"
		size=$(stat -c %s "$t")
		[ "$size" -lt 1000000 ] || fail "$file: $size bytes, over 1 MB"
		grep -q "\`$file\`" "$dir/README.md" || fail "$file: no line in $dir/README.md"
		"$IFT" info --verify -i "$t" >info.txt 2>err.txt || fail "$file: info --verify: $(cat err.txt)"
		grep -q "format:.*finished" info.txt || fail "$file: not a finished trace: $(head -3 info.txt)"
		"$IFT" report --json -i "$t" >r.json 2>err.txt || fail "$file: report: $(cat err.txt)"
		rm -f calls.dump.json
		if [ "$here" = recorded-here ]; then
			"$IFT" dump --json -i "$t" --table switches,wakeups,calls >calls.dump.json 2>err.txt ||
				fail "$file: dump: $(cat err.txt)"
		fi
		python3 - r.json "$file" "$first" "$task" "$here" "$IFT_SRC/tests/e2e" "$dir" <<'PY' ||
import json, os, sys
sys.path.insert(0, sys.argv[6])
from simcheck import Slack, Trace, Truth, neighbour_chains, own_gaps_bound, probed, runq_cost, \
    severities, severities_between
r = json.load(open(sys.argv[1]))
name, first, task = sys.argv[2], sys.argv[3], sys.argv[4]
chains = r["chains"]
log = os.path.join(sys.argv[7], name.replace(".trace", ".jsonl"))
truth = Truth(log) if sys.argv[5] == "recorded-here" and os.path.exists(log) else None
allowed = None
if truth and first != "none" and first.split()[1] == "data_starvation":
    steady = truth.steady(r)
    share = (steady.wait["blocked_ns"] + steady.gaps["all"]["over_floor_cpu_ns"]) / \
        steady.active["active_ns"]
    allowed = severities(share)
    print("%s: the workload starved %.0f%% of its active time: %s" % (name, 100 * share, sorted(allowed)))
# the load an example is about, a noisy neighbour's, costs the feeding
# thread the run-queue wait the kernel counted (schedstat's run_delay), less
# what it waited behind the recorder, which the report leaves out (excused)
# and which is at most the recorder's CPU time (on an emulated guest's slow
# CPUs, a large part of the run), less any wait outside the active time: the
# first chain is as severe as the wait between those bounds calls for
if truth and first != "none" and first.split()[1] == "cpu_contention":
    delay, rec = truth.schedstat["run_delay_ns"], truth.recorder_cpu_ns()
    active = truth.active["active_ns"]
    if delay >= 0 and rec is not None:
        lo = max(0, delay - rec - (truth.run["wall_ns"] - active)) / active
        allowed = severities_between(lo, delay / active)
        print("%s: waited %.0f%% of its active time for a CPU, %.0f%% less the recorder's CPU: %s" %
              (name, 100 * delay / active, 100 * lo, sorted(allowed)))
# (that load stays)
if sys.argv[5] == "recorded-here" and (first == "none" or first.split()[1] != "cpu_contention"):
    tid, delay = (truth.tid, (truth.schedstat or {}).get("run_delay_ns", -1)) if truth else \
        (0, -1)
    # cuda-seq's own count (CUDA_SEQ_SCHEDSTAT): in a guest of 2 CPUs the
    # stand-in runtime's device thread takes the CPU from it
    seq = os.path.join(sys.argv[7], name.replace(".trace", ".schedstat"))
    if not truth and os.path.exists(seq):
        tid, delay = (int(x) for x in open(seq).read().split()[:2])
    load = neighbour_chains(r, tid, delay) if tid else []
    cost = runq_cost(load)
    # a run with no host cause of its own waited for a CPU only as long as
    # the kernel counted; where the example has a cause (a loader's workers
    # preempt it too), contention may rank above it, as simcheck's
    # only_contention_before() allows
    if load and first == "none" and cost > 1.03 * delay + 2e6:
        print("%s: CPU contention %d ns, more than the kernel counted (%d ns)" % (name, cost, delay))
        sys.exit(1)
    if load:
        print("%s: the machine's load: %s" % (name, [c["summary"][:100] for c in load]))
    chains = [c for c in chains if c not in load]
# an example with no host cause may still build its input on its own
# thread between calls (direct indexing, cuda-seq's printing): on slower
# CPUs (an emulated guest) those gaps pass the report's 1 ms floor, and a
# data_starvation chain that no one fed is then as severe as the workload's
# own gaps of 1 ms or more say, no more
own = []
if sys.argv[5] == "recorded-here" and first == "none":
    share = share_hi = None
    tsv = os.path.join(sys.argv[7], name.replace(".trace", ".calls.tsv"))
    if truth:
        steady = truth.steady(r)
        share = steady.gaps["all"]["over_floor_cpu_ns"] / steady.active["active_ns"]
        # with what the clock reads and the probes add to each gap
        # (simcheck.own_gaps_bound(); probed.txt: need_sim's)
        if os.path.exists("probed.txt"):
            share_hi = own_gaps_bound(steady, Slack(Trace("calls.dump.json"), truth, probed()))
    elif os.path.exists(tsv):
        # the program's own clock reads around each call (CLOCK_MONOTONIC,
        # the trace's clock), over the loop the report found on its one
        # thread: from the call the loop begins inside to the one it ends
        # inside, as the report's shares are of the loop's active time
        calls = [l.split("\t") for l in open(tsv) if l.count("\t") >= 3]
        ts = [(int(c[2]), int(c[3])) for c in calls]
        # each call as recorded, [entry, return], beside the program's own
        # interval around it: a report's gap is the program's plus what
        # its clock reads and the probes take on either side, which may
        # lift a gap just under the floor over it
        rec = [json.loads(l) for l in open("calls.dump.json")]
        rec = [(c["ts"], c["ts"] + c["dur_ns"]) for c in rec
               if "dur_ns" in c and not c.get("nested")]
        sides = {}
        if len(rec) == len(ts):
            sides = {t: (e - t[0], t[1] - x) for t, (e, x) in zip(ts, rec)
                     if t[0] <= e <= x <= t[1]}
        loops = [t["loop"] for p in r["processes"] for t in p["threads"]
                 if t.get("loop") and t["loop"]["period"]]
        if loops and ts:
            lo = r["trace"]["start_ts"] + loops[0]["from_ns"]
            hi = r["trace"]["start_ts"] + loops[0]["to_ns"]
            i0 = [i for i, c in enumerate(ts) if c[0] <= lo <= c[1]]
            i1 = [i for i, c in enumerate(ts) if c[0] <= hi <= c[1]]
            if i0 and i1:
                ts = ts[i0[0]:i1[-1] + 1]
        gaps = [b[0] - a[1] for a, b in zip(ts, ts[1:])]
        extra = [sides.get(a, (0, 0))[1] + sides.get(b, (0, 0))[0] for a, b in zip(ts, ts[1:])]
        active = max(1, ts[-1][1] - ts[0][0]) if ts else 1
        share = sum(g for g in gaps if g >= 1000000) / active if ts else None
        if ts:
            share_hi = sum(g + x for g, x in zip(gaps, extra) if g + x >= 1000000) / active
    if share is not None:
        share_hi = max(share, share_hi or 0)
        allowed_own = severities_between(0, share_hi)
        own = [c for c in chains if c["cause"] == "data_starvation" and
               not c["evidence"].get("fed_ns", 0) and c["severity"] in allowed_own and
               (c["tid"] == truth.tid if truth else c["tid"] == c["pid"])]
        if own:
            print("%s: its own input, %.0f%% of its active time in gaps of 1 ms or more "
                  "(%.0f%% with its clock reads and the probes): %s" %
                  (name, 100 * share, 100 * share_hi, [c["severity"] for c in own]))
got = ["%s %s %s %s" % (c["severity"], c["cause"], c["phase"], c["op"]) for c in chains]
ok = True
if first == "none":
    bad = ["%s %s %s %s" % (c["severity"], c["cause"], c["phase"], c["op"]) for c in chains
           if c["severity"] in ("HIGH", "MEDIUM") and c not in own]
    if bad:
        print("%s: expected no HIGH or MEDIUM chain, got %s" % (name, bad)); ok = False
else:
    want = first.split()
    have = got[0].split() if got else []
    # "*" in a field of expect.tsv takes any value there
    if allowed and have:
        want[0] = have[0] if have[0] in allowed else "|".join(sorted(allowed))
    # CPU contention falls where the thread wants a CPU, in its calls or
    # between them, in proportion; on a slower (emulated) CPU the calls'
    # share of it grows (each call 5-15 us there, 1-2 us here, and its
    # probes' traps), so a new recording may find the same contention
    # inside the calls more than before them
    if sys.argv[5] == "recorded-here" and want[1] == "cpu_contention" and have and \
            have[1] == "cpu_contention" and have[2] in ("before", "inside"):
        want[2] = have[2]
    if len(have) != len(want) or any(w != "*" and w != h for w, h in zip(want, have)):
        print("%s: expected the first chain '%s', got %s" % (name, " ".join(want), got)); ok = False
if task and task != "-":
    # ROLE:COMM: a process of that role and name in the report
    role, comm = task.split(":", 1)
    procs = [(p.get("role"), p.get("comm") or (p.get("names") or [""])[0]) for p in r["processes"]]
    if not any(p[0] == role and comm in (p[1] or "") for p in procs):
        print("%s: no process %s with role %s: %s" % (name, comm, role, procs)); ok = False
print("%s: %s" % (name, got[:3]))
sys.exit(0 if ok else 1)
PY
			fail "$file: report does not conclude what expect.tsv says (above)"
	done <"$dir/expect.tsv"
}
