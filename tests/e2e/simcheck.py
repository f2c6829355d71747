# SPDX-License-Identifier: MIT
"""Checks of `report --json` against the truth simtrain logged itself.

Imported by the t40x tests (tests/e2e/lib-sim.sh sets PYTHONPATH).  Each
check adds a line to Checks.errors; Checks.done() prints them and exits 1 if
there are any.

The tolerances, and why.  Where the trace itself can say how much two
honest measurements may differ, the allowance is measured from it (Slack)
rather than guessed:

* Calls: exact.  The workload counts every call it makes.

* Durations (p50, p99, total per op).  record's trace clock is
  CLOCK_MONOTONIC, the clock the workload reads around each call, and the
  probes fire inside that interval, so each recorded duration is at most the
  workload's; the order statistics keep that: report <= truth (+ 1 us of
  rounding).  Below, by what lies between the workload's clock reads and the
  probes: the uprobe entry and return (1-3 us measured here; simtrain binds
  its symbols at start, so no lazy binding is in there): 30 us + 2%; and by
  a preemption there: the return from the uprobe's trap is a preemption
  point, so on a loaded machine a thread is now and then preempted just
  before a call's entry probe or just after its return probe, inside the
  workload's interval but outside the recorded call.  simtrain logs each
  call's interval, so those waits are measured from the trace, call by call
  (Slack): no percentile moves by more than the longest of them (order
  statistics are 1-Lipschitz), no total by more than their sum.  And each
  recorded call must lie inside its interval (exact).
  What the trace cannot see, an interrupt or the hypervisor taking the CPU
  there, is short and rare, but when it lands on one of the few slowest
  calls of an op (the p99 of 80 calls is the slowest) the workload's p99
  moves and the report's does not: the report's p99 may also be anywhere
  down to the workload's p95 - (30 us + 2%) (at most 4% of the calls hit).

* Context switches.  simtrain notes CLOCK_MONOTONIC just before and after
  its getrusage(): the switch-outs the trace has before the first are all
  in the kernel's counts, the ones after the second none; the kernel's
  counts also hold the switches of the recorder's child before the trace
  began (it waits on a pipe until the probes are armed): up to PRE_TRACE.
  The report's counts must be every switch-out in the trace (exact).

* Time off CPU between calls.  The workload measures each gap as wall time
  minus its CLOCK_THREAD_CPUTIME_ID time; the report splits the same gaps
  into blocked and run-queue time.  3% + 2 us per gap (the workload's clock
  reads, 0.6-1.3 us measured without contention) + 2 ms, and:
  - the report's gap runs from the return probe to the next entry probe, so
    it holds the workload's gap and the time off CPU between the workload's
    clock reads and the probes (Slack.edge_ns): report >= truth by up to
    that;
  - time a CPU spent in interrupts, softirqs or stolen by the hypervisor
    while the thread was current is on CPU for the trace but in no thread's
    CPU clock: report <= truth by up to the machine's total of it during
    the run (/proc/stat, logged by simtrain, 2 ticks a CPU of rounding);
  - a wake-up that preempts a running task moves the CPU time between the
    two: the kernel updates the run queue's clock as it queues the woken
    task and skips the update in the schedule() that follows
    (check_preempt_curr(), rq_clock_skip_update()), so the preempted
    task's clock stops at the wake-up and the woken one's starts there,
    while the trace has the first on CPU until the switch.  Natively a few
    us a preemption; under emulation 100-500 us, 3% of a page-fault storm's
    time (a 6.1 arm64 guest).  Preempted: report <= truth by up to the time
    from each wake-up to the switch-out it may have caused
    (Slack.preempt_lag_ns); preempting: report >= truth by up to the time
    from its own wake-up to each switch-in that preempted a task
    (Slack.wake_lag_ns);
  - switch-ins the kernel did not write.  Some kernels never emit
    sched_switch from the idle task on some CPUs (the 2-CPU Firecracker VMs
    we test on: none from swapper/1, with or without set_event_pid).  A
    thread woken onto that idle CPU has its wake-up and its next switch-out
    in the trace but no switch-in, and the report must guess where it began
    to run (Slack.missing_ns, in the gaps): either way by that much.
"""
import bisect
import json
import sys

US = 1000
MS = 1000 * 1000

# switches of the recorder's child before the trace began
PRE_TRACE = 2


class Truth:
    """simtrain's log: one JSON object a line, by type."""

    def __init__(self, path):
        self.ops, self.gaps, self.rusage, self.calls, self.each = {}, {}, [], [], {}
        self.done = []          # by call: when the device finished a synchronize's op
        self.run = self.loop = self.active = self.wait = self.storm = self.cpustat = None
        self.parent = None
        for line in open(path):
            t = json.loads(line)
            kind = t["type"]
            if kind == "op":
                self.ops[t["op"]] = t
            elif kind == "gaps":
                self.gaps[t["next_op"]] = t
            elif kind == "rusage":
                self.rusage.append(t)
            elif kind == "call":
                self.calls.append((t["op"], t["t0"], t["t1"]))
                self.done.append(t.get("done", 0))
            elif kind in ("gap", "waited", "step", "posted"):
                self.each.setdefault(kind, []).append(t)
            else:
                setattr(self, kind, t)
        if not self.run:
            raise SystemExit("%s: no run line: the workload did not finish" % path)
        self.pid = self.run["pid"]
        self.tid = self.run["feeder_tid"]

    def steady(self, report):
        """The same truth for the steady state alone: the gaps that end, the
        waits that end and the steps that fault inside the feeding thread's
        training loop as the report found it (its first call's entry to its
        last call's return; the trace clock is CLOCK_MONOTONIC, as the
        workload's).  The loop must begin inside one of the workload's own
        calls (between its clock reads around the call) and end inside one."""
        import copy
        th = [t for p in report["processes"] for t in p["threads"] if t["tid"] == self.tid]
        loop = th[0]["loop"] if th else None
        if not loop or not loop["period"]:
            raise SystemExit("the report found no training loop on thread %d" % self.tid)
        lo = report["trace"]["start_ts"] + loop["from_ns"]
        hi = report["trace"]["start_ts"] + loop["to_ns"]
        inside = lambda ts: [i for i, c in enumerate(self.calls) if c[1] <= ts <= c[2]]
        first, last = inside(lo), inside(hi)
        if not first:
            raise SystemExit("the loop begins at %d, inside no call of the workload's" % lo)
        if not last:
            raise SystemExit("the loop ends at %d, inside no call of the workload's" % hi)
        first, last = first[0], last[-1]
        t0, t1 = self.calls[first][1], self.calls[last][2]
        s = copy.copy(self)
        s.calls = self.calls[first:last + 1]
        s.done = self.done[first:last + 1]
        s.active = {"active_ns": t1 - t0}
        gaps = [g for g in self.each.get("gap", []) if t0 < g["t1"] <= t1]
        s.gap_list = gaps
        wall, cpu = sum(g["wall_ns"] for g in gaps), sum(g["cpu_ns"] for g in gaps)
        over = [g for g in gaps if g["wall_ns"] >= 1 * MS]
        s.gaps = dict(self.gaps)
        s.gaps["all"] = {"count": len(gaps), "wall_ns": wall, "cpu_ns": cpu,
                         "offcpu_ns": max(0, wall - cpu), "over_floor": len(over),
                         "over_floor_cpu_ns": sum(g["cpu_ns"] for g in over)}
        if self.wait:
            ws = [w for w in self.each.get("waited", []) if t0 < w["t1"] <= t1]
            # each post's clock reads around sem_post, by worker and the first
            ends = {(p["pid"], p["post_ns"]): p["end_ns"] for p in self.each.get("posted", [])}
            by = {}
            for w in ws:
                if w["blocked_ns"]:
                    x = by.setdefault(w["pid"], {"pid": w["pid"], "batches": 0, "blocked_ns": 0,
                                                 "spans": [], "posting_ns": 0, "unposted": 0})
                    x["batches"] += 1
                    x["blocked_ns"] += w["blocked_ns"]
                    # from the clock read before the wait to the worker's before its post
                    t0 = w["t1"] - w["wait_ns"]
                    x["spans"].append((t0, t0 + w["blocked_ns"]))
                    # and the post itself, inside which it woke the thread
                    end = ends.get((w["pid"], t0 + w["blocked_ns"]))
                    if end is None:
                        x["unposted"] += 1
                    else:
                        x["posting_ns"] += end - (t0 + w["blocked_ns"])
            s.wait = dict(self.wait, batches=len(ws), wait_ns=sum(w["wait_ns"] for w in ws),
                          blocked_ns=sum(w["blocked_ns"] for w in ws),
                          woken_by=list(by.values()))
        if self.storm:
            st = [x for x in self.each.get("step", []) if t0 < x["t1"] <= t1]
            s.storm = dict(self.storm, steps=len(st), bytes=sum(x["bytes"] for x in st),
                           minflt=sum(x["minflt"] for x in st))
        return s

    def of_role(self, role):
        return [r for r in self.rusage if r["role"] == role]

    def recorder_cpu_ns(self):
        """The CPU time of the recorder that ran the workload (its parent,
        ingero-ftrace), rounded up: the most the workload's threads can have
        waited for a CPU behind it.  0 where the parent was not the
        recorder; None where the workload could not read it."""
        p = self.parent or {}
        if p.get("comm") != "ingero-ftrace":
            return 0
        if p.get("cpu_ns", -1) < 0:
            return None
        return p["cpu_ns"] + 2 * self.cpustat["tick_ns"]

    def irq_ns(self):
        """Interrupt, softirq and steal time of the whole machine during the
        run, rounded up."""
        c = self.cpustat
        return c["irq_ns"] + 2 * c["tick_ns"] * self.run["cpus"]


class Checks:
    def __init__(self, name):
        self.name = name
        self.errors = []
        self.notes = []

    def ok(self, cond, msg):
        if not cond:
            self.errors.append(msg)
        return cond

    def near(self, what, got, want, rel, absolute):
        """|got - want| <= rel x want + absolute"""
        tol = rel * want + absolute
        self.note("%s: report %s, truth %s (tolerance %s)" % (what, fmt(got), fmt(want), fmt(tol)))
        return self.ok(abs(got - want) <= tol,
                       "%s: report %s, truth %s, differ by more than %s" %
                       (what, fmt(got), fmt(want), fmt(tol)))

    def between(self, what, got, want, below, above):
        """want - below <= got <= want + above"""
        self.note("%s: report %s, truth %s (-%s +%s)" % (what, fmt(got), fmt(want), fmt(below),
                                                         fmt(above)))
        return self.ok(want - below <= got <= want + above,
                       "%s: report %s, truth %s, outside -%s +%s" %
                       (what, fmt(got), fmt(want), fmt(below), fmt(above)))

    def note(self, msg):
        self.notes.append(msg)

    def done(self):
        for n in self.notes:
            print("  " + n)
        for e in self.errors:
            print("FAIL %s: %s" % (self.name, e))
        if self.errors:
            sys.exit(1)
        print("ok: %s" % self.name)


def fmt(ns):
    """nanoseconds, for people"""
    if abs(ns) < 10 * US:
        return "%dns" % ns
    if abs(ns) < 10 * MS:
        return "%.1fus" % (ns / US)
    return "%.2fms" % (ns / MS)


def load_report(path):
    return json.load(open(path))


def probed(path="probed.txt"):
    return {l.strip() for l in open(path) if l.strip()}


class Trace:
    """The events of `dump --json --table switches,wakeups,calls`."""

    def __init__(self, path):
        self.events = [json.loads(line) for line in open(path)]

    def _time_in(self, tid, spans, state, start):
        """The time inside SPANS ([a, b) pairs, trace clock) that TID was in
        the state STATE(switched_in, switched_out_runnable) gives after each
        of its switches; START before the first."""
        ev = sorted((e["ts"], state(e["next_tid"] == tid and e["tid"] != tid,
                                    e["tid"] == tid and e["next_tid"] != tid and
                                    e["prev_state"].startswith("R")))
                    for e in self.events if e["event"] == "sched_switch" and
                    tid in (e["tid"], e["next_tid"]))
        ns = 0
        for a, b in spans:
            on, last = start, a
            for ts, now in ev:
                if ts <= a:
                    on = now
                    continue
                if ts >= b:
                    break
                if on:
                    ns += ts - last
                on, last = now, ts
            if on:
                ns += b - last
        return ns

    def awake_in(self, tid, spans):
        """The time TID was not blocked (on a CPU, or runnable waiting for one)
        inside SPANS, [a, b) pairs in the trace clock, as its switches say;
        awake where no switch says otherwise."""
        return self._time_in(tid, spans, lambda switch_in, preempted: switch_in or preempted,
                             True)

    def switch_counts(self, tids, before=None):
        """Switch-outs of TIDS (before BEFORE, if given): (involuntary,
        voluntary)."""
        inv = vol = 0
        for e in self.events:
            if e["event"] != "sched_switch" or e["tid"] not in tids:
                continue
            if before is not None and e["ts"] >= before:
                continue
            if e["prev_state"] in ("R", "R+"):
                inv += 1
            else:
                vol += 1
        return inv, vol


class Slack:
    """What the trace says about the feeding thread that moves time between
    the workload's measurements and the report's (see above).  Matches each
    recorded call with the workload's own interval [t0, t1] around it (same
    order, same op, of the probed functions FUNCS: errors lists any that
    differ, or lie outside), and
    measures the thread's time off CPU inside that interval but outside the
    recorded call (edge: by op the longest and the sum, and in all), and
    the stretches with no switch-in (missing_ns: the part between calls),
    and the time from each wake-up that may have preempted the thread to
    its switch-out (preempt_lag_ns, between calls: a task woken onto the
    thread's CPU while it ran, which then took the CPU from it), and from
    the thread's own wake-up to each switch-in that may have been its
    preemption of another (wake_lag_ns, between calls)."""

    def __init__(self, trace, truth, funcs):
        tid = truth.tid
        mine = [c for c in truth.calls if c[0] in funcs]
        state, since, woke, offs, missing, rec = None, None, None, [], [], []
        waking, lags, wlags, woke_cpu = {}, [], [], None
        for e in trace.events:
            ev = e["event"]
            if ev == "sched_switch":
                if e["next_tid"] == tid:
                    # it preempted the task it woke onto
                    if state == "off" and woke and e["prev_state"].startswith("R") and \
                            woke_cpu == e["cpu"]:
                        wlags.append((e["ts"], e["ts"] - woke))
                    if state == "off":
                        offs.append((since, e["ts"]))
                    state, since = "running", e["ts"]
                elif e["tid"] == tid:
                    # preempted by a task woken onto this CPU as it ran
                    w = waking.get(e["next_tid"])
                    if e["prev_state"].startswith("R") and state == "running" and w and \
                            w[0] >= since and w[1] == e["cpu"]:
                        lags.append((e["ts"], e["ts"] - w[0]))
                    if state == "off":
                        # no switch-in: off CPU until the wake-up, then unknown
                        offs.append((since, woke or since))
                        missing.append((woke or since, e["ts"]))
                    state, since, woke = "off", e["ts"], None
            elif ev in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
                if e["tid"] == tid and state == "off" and woke is None:
                    woke, woke_cpu = e["ts"], e.get("target_cpu", e["cpu"])
                if ev == "sched_waking" and e["tid"] != tid:
                    waking[e["tid"]] = (e["ts"], e.get("target_cpu"))
            elif "dur_ns" in e and e["tid"] == tid and not e.get("nested"):
                rec.append((e["ts"], e["ts"] + e["dur_ns"], ev))
        rec.sort()
        offs.sort()
        ends = [b for _, b in offs]

        def off_in(a, b):
            ns, i = 0, bisect.bisect_right(ends, a)
            while i < len(offs) and offs[i][0] < b:
                ns += max(0, min(b, offs[i][1]) - max(a, offs[i][0]))
                i += 1
            return ns

        self.errors = []
        self.op_edge_max, self.op_edge_sum = {}, {}
        self.op_over = {}
        self.op_pairs = {}
        # by the workload's t0 of a call: its interval's time on a CPU
        # before the recorded entry, and after the recorded return
        self.sides = {}
        self.n_edge = self.edge_ns = 0
        if len(rec) != len(mine):
            self.errors.append("%d calls recorded on thread %d, the workload made %d" %
                               (len(rec), tid, len(mine)))
        for (entry, ret, op), (name, t0, t1) in zip(rec, mine):
            if op != name or not t0 <= entry <= ret <= t1:
                if len(self.errors) < 10:
                    self.errors.append("recorded %s [%d, %d], the workload's %s [%d, %d]" %
                                       (op, entry, ret, name, t0, t1))
                continue
            edge = off_in(t0, entry) + off_in(ret, t1)
            self.sides[t0] = (entry - t0 - off_in(t0, entry), t1 - ret - off_in(ret, t1))
            # what the workload's interval holds beyond the recorded call on
            # a CPU: its clock reads and the two probes' traps, this
            # machine's cost (a few us here, far more under emulation)
            self.op_over.setdefault(op, []).append((entry - t0) + (t1 - ret) - edge)
            # the recorded duration and all the workload's interval holds
            # beyond it, call by call (bound())
            self.op_pairs.setdefault(op, []).append((ret - entry, (t1 - t0) - (ret - entry)))
            if edge:
                self.n_edge += 1
                self.edge_ns += edge
                self.op_edge_max[op] = max(self.op_edge_max.get(op, 0), edge)
                self.op_edge_sum[op] = self.op_edge_sum.get(op, 0) + edge
        gaps, end = [], None
        for a, b, _ in rec:
            if end is not None and a > end:
                gaps.append((end, a))
            end = b if end is None else max(end, b)
        self.n_missing = len(missing)
        self.missing_ns = sum(max(0, min(b, t) - max(a, s)) for a, b in missing for s, t in gaps)
        starts = [a for a, _ in gaps]
        in_gap = lambda ts: bisect.bisect_right(starts, ts) > 0 and \
            ts < gaps[bisect.bisect_right(starts, ts) - 1][1]
        lags = [d for ts, d in lags if in_gap(ts)]
        self.n_lag, self.preempt_lag_ns = len(lags), sum(lags)
        wlags = [d for ts, d in wlags if in_gap(ts)]
        self.n_wlag, self.wake_lag_ns = len(wlags), sum(wlags)

    def over_all(self):
        """The cost of clock reads and probes over every call: what the
        report's gaps may hold beyond the workload's own (a gap holds the
        return side of one call and the entry side of the next)."""
        return sum(sum(v) for v in self.op_over.values())

    def over(self, op, q):
        """The Q quantile of OP's per-call cost of clock reads and probes."""
        v = sorted(self.op_over.get(op, [0]))
        return v[min(len(v) - 1, int(q * len(v)))]

    def bound(self, op, got):
        """How far below the workload's quantile the report's GOT may lie,
        exactly: the calls recorded at or below GOT are at least as many as
        the quantile's rank, and each is the workload's duration less what
        its interval holds beyond it, so the workload's quantile is at most
        GOT plus the largest such excess among them."""
        return max([d for r, d in self.op_pairs.get(op, []) if r <= got] or [0])

    def over_sum(self, op):
        return sum(self.op_over.get(op, []))

    def __str__(self):
        return ("%d calls off CPU at their edges (%s), %d runs with no switch-in (%s between "
                "calls), %d preemptions by a wake-up between calls (%s from the wake-ups), %d "
                "of another on its own wake-up (%s)" %
                (self.n_edge, fmt(self.edge_ns), self.n_missing, fmt(self.missing_ns),
                 self.n_lag, fmt(self.preempt_lag_ns), self.n_wlag, fmt(self.wake_lag_ns)))


def chains(report, cause=None, phase=None, op=None, stage="steady"):
    """The chains of the steady state (stage None: of every stage)."""
    return [c for c in report["chains"]
            if (cause is None or c["cause"] == cause) and
            (phase is None or c["phase"] == phase) and (op is None or c["op"] == op) and
            (stage is None or c["stage"] == stage)]


def one_chain(chk, report, cause, phase, op):
    """The chain (cause, phase, op), which must exist; None if not."""
    cs = chains(report, cause, phase, op)
    summary = ["%s %s %s %s" % (c["severity"], c["cause"], c["phase"], c["op"])
               for c in report["chains"]]
    if not chk.ok(len(cs) == 1, "no %s chain %s %s among %s" % (cause, phase, op, summary)):
        return None
    return cs[0]


def tasks(chain, relation):
    return [t for t in chain["evidence"]["tasks"] if t["relation"] == relation]


def pct_ok(chk, name, p50, p99, t, edge=0, slack_of=None, side=None):
    """The report's p50 and p99 of op NAME against the workload's T; EDGE:
    the longest wait at a probe of one of its calls; SLACK_OF: the Slack
    whose per-call cost of clock reads and probes (at the same quantile) the
    workload's own timing holds beyond the recorded call; SIDE: a name for
    the run, in the messages."""
    what = "%s %s" % (side, name) if side else name
    for key, q in (("p50_ns", 0.5), ("p99_ns", 0.99)):
        got = p50 if q == 0.5 else p99
        want = t[key]
        slack = 0.02 * want + 30 * US + edge + (slack_of.over(name, q) if slack_of else 0)
        if slack_of:
            # an emulated CPU's probes cost far more, and unevenly: the
            # exact bound of the calls themselves holds wherever they ran
            slack = max(slack, slack_of.bound(name, got) + US)
        ok = got <= want + US and want - got <= slack
        if key == "p99_ns" and not ok and got <= want + US:
            # a few of the slowest calls interrupted outside the probes
            ok = got >= t["p95_ns"] - 0.02 * t["p95_ns"] - 30 * US
        chk.ok(ok, "%s %s: report %s, workload %s (report <= workload, by at most %s)" %
               (what, key[:3], fmt(got), fmt(want), fmt(slack)))


def check_ops(chk, truth, report, funcs, slack):
    """Every probed op the workload called, with its calls and durations; no
    other op."""
    ops = {o["op"]: o for o in report["ops"]}
    want = {name for name in truth.ops if name in funcs}
    # each recorded call inside the interval the workload measured around it
    for e in slack.errors:
        chk.ok(False, e)
    chk.ok(set(ops) == want, "ops %s, but the workload called %s of the probed functions" %
           (sorted(ops), sorted(want)))
    for name in sorted(want & set(ops)):
        t, o = truth.ops[name], ops[name]
        n = t["count"]
        chk.ok(o["calls"] == n, "%s: %d calls, the workload made %d" % (name, o["calls"], n))
        chk.ok(o["errors"] == 0, "%s: %d errors, the workload saw none" % (name, o["errors"]))
        pct_ok(chk, name, o["p50_ns"], o["p99_ns"], t, slack.op_edge_max.get(name, 0), slack)
        got, lim = o["total_ns"], t["sum_ns"]
        edge = slack.op_edge_sum.get(name, 0)
        chk.ok(got <= lim + US and
               lim - got <= 0.02 * lim + n * 30 * US + edge + slack.over_sum(name),
               "%s total: report %s, workload %s (%s of waits at its probes, %s of clock reads "
               "and probes)" % (name, fmt(got), fmt(lim), fmt(edge), fmt(slack.over_sum(name))))
        chk.note("%s: %d calls, p50 %s/%s p99 %s/%s (report/workload; %s at probes)" %
                 (name, n, fmt(o["p50_ns"]), fmt(t["p50_ns"]), fmt(o["p99_ns"]), fmt(t["p99_ns"]),
                  fmt(slack.op_edge_max.get(name, 0))))


def check_switches(chk, what, trace, tids, inv, vol, ru, start=None):
    """The report's switch counts INV and VOL of TIDS: every switch-out in
    the trace; and the trace's up to the workload's getrusage RU, the
    kernel's own counts.  The kernel counts from the fork of the recorder's
    child, which waits on a pipe until the probes are armed, and a loaded
    machine preempts it there any number of times: with START (the same
    thread's getrusage when the workload began, before any other thread or
    process of it), the kernel's count from START to RU is held to the
    trace's between them; without, up to PRE_TRACE switches before the
    trace are allowed."""
    all_inv, all_vol = trace.switch_counts(tids)
    chk.ok((inv, vol) == (all_inv, all_vol),
           "%s: report %d involuntary + %d voluntary switches, the trace has %d + %d" %
           (what, inv, vol, all_inv, all_vol))
    i0, v0 = trace.switch_counts(tids, ru["t0_ns"])
    i1, v1 = trace.switch_counts(tids, ru["t1_ns"] + 1)
    if start:
        # a switch traced before START's t0 is in its count, one after its
        # t1 is not: the kernel's count since then lies between
        si0, sv0 = trace.switch_counts(tids, start["t0_ns"])
        si1, sv1 = trace.switch_counts(tids, start["t1_ns"] + 1)
        lo_i, hi_i = i0 - si1, i1 - si0
        lo_v, hi_v = v0 - sv1, v1 - sv0
        ki, kv = ru["nivcsw"] - start["nivcsw"], ru["nvcsw"] - start["nvcsw"]
        span = "since the workload began"
    else:
        lo_i, hi_i, lo_v, hi_v = i0, i1 + PRE_TRACE, v0, v1 + PRE_TRACE
        ki, kv = ru["nivcsw"], ru["nvcsw"]
        span = "up to then"
    from taskscheck import state_passed
    if state_passed():
        chk.ok(lo_i <= ki <= hi_i and lo_v <= kv <= hi_v,
               "%s: getrusage %d involuntary + %d voluntary, the trace %d-%d + %d-%d %s" %
               (what, ki, kv, lo_i, hi_i, lo_v, hi_v, span))
    else:
        # before 5.18 sched_switch read prev->state again after the kernel
        # counted the switch: a sleep a wake-up overtook is voluntary to the
        # kernel and R to the trace, so only the sum holds
        chk.ok(lo_i + lo_v <= ki + kv <= hi_i + hi_v,
               "%s: getrusage %d switches, the trace %d-%d %s" %
               (what, ki + kv, lo_i + lo_v, hi_i + hi_v, span))
    chk.note("%s: switches %d + %d, getrusage %d + %d then, the trace %d + %d then" %
             (what, inv, vol, ru["nivcsw"], ru["nvcsw"], i0, v0))


def check_main(chk, truth, report, trace):
    """The CUDA process and its feeding thread: who they are, their switches."""
    procs = {p["pid"]: p for p in report["processes"]}
    p = procs.get(truth.pid)
    if not chk.ok(p is not None, "the workload's process %d is not in the report" % truth.pid):
        return
    chk.ok(p["role"] == "cuda process", "process %d has role %r" % (truth.pid, p["role"]))
    # at start the process was its main thread alone
    start = (truth.of_role("start") or [None])[0]
    check_switches(chk, "process %d" % truth.pid, trace, {t["tid"] for t in p["threads"]},
                   p["involuntary_switches"], p["voluntary_switches"], truth.of_role("main")[0],
                   start)
    th = [t for t in p["threads"] if t["tid"] == truth.tid]
    if chk.ok(th, "the feeding thread %d is not in the report" % truth.tid):
        th = th[0]
        chk.ok(th["role"] == "cuda thread", "thread %d has role %r" % (truth.tid, th["role"]))
        check_switches(chk, "thread %d" % truth.tid, trace, {truth.tid}, th["involuntary_switches"],
                       th["voluntary_switches"], truth.of_role("feeder")[0],
                       start if start and start["tid"] == truth.tid else None)


def steady_op(steady, op):
    """OP's calls in a steady() truth, as the workload timed them; for a
    synchronize on simcuda also the part of them spent waiting for the
    device (device_ns: from the call to the device finishing its op), the
    rest being the thread's way back (woken, waiting for a CPU, returning).
    device_ns is None where the runtime did not say when its ops finished."""
    mine = [(t0, t1, done) for (name, t0, t1), done in zip(steady.calls, steady.done)
            if name == op]
    dev = None
    if mine and all(done for _, _, done in mine):
        dev = sum(max(0, min(done, t1) - t0) for t0, t1, done in mine)
    return {"count": len(mine), "sum_ns": sum(t1 - t0 for t0, t1, _ in mine),
            "device_ns": dev}


def check_device_wait(chk, ev, ssync):
    """A gpu_bound chain's device wait against the workload's own split of
    its synchronizes (steady_op()): not more than all their time.  Their
    wait for the device (until simcuda finished the op) bounds nothing
    more: a thread preempted while it spins, or on its way to block, waits
    for a CPU while the device still works, and the report takes that wait
    out of the device's (seen in a 5.10 guest: 73 ms of run-queue wait in
    548 ms of synchronizes, 52 ms of them after the device was done)."""
    chk.ok(ev["device_wait_ns"] <= ssync["sum_ns"], "device wait %s > the workload's %s" %
           (fmt(ev["device_wait_ns"]), fmt(ssync["sum_ns"])))
    if ssync["device_ns"] is not None:
        chk.note("device wait: report %s, the workload waited %s for the device in %s" %
                 (fmt(ev["device_wait_ns"]), fmt(ssync["device_ns"]), fmt(ssync["sum_ns"])))


def check_active(chk, truth, chain, slack=None):
    """The chain's active time: the first call to the last return.  The
    workload's own clock reads and the probes of every call (SLACK) lie
    inside its interval and outside the report's: under emulation the first
    call's alone is far over 1%."""
    if chain:
        over = slack.over_all() if slack else 0
        chk.between("active time", chain["wall_ns"], truth.active["active_ns"],
                    0.01 * truth.active["active_ns"] + 1 * MS + over,
                    0.01 * truth.active["active_ns"] + 1 * MS)
        chk.ok(chain["wall_ns"] <= truth.active["active_ns"],
               "active time %s is longer than the workload's %s" %
               (fmt(chain["wall_ns"]), fmt(truth.active["active_ns"])))


def check_gap_offcpu(chk, truth, chain, slack):
    """Blocked + run-queue time between calls (the excused wait too: behind
    the recorder or an idle CPU, no one's contention but off CPU all the
    same) against the workload's own wall - CPU time in the gaps."""
    g = truth.gaps["all"]
    ev = chain["evidence"]
    tol = 0.03 * g["offcpu_ns"] + 2 * US * g["count"] + 2 * MS + slack.missing_ns
    chk.note("between calls: %s" % slack)
    chk.between("off-CPU time between calls",
                ev["blocked_ns"] + ev["runqueue_wait_ns"] + ev.get("excused_ns", 0),
                g["offcpu_ns"], tol + truth.irq_ns() + slack.preempt_lag_ns,
                tol + slack.edge_ns + slack.wake_lag_ns)


def only_contention_before(chk, report, chain):
    """CHAIN is the cause the workload was built to have; on a shared machine
    other load may cost the thread more, as CPU contention, and rank above
    it, but nothing else may."""
    above = report["chains"][:report["chains"].index(chain)]
    chk.ok(all(c["cause"] == "cpu_contention" for c in above),
           "ranked above the %s chain: %s" % (chain["cause"], ["%s %s %s %s" % (
               c["severity"], c["cause"], c["phase"], c["op"]) for c in above]))


def severities(share):
    """The severities a cause costing SHARE of the active time may have:
    HIGH from 20%, MEDIUM from 5% (docs/report.md), either side of a bound
    within 2%."""
    sev = lambda x: "HIGH" if x >= 0.2 else "MEDIUM" if x >= 0.05 else "LOW"
    return {sev(share - 0.02), sev(share + 0.02)}


def severities_between(lo, hi):
    """The severities of a cause whose share of the active time the
    workload can only bracket, between LO and HI (each within 2%)."""
    out = severities(lo) | severities(hi)
    if lo < 0.05 <= hi or lo < 0.2 <= hi:
        out.add("MEDIUM")
    return out


def neighbour_chains(report, tid, run_delay_ns):
    """The CPU contention chains on thread TID of a run that has no host
    cause of its own, so that all its waiting for a CPU is other load's on
    the machine (directly, or through the workload's own threads competing
    for what the load leaves): the kernel's count of that waiting,
    RUN_DELAY_NS (/proc/thread-self/schedstat), bounds them, which
    neighbour_contention() checks.  None where the kernel keeps no count
    (RUN_DELAY_NS < 0)."""
    if run_delay_ns is None or run_delay_ns < 0:
        return []
    return [c for c in report["chains"] if c["cause"] == "cpu_contention" and c["tid"] == tid]


def runq_cost(chains):
    """What CHAINS cost the thread in the run queue: their cost less the
    hypervisor's steal in it (evidence steal_ns, CPU contention too), which
    the scheduler's run-queue count (schedstat's run_delay) does not see."""
    return sum(c["cost_ns"] - c["evidence"].get("steal_ns", 0) for c in chains)


def neighbour_contention(chk, report, truth):
    """The neighbour_chains() of a run with no host cause of its own, which
    together must cost no more than the run-queue wait the scheduler itself
    counted for the thread.  A test must hold on a loaded machine, and the
    report is right to say the machine was loaded; it is wrong to find more
    waiting than the kernel did (on a quiet machine that is little: no
    MEDIUM chain fits in it)."""
    delay = (truth.schedstat or {}).get("run_delay_ns", -1)
    found = neighbour_chains(report, truth.tid, delay)
    if found:
        cost = runq_cost(found)
        chk.note("neighbours' load: %s" % ["%s %s %s" % (c["severity"], c["phase"], c["op"])
                                           for c in found])
        chk.ok(cost <= 1.03 * delay + 2 * MS,
               "CPU contention from outside the workload %s, but the scheduler counted %s of "
               "run-queue wait" % (fmt(cost), fmt(delay)))
    return found


def own_gaps_bound(steady, slack):
    """The share of STEADY's active time the report may find on CPU in gaps
    over the floor, at most: a report's gap is the workload's, plus the time
    on a CPU its clock reads and the probes take after the call before and
    before the call after (SLACK, call by call), which may lift a gap just
    under the floor over it (an emulated CPU's gaps crowd there)."""
    t0s = [c[1] for c in steady.calls]
    ns = 0
    for g in steady.gap_list:
        j = bisect.bisect_left(t0s, g["t1"])
        extra = 0
        if 0 < j < len(t0s):
            extra = slack.sides.get(steady.calls[j - 1][1], (0, 0))[1] + \
                slack.sides.get(t0s[j], (0, 0))[0]
        if g["wall_ns"] + extra >= 1 * MS:
            ns += g["cpu_ns"] + extra
    return ns / steady.active["active_ns"]


def own_input(chk, report, truth, slack=None):
    """The data_starvation chains of a run with no feeders: the feeding
    thread's own work between calls (indexing, copying a batch), which the
    report counts from gaps over the floor (1 ms).  On 2 real CPUs that work
    stays under the floor; on slower CPUs (an emulated guest) it does not,
    and the chain must then be as severe as the workload's own on-CPU time
    in such gaps says, no more: with SLACK (the trace's), up to what its
    clock reads and the probes may add to each gap (own_gaps_bound())."""
    found = [c for c in report["chains"] if c["cause"] == "data_starvation" and
             c["tid"] == truth.tid and not c["evidence"].get("fed_ns", 0)]
    if found:
        steady = truth.steady(report)
        share = steady.gaps["all"]["over_floor_cpu_ns"] / steady.active["active_ns"]
        hi = max(share, own_gaps_bound(steady, slack)) if slack else share
        for c in found:
            chk.note("own input: %s %s %s, the workload on CPU %.1f%% of its active time in "
                     "gaps over 1 ms (%.1f%% with its clock reads and the probes)" %
                     (c["severity"], c["phase"], c["op"], 100 * share, 100 * hi))
            if c.get("stage") == "steady":
                chk.ok(c["severity"] in severities_between(share, hi),
                       "%s data starvation from building its own input, the workload's own "
                       "gaps over the floor are %.1f%% of its active time (%.1f%% with its "
                       "clock reads and the probes)" % (c["severity"], 100 * share, 100 * hi))
    return found


def no_high_or_medium(chk, report, truth, slack=None):
    """No HIGH or MEDIUM chain, but the contention of neighbour_contention()
    and the starvation own_input() allows."""
    ok = neighbour_contention(chk, report, truth) + own_input(chk, report, truth, slack)
    bad = [c for c in report["chains"] if c["severity"] in ("HIGH", "MEDIUM") and c not in ok]
    chk.ok(not bad, "HIGH or MEDIUM chains on a run with no host cause: %s" %
           ["%s %s %s %s: %s" % (c["severity"], c["cause"], c["phase"], c["op"], c["summary"])
            for c in bad])


def first_chain_but_neighbours(chk, report, truth, chain):
    """CHAIN ranks first, but for the contention of neighbour_contention()
    and the starvation own_input() allows."""
    ok = neighbour_contention(chk, report, truth) + \
        [c for c in own_input(chk, report, truth) if c is not chain]
    rest = [c for c in report["chains"] if c not in ok]
    chk.ok(rest and rest[0] is chain, "%s is not the first chain: %s" % (
        chain["cause"], ["%s %s %s" % (x["severity"], x["cause"], x["op"]) for x in report["chains"]]))


def busy_spans(log):
    """The kernels' intervals simcuda logged (SIMCUDA_BUSY_LOG: "FROM TO
    KIND" a line, on the trace clock), what NVML's utilization counts, in
    order."""
    return sorted((int(a), int(b)) for a, b, k in (l.split() for l in open(log))
                  if k == "kernel")


def busy_in(spans, lo, hi):
    """The device's busy time within [LO, HI): the union of SPANS
    (busy_spans()) there."""
    t, cur = 0, lo
    for a, b in spans:
        a, b = max(a, cur), min(b, hi)
        if b > a:
            t += b - a
            cur = b
    return t


def idle_in_waits(truth, report, log):
    """The share (%) of the steady state's GPU idle time, by the device's
    log, that fell in the feeding thread's waits for a batch, by its own
    log: each wait's idle time, the part of it blocked until a worker
    posted (blocked_ns of wait_ns).  What a data-starvation chain explains
    on this machine: on a quiet one nearly all, on a loaded one less (the
    thread waits for a CPU too, CPU contention's)."""
    g = report["gpu"]
    start = report["trace"]["start_ts"]
    lo, hi = start + g["steady_from_ns"], start + g["steady_to_ns"]
    spans = busy_spans(log)
    idle = (hi - lo) - busy_in(spans, lo, hi)
    got = 0.0
    for w in truth.each.get("waited", []):
        a, b = max(w["t1"] - w["wait_ns"], lo), min(w["t1"], hi)
        if w["blocked_ns"] and b > a:
            got += ((b - a) - busy_in(spans, a, b)) * w["blocked_ns"] / w["wait_ns"]
    return 100 * got / max(idle, 1)


def check_gpu(chk, report, log, points=5.0):
    """The GPU's idle share of the steady state, as the report measured it
    through simcuda's stand-in NVML, against the device's own log of busy
    intervals over the same time: within POINTS (each sample is rounded to
    a percent, and the two 50 ms samples across the steady state's edges
    count at their percent: 1-3 points on a run of a few seconds).  The
    steady chains explain no more than that idle time, and the report's
    explained time is theirs.  Returns the report's idle share (%), each
    steady chain's (its index in chains: %) and the log's idle share (%),
    or None."""
    g = report["gpu"]
    if not chk.ok(g["measured"], "the GPU was not measured: %s" % g["reason"]):
        return None
    start = report["trace"]["start_ts"]
    lo, hi = start + g["steady_from_ns"], start + g["steady_to_ns"]
    st = g["stages"]["steady"]
    if not chk.ok(hi > lo and st["covered_ns"], "no steady state measured: %r" % g):
        return None
    want = 100 - 100 * busy_in(busy_spans(log), lo, hi) / (hi - lo)
    have = 100 * st["idle_ns"] / st["covered_ns"]
    chk.note("GPU idle in the steady state: report %.1f%%, the device's log %.1f%%"
             % (have, want))
    chk.ok(abs(have - want) <= points, "GPU idle in the steady state: report %.1f%%, the "
           "device's log %.1f%%, more than %g points apart" % (have, want, points))
    shares = {i: 100 * c["gpu"]["idle_ns"] / max(st["idle_ns"], 1)
              for i, c in enumerate(report["chains"]) if c["stage"] == "steady"}
    taken = sum(c["gpu"]["idle_ns"] for c in report["chains"] if c["stage"] == "steady")
    chk.note("chains' shares of it: %s, unexplained %.1f%%" %
             (", ".join("%d %.1f%%" % (i + 1, s) for i, s in shares.items()) or "none",
              100 * st["unexplained_ns"] / max(st["idle_ns"], 1)))
    chk.ok(taken <= st["idle_ns"] and taken == st["explained_ns"] and
           st["explained_ns"] + st["unexplained_ns"] == st["idle_ns"],
           "the steady chains take %d ns of %d ns idle (explained %d, unexplained %d)"
           % (taken, st["idle_ns"], st["explained_ns"], st["unexplained_ns"]))
    return have, shares, want
