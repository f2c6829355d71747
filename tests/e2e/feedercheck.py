"""Checks a report of tests/workloads/feeders.py against the program's truth.

    feedercheck.py starved NAME      the starved run: NAME.truth, NAME.json
    feedercheck.py healthy NAME      its healthy twin
    feedercheck.py same-roles A B    two runs of one feeder, workers named or not
    feedercheck.py decoding NAME     the vision run's profile (record --profile)
    feedercheck.py own-gaps NAME     loader0's: its CUDA thread's own per-sample work

NAME.json is `report --json --per-process`.  Every failed check is printed,
not only the first, and the exit status is 1 when any failed.

What the report must say (docs/report.md, "Feeders and their expected
conclusions"):
- starved: a data_starvation chain of the steady state (`stage` steady,
  phase before), HIGH or MEDIUM, on the CUDA thread; among the tasks that
  woke it (relation woke, after following relays), those with a feeder role
  are exactly the program's feeders: the worker processes by pid (role
  `input worker`), the feeding threads by tid (`input thread`); any other
  waker carries no feeder role; the program's other wakers (the traced
  processes; a kernel thread is the machine's) end fewer waits than its
  feeders, and each it does not name as a helper (other_tids: the mp.Queue
  threads that send the workers their indices wake it now and then as they
  hand over the GIL, real and not input) holds at most OTHER_SHARE; the relay thread,
  where the program has one, is listed as relayed with its role and no other
  is; `workers` counts the worker processes; the chain's gaps (blocked until
  fed + on CPU + waiting for a CPU) hold the program's own steady-state wait
  (every batch's next() but the first, and the GIL taken back after each
  call: check_gaps) within TOLERANCE; the per-process
  roles name the same tasks; the op counts are the program's.
- loader0: the same chain, but nobody feeds it: no feeder role anywhere, no
  worker, and most of the gaps' time on its own CPU.
- healthy: no HIGH or MEDIUM chain at all.
- decoding: the input workers' top line of Python is a package's (PIL's
  when decoding took most of their CPU by their own clocks; PIL's or
  torchvision's when the transforms did), under the dataset's __getitem__,
  which the profile names as its caller; the steady-state chain's fix says
  the workers' CPU went to the work their clocks say took most of it (a
  6.1 guest's workers spent more in the transforms than this host's), at
  its share within 10 points, and counts the workers of one loader.
- own-gaps: the CUDA threads' group (their CPU between calls in their
  loop) has sample(), the per-sample work, as its top line, with most of
  its samples (the program does little else there), and the steady-state
  chain's fix quotes that line, with no in-memory tensor advice.
"""
import json
from simcheck import neighbour_chains, runq_cost, severities, severities_between
import sys

TOLERANCE = 0.10
OTHER_SHARE = 50  # permille
FEEDER_ROLES = ("input worker", "input thread")
RELAY_ROLES = ("relay", "pin-memory thread")

bad = []


def load(name):
    return json.load(open(name + ".truth")), json.load(open(name + ".json"))


def ms(ns):
    return "%.1f ms" % (ns / 1e6)


def steady_chain(name, r):
    """The steady state's data starvation chain, or None."""
    ds = [c for c in r["chains"] if c["cause"] == "data_starvation" and c["phase"] == "before"]
    if not any("stage" in c for c in r["chains"]):
        bad.append("%s: the chains have no stage (start-up, steady, tail)" % name)
        # go on with what there is, to show what else differs
        return ds[0] if ds else None
    ds = [c for c in ds if c.get("stage") == "steady"]
    return ds[0] if ds else None


def threads_of(r):
    """tid -> (pid, thread object) over every process of the report."""
    return {t["tid"]: (p["pid"], t) for p in r["processes"] for t in p["threads"]}


def check_ops(name, truth, r):
    ops = {o["op"]: o for o in r["ops"]}
    for op in ("cudaMemcpy", "cudaLaunchKernel", "cudaStreamSynchronize"):
        if ops.get(op, {}).get("calls") != truth[op]["n"]:
            bad.append("%s: %s calls %r, the program made %d"
                       % (name, op, ops.get(op, {}).get("calls"), truth[op]["n"]))
    if truth["host_allocs"]:
        got = ops.get("cudaHostAlloc", {}).get("calls")
        if got != truth["host_allocs"]:
            bad.append("%s: cudaHostAlloc calls %r, the pin thread made %d"
                       % (name, got, truth["host_allocs"]))
        pin = threads_of(r).get(truth["relay_tid"])
        if not pin or not any(o["op"] == "cudaHostAlloc" for o in pin[1]["ops"]):
            bad.append("%s: the pin thread %d made no cudaHostAlloc in the report"
                       % (name, truth["relay_tid"]))


def idle_threads(name, truth, r):
    """The executor threads that built under half their fair share of the
    batches (the program counted them): a thread pool hands the next batch
    to whichever thread is free, and on an emulated CPU one may build few.
    Such a thread's CPU time is not a batch builder's, and it may end too
    few of the waits to tell it from a thread handing the GIL back: it may
    go without a role, and end a few percent of the waits without one."""
    built = {int(t): n for t, n in truth.get("built", {}).items()}
    if not built:
        return set()
    ths = threads_of(r)
    total, n = sum(built.values()), len(truth["feeders"]["threads"])
    print("%s: batches built by each executor thread %s; on a CPU %s" % (
        name, built, {t: ms(ths[t][1].get("on_cpu_ns", 0)) if t in ths else None for t in built}))
    return {t for t in truth["feeders"]["threads"] if built.get(t, 0) * 2 * n < total}


def check_roles(name, truth, r):
    """The per-process roles: the program's feeders, relay and CUDA thread, no other."""
    procs = {p["pid"]: p for p in r["processes"]}
    ths = threads_of(r)
    want_workers = set(truth["feeders"]["processes"])
    got_workers = {p["pid"] for p in r["processes"] if p.get("role") == "input worker"}
    if got_workers != want_workers:
        bad.append("%s: processes with role input worker %s, the program's workers %s"
                   % (name, sorted(got_workers), sorted(want_workers)))
    for pid in want_workers:
        if pid in procs and not procs[pid].get("role_evidence"):
            bad.append("%s: worker %d has no role_evidence" % (name, pid))
    idle = idle_threads(name, truth, r)
    want = {t: "input thread" for t in truth["feeders"]["threads"]
            if t not in idle or ths.get(t, (0, {}))[1].get("role")}
    if truth["relay_tid"]:
        want[truth["relay_tid"]] = truth["relay_role"]
    want[truth["tid"]] = "cuda thread"
    got = {tid: t.get("role") for tid, (pid, t) in ths.items()
           if pid == truth["pid"] and t.get("role") in FEEDER_ROLES + RELAY_ROLES +
           ("cuda thread",)}
    if got != want:
        bad.append("%s: the CUDA process's thread roles %r, the program's %r"
                   % (name, got, want))
    for tid in want:
        if tid in ths and not ths[tid][1].get("role_evidence"):
            bad.append("%s: thread %d (%s) has no role_evidence" % (name, tid, want[tid]))


def check_gaps(name, truth, r, c, itself):
    """The chain's steady-state gaps against the program's own waits.

    Python measured next() (steady_wait) and its gaps from a synchronize's
    return to the next copy (steady_gap: next() and a few statements).  The
    report sees one more thing there: ctypes drops the GIL during a call, and
    taking it back after the C function returned (from the pool's handler
    threads, the executor threads, the pin thread) is inside the call for
    Python but after the call's return for the uprobes, so in the next gap.
    The difference of the two measures of the calls, op by op, is that time:
    the expected gaps are steady_gap + that difference.

    The report may leave the loop's first iterations to the start-up when
    they are far slower than the rest (warm-up: the workers still starting):
    the program's gaps and waits of those batches are left out here too."""
    e = c["evidence"]
    # the steady state's gaps as the report measured them (gaps_ns: the
    # time the thread issued no CUDA work); of them, what it explains by
    # state: blocked (fed, or woken by a timer such as the GIL's timed
    # wait), runnable (blamed or excused), on CPU in gaps over the floor
    # (less page faults, a cause of their own) and the hypervisor's steal
    gap = e.get("gaps_ns", 0)
    explained = (e.get("blocked_ns", 0) + e.get("runqueue_wait_ns", 0) +
                 e.get("excused_ns", 0) + e.get("on_cpu_ns", 0) + e.get("steal_ns", 0))
    loop = [t["loop"] for p in r["processes"] for t in p["threads"]
            if t["tid"] == truth["tid"] and t.get("loop")]
    warm = loop[0]["warmup"] if loop else 0
    waits, gaps = truth["waits_ns"][1 + warm:], truth["gaps_ns"][warm:]
    want = sum(waits)
    ops = {o["op"]: o for o in r["ops"]}
    gil = sum(max(0, truth[op]["sum_ns"] - ops.get(op, {}).get("total_ns", 0))
              for op in ("cudaMemcpy", "cudaLaunchKernel", "cudaStreamSynchronize"))
    expect = sum(gaps) + gil
    print("%s: steady wait in next() %s over %d batches (%d warm-up left out), Python's "
          "gaps %s + the GIL after calls %s; the chain's gaps %s: blocked %s (fed %s), on "
          "CPU %s, runnable %s (excused %s)"
          % (name, ms(want), len(waits), warm, ms(sum(gaps)),
             ms(gil), ms(gap), ms(e.get("blocked_ns", 0)), ms(e.get("fed_ns", 0)),
             ms(e.get("on_cpu_ns", 0)),
             ms(e.get("runqueue_wait_ns", 0)), ms(e.get("excused_ns", 0))))
    if not 0.75 * gap <= explained <= gap:
        bad.append("%s: of the %s gaps, %s blocked, runnable or on CPU: the states do "
                   "not add up" % (name, ms(gap), ms(explained)))
    if abs(gap - expect) > TOLERANCE * expect:
        bad.append("%s: the steady-state gaps hold %s, the program's say %s (next() %s): "
                   "%.0f%% off, %.0f%% allowed" % (name, ms(gap), ms(expect), ms(want),
                                                  100 * (gap - expect) / expect,
                                                  100 * TOLERANCE))
    if itself and e.get("on_cpu_ns", 0) < gap / 2:
        bad.append("%s: builds its batches itself, but only %s of the %s gaps on its CPU"
                   % (name, ms(e.get("on_cpu_ns", 0)), ms(gap)))


def starved(name):
    truth, r = load(name)
    check_ops(name, truth, r)
    check_roles(name, truth, r)
    c = steady_chain(name, r)
    if not c:
        bad.append("%s: no steady-state data_starvation chain: %r"
                   % (name, [(x["cause"], x.get("stage"), x["summary"]) for x in r["chains"]]))
        return
    e = c["evidence"]
    # HIGH or MEDIUM, unless the program's own account allows LOW: with the
    # workers and the pin thread taking both CPUs, the CUDA thread may wait
    # in next() mostly for a CPU (the run-queue wait the kernel counted),
    # which the report gives to CPU contention
    lo, hi, _, _ = starvation_bracket(truth)
    allowed = {"HIGH", "MEDIUM"} | (severities_between(lo, hi) & {"LOW"})
    if c["severity"] not in allowed:
        bad.append("%s: steady-state starvation is %s, the program's own account makes it "
                   "%s (%.0f-%.0f%% of the steady loop)"
                   % (name, c["severity"], "/".join(sorted(allowed)), 100 * lo, 100 * hi))
    if c["tid"] != truth["tid"] or c["op"] != "cudaMemcpy":
        bad.append("%s: the chain is on tid %d before %s; the CUDA thread is %d, "
                   "before cudaMemcpy" % (name, c["tid"], c["op"], truth["tid"]))
    woke = [t for t in e["tasks"] if t["relation"] == "woke"]
    fed = [t for t in woke if t.get("role") in FEEDER_ROLES]
    fpids = {t["pid"] for t in fed if t["role"] == "input worker"}
    ftids = {t["tid"] for t in fed if t["role"] == "input thread"}
    want_p, want_t = set(truth["feeders"]["processes"]), set(truth["feeders"]["threads"])
    idle = idle_threads(name, truth, r) - ftids
    want_t -= idle
    print("%s: woke by %s" % (name, [(t["pid"], t["tid"], t["comm"], t.get("role"),
                                      t["share_permille"]) for t in woke]))
    # a worker may end none of the steady state's blocked gaps (where the
    # CUDA thread mostly waits for a CPU, 11 ms blocked in 99 batches, one
    # of four ended none): it is no waker there, and check_roles wants its
    # role from the whole run's; every waker that is a worker is named one
    procs = {p["pid"]: p for p in r["processes"]}
    silent = {p for p in want_p - fpids
              if p not in {t["pid"] for t in woke} and
              procs.get(p, {}).get("role") == "input worker"}
    if silent:
        print("%s: workers %s ended no blocked gap of the steady state" % (name, sorted(silent)))
    if fpids != want_p - silent:
        bad.append("%s: input workers named %s, the program's are %s"
                   % (name, sorted(fpids), sorted(want_p)))
    if ftids != want_t:
        bad.append("%s: input threads named %s, the program's are %s"
                   % (name, sorted(ftids), sorted(want_t)))
    feeders = want_p | want_t
    others = [t for t in woke if t not in fed]
    for t in others:
        if t["tid"] in idle and t["share_permille"] <= OTHER_SHARE:
            continue
        if t["pid"] in want_p or t["tid"] in want_t or t["tid"] in idle:
            bad.append("%s: feeder %d/%d woke it without a feeder role: %r"
                       % (name, t["pid"], t["tid"], t))
    # the machine's own tasks (khugepaged releasing the mmap lock it took
    # to collapse the program's pages, a kworker) are outside the traced
    # tree: real wakers, listed, and no feeders; the budget is the program's
    traced = {p["pid"] for p in r["processes"]}
    outside = [t for t in others if t["pid"] not in traced]
    if outside:
        print("%s: woken from outside the program by %s" % (name, [(t["pid"], t["comm"], t["share_permille"]) for t in outside]))
    # the program's own helper threads (truth other_tids: the index queues'
    # feeder threads, a pool's handlers) hand the GIL back to it as they
    # pass on the next indices: real wake-ups and no input, as many as the
    # load makes them (under 5% of the waits on an idle machine, 6.5-8.1%
    # each in 3 of 10 runs beside another job on 2 CPUs); together with the
    # program's other wakers they end fewer waits than its feeders, and a
    # waker the program does not know holds at most the share that would
    # make a thread of the CUDA process its input thread
    # (THREAD_MIN_PERMILLE in roles.c)
    helpers = set((truth.get("other_tids") or {}).values())
    mine = [t for t in others if t["pid"] in traced and t["pid"] not in feeders
            and t["tid"] not in feeders and t["tid"] not in idle]
    unknown = [t for t in mine if t["tid"] not in helpers]
    share = max([t["share_permille"] for t in unknown] or [0])
    if feeders and share > OTHER_SHARE:
        bad.append("%s: a task the program does not know woke it for %d permille: %r"
                   % (name, share, [(t["pid"], t["tid"], t["comm"], t["share_permille"])
                                    for t in unknown]))
    fed_share = sum(t["share_permille"] for t in fed)
    mine_share = sum(t["share_permille"] for t in mine)
    if feeders and mine_share >= fed_share:
        bad.append("%s: the program's tasks that are no feeders woke it for %d permille, "
                   "its feeders for %d: %r" % (name, mine_share, fed_share,
                                               [(t["pid"], t["tid"], t["comm"],
                                                 t["share_permille"]) for t in mine]))
    for t in fed:
        if not t.get("role_evidence"):
            bad.append("%s: %d/%d is %s without role_evidence" % (name, t["pid"], t["tid"],
                                                                 t["role"]))
    relayed = [t for t in e["tasks"] if t["relation"] == "relayed"]
    want_r = [(truth["relay_tid"], truth["relay_role"])] if truth["relay_tid"] else []
    got_r = [(t["tid"], t.get("role")) for t in relayed]
    if got_r != want_r:
        bad.append("%s: relayed by %r, the program's relay is %r" % (name, got_r, want_r))
    # the most that ran at once: a loader made again each epoch has new
    # worker processes, as many
    if e.get("workers") != truth["workers_at_once"]:
        bad.append("%s: %r input workers counted, the program had %d at once (%d in all)"
                   % (name, e.get("workers"), truth["workers_at_once"], truth["workers"]))
    check_gaps(name, truth, r, c, not feeders)


def starvation_bracket(truth):
    """What the program's own account says of its starvation's share of the
    steady loop (the report's: from the first batch's arrival, the wait for
    it is start-up, to the loop's end): between its steady wait in next()
    less the run-queue wait the kernel counted in the loop (the report gives
    that to CPU contention) and all its gaps between CUDA calls of 1 ms or
    more (the report counts its time on CPU in those, the loop's own Python
    too); as (lo, hi, wait share, long gaps' share)."""
    steady = truth["steady_ns"]
    wait = truth["steady_wait"]["sum_ns"]
    share = wait / steady
    long_gaps = sum(g for g in truth["gaps_ns"] if g >= 1000000) / steady
    lo = max(0, min(wait, long_gaps * steady) - max(0, truth["steady_run_delay_ns"])) / steady
    return lo, max(share, long_gaps), share, long_gaps


def healthy(name):
    """The feeder keeps up: no HIGH or MEDIUM chain, but what the program's
    own account allows on a slower machine (under emulation the 'healthy'
    feeder waits most of its loop): starvation of the severity its share
    of the steady loop calls for (starvation_bracket), and CPU contention
    within the run-queue wait the kernel counted for the thread."""
    truth, r = load(name)
    check_ops(name, truth, r)
    steady = truth["steady_ns"]
    wait = truth["steady_wait"]["sum_ns"]
    lo, hi, share, long_gaps = starvation_bracket(truth)
    allowed = severities_between(lo, hi)
    load_ = neighbour_chains(r, truth["tid"], truth.get("run_delay_ns", -1))
    if runq_cost(load_) > 1.03 * truth.get("run_delay_ns", -1) + 2e6:
        bad.append("%s: CPU contention %s, more than the kernel counted (%s)"
                   % (name, ms(runq_cost(load_)), ms(truth["run_delay_ns"])))
    loud = [(c["severity"], c.get("stage"), c["summary"]) for c in r["chains"]
            if c["severity"] != "LOW" and c not in load_ and
            not (c["cause"] == "data_starvation" and c["severity"] in allowed)]
    print("%s: steady wait %s of a %s steady loop (%.0f%%, %.0f%% off the run-queue wait, gaps"
          " of 1 ms or more %.0f%%: %s)" % (
              name, ms(wait), ms(steady), 100 * share, 100 * lo, 100 * long_gaps,
              "/".join(sorted(allowed))))
    if loud:
        bad.append("%s: the feeder keeps up, yet HIGH or MEDIUM chains: %r" % (name, loud))


def same_roles(a, b):
    """Workers renamed pt_data_worker or left python3: the same conclusion."""
    seen = []
    for name in (a, b):
        truth, r = load(name)
        c = steady_chain(name, r)
        procs = {p["pid"]: p for p in r["processes"]}
        seen.append({
            "worker roles": sorted({procs.get(p, {}).get("role") or "none"
                                    for p in truth["feeders"]["processes"]}),
            "workers": c["evidence"].get("workers") if c else None,
            "woke roles": sorted({t.get("role") or "none" for t in (c["evidence"]["tasks"] if c else [])
                                  if t["relation"] == "woke" and t["pid"] in
                                  truth["feeders"]["processes"]}),
        })
    print("%s: %r\n%s: %r" % (a, seen[0], b, seen[1]))
    if seen[0] != seen[1]:
        bad.append("named and unnamed workers differ: %s %r, %s %r" % (a, seen[0], b, seen[1]))


def decoding(name):
    truth, r = load(name)
    groups = {g["role"]: g for g in (r.get("profile") or {}).get("groups", [])}
    g = groups.get("input worker")
    if not g or not g["python"]:
        bad.append("%s: no profile of the input workers: %r" % (name, sorted(groups)))
        return
    top = g["python"][0]
    print("%s: the workers' top line %s (%d of %d samples), from %s"
          % (name, top["frame"], top["self_samples"], g["samples"],
             (top.get("caller") or {}).get("frame")))
    pkgs = ("/PIL/",) if truth["decode_s"] >= truth["transform_s"] else ("/PIL/", "/torchvision/")
    if not any(p in top["file"] for p in pkgs):
        bad.append("%s: the workers' top line is %s, not %s" % (name, top["frame"], " or ".join(pkgs)))
    elif not (top.get("caller") or {}).get("function", "").endswith("__getitem__"):
        bad.append("%s: PIL's line is not shown from the dataset's __getitem__: %r"
                   % (name, top.get("caller")))
    c = steady_chain(name, r)
    recs = " ".join(c["recommendations"]) if c else ""
    print("%s: %s" % (name, recs))
    # what the workers' own clocks say their CPU went to: the fix must
    # speak of the work that took the most, or of one within the profile's
    # 10 points of it (shares that close are a tie to the profile), at its
    # share of the samples within those 10 points
    clock = {"decode": truth["decode_s"], "transform": truth["transform_s"]}
    says = {"decode": "CPU decoding", "transform": "CPU in transforms"}
    works = {w["work"]: w["samples"] for w in g.get("works", [])}
    named = [w for w in says if says[w] in recs]
    share = {w: 100 * s * 1e9 / g["cpu_ns"] for w, s in clock.items()}
    print("%s: the workers' clocks: decoding %.2f s, transforms %.2f s (%.1f%%, %.1f%% of the "
          "group's CPU); the fix speaks of %s" % (name, clock["decode"], clock["transform"],
                                               share["decode"], share["transform"], named))
    if len(named) != 1:
        bad.append("%s: the fix speaks of neither decoding nor the transforms: %r" % (name, recs))
    else:
        w = named[0]
        have = 100 * works.get(w, 0) / g["samples"]
        if share[w] < max(share.values()) - 10:
            bad.append("%s: the fix speaks of %s, %.1f%% of the workers' CPU by their clocks, "
                       "where %s took %.1f%%" % (name, w, share[w],
                                                max(share, key=share.get), max(share.values())))
        if abs(have - share[w]) > 10:
            bad.append("%s: %s %.1f%% of the samples, %.1f%% of the workers' CPU by their "
                       "clocks" % (name, w, have, share[w]))
        if w == "decode" and "PIL/" not in recs:
            bad.append("%s: the decoding fix quotes no PIL line: %r" % (name, recs))
    n = truth["workers_at_once"]
    if "%d input workers" % n not in recs:
        bad.append("%s: the fix does not count the %d workers of a loader (%d in all): %r"
                   % (name, n, truth["workers"], recs))
    if "in memory as a tensor" in recs:
        bad.append("%s: in-memory tensor advice without indexing in the profile: %r"
                   % (name, recs))


def own_gaps(name):
    truth, r = load(name)
    groups = {g["role"]: g for g in (r.get("profile") or {}).get("groups", [])}
    g = groups.get("cuda thread")
    if not g or not g["python"]:
        bad.append("%s: no profile of the CUDA thread's gaps: %r" % (name, sorted(groups)))
        return
    top = g["python"][0]
    share = top["self_samples"] / g["samples"]
    print("%s: the CUDA thread's top line %s, %.0f%% of %d samples"
          % (name, top["frame"], 100 * share, g["samples"]))
    if top["function"] != "sample" or not top["file"].endswith("feeders.py") or share < 0.5:
        bad.append("%s: the CUDA thread's gaps are not shown in sample(): %s (%.0f%%)"
                   % (name, top["frame"], 100 * share))
    c = steady_chain(name, r)
    recs = " ".join(c["recommendations"]) if c else ""
    if top["frame"] not in recs or "in memory as a tensor" in recs:
        bad.append("%s: the fix does not quote %s, or speaks of an in-memory tensor: %r"
                   % (name, top["frame"], recs))


def main():
    cmd, names = sys.argv[1], sys.argv[2:]
    {"starved": starved, "healthy": healthy, "same-roles": same_roles,
     "decoding": decoding, "own-gaps": own_gaps}[cmd](*names)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
