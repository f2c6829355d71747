"""The tasks workload's truth (tests/workloads/tasks.c) against a trace.

Each thread logs its getrusage counters at its end, with CLOCK_MONOTONIC
(the trace clock) just before (t0) and after (t1) the call, and, for the
first process, the counters at main() (nv0, niv0).  So getrusage counted
every switch traced before t0 and none after t1, and the trace holds every
switch since main() and at most every one since the fork: the check needs
no slack for the exit that follows, however slow the machine.
"""
import json
import os


def state_passed():
    """Whether this kernel's sched_switch event gets the state the
    scheduler decided on (Linux 5.18, "sched/tracing: Don't re-read
    p->state when emitting sched_switch event"), not prev->state read again
    after it: before, a sleep that a wake-up overtook is a voluntary switch
    to the kernel's counters and "R" (involuntary) to the trace, so only
    their sum can be held to the kernel's."""
    v = tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    return v >= (5, 18)


def load_truth(path):
    """tid -> dict(pid, ppid, name, nv, niv, nv0, niv0, t0, t1)."""
    truth = {}
    for line in open(path):
        _, tid, pid, ppid, name, nv, niv, nv0, niv0, t0, t1 = line.split()
        truth[int(tid)] = dict(pid=int(pid), ppid=int(ppid), name=name, nv=int(nv),
                               niv=int(niv), nv0=int(nv0), niv0=int(niv0), t0=int(t0),
                               t1=int(t1))
    return truth


def trace_switches(dump_path):
    """tid -> [(ts, involuntary)] of its switch-outs, from `dump --json`."""
    sw = {}
    for line in open(dump_path):
        e = json.loads(line)
        if e["event"] == "sched_switch":
            sw.setdefault(e["tid"], []).append((e["ts"], e["prev_state"] in ("R", "R+")))
    return sw


def counter_errors(t, sw):
    """What is wrong with thread truth T against its switches SW, or []."""
    errs = []
    before = [r for ts, r in sw if ts < t["t0"]]
    upto = [r for ts, r in sw if ts <= t["t1"]]
    if not (len(before) <= t["nv"] + t["niv"] and
            len(upto) >= t["nv"] - t["nv0"] + t["niv"] - t["niv0"]):
        errs.append("switches %d before getrusage (%d up to its return), rusage %d+%d "
                    "(%d+%d at main)" % (len(before), len(upto), t["nv"], t["niv"],
                                         t["nv0"], t["niv0"]))
    if state_passed() and not (sum(before) <= t["niv"] and sum(upto) >= t["niv"] - t["niv0"]):
        errs.append("involuntary %d before getrusage (%d up to its return), rusage %d "
                    "(%d at main)" % (sum(before), sum(upto), t["niv"], t["niv0"]))
    return errs
