"""t703's check: report --json's profile against the workers' own clocks.

usage: profilecheck.py REPORT.json TRUTH.jsonl INFO.txt FOLDED [UNCOUNTED]

FOLDED is export --format folded of the same trace: it must hold every
sample, and each line of heavy() the report lists as many (one it does not
list, past its top lines, no more than its least).

UNCOUNTED is the machine's steal, interrupt and softirq time over the run
in seconds (/proc/stat): the profile's clock (perf's task clock) counts
them in a running thread's time, the thread's own clock does not (steal
always, interrupts where the kernel keeps their time apart:
CONFIG_IRQ_TIME_ACCOUNTING), so the samples may hold that much more.

TRUTH holds a line per worker (tests/workloads/profshares.py): its pid, its
process's CPU (cpu_s) and its thread CPU in heavy(), light() and pack().
Also: the samples' kinds of work (pack() decoding, heavy() and light() the
workers' own Python, the finding), each worker's own profile against its
clock, and the data-starvation chain's profile, the workers' group.
"""
import json
import re
import sys

PARTS = ("heavy", "light", "pack")
POINTS = 10.0   # how far a share may be from the truth's, in points


def innermost_line(stack):
    """A folded stack's innermost line of Python ("FILE:LINE in FUNC"), or ""."""
    lines = [f for f in stack.split(";") if re.search(r":[0-9]+ in ", f)]
    return lines[-1] if lines else ""


def main():
    report = json.load(open(sys.argv[1]))
    truth = [json.loads(x) for x in open(sys.argv[2]) if x.strip()]
    meta = dict(line.split(None, 1) for line in open(sys.argv[3])
                if line.startswith("profile."))
    bad = []
    prof = report.get("profile")
    if not prof:
        sys.exit("the report has no profile")
    groups = {g["role"]: g for g in prof["groups"]}
    g = groups.get("input worker")
    if not g:
        sys.exit("no input-worker group: %s" % sorted(groups))
    cpu = sum(t["cpu_s"] for t in truth)
    period = prof["period_ns"] / 1e9
    procs = {p["pid"]: p for p in report["processes"]}
    # every sample is a period of a worker thread's CPU; each thread ends
    # short of its next sample (one with less CPU than a period has none:
    # the threads the trace saw, not those sampled), and lost or late ones
    # are counted
    missed = sum(int(meta.get("profile." + k, "0")) for k in ("lost", "late"))
    nthreads = {t["pid"]: len(procs.get(t["pid"], {}).get("threads", [])) or 1 for t in truth}
    uncounted = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    got = g["samples"] * period
    slack = (sum(nthreads.values()) + missed) * period + 0.05 * cpu
    print("CPU    %.3f s in the samples, %.3f s by the workers' clocks, %.3f s the "
          "machine's steal and interrupts" % (got, cpu, uncounted))
    if not cpu - slack <= got <= cpu + 0.05 * cpu + uncounted:
        bad.append("the workers' samples hold %.3f s of CPU, their own clocks %.3f s "
                   "(%.3f s the machine's steal and interrupts)" % (got, cpu, uncounted))
    if g["process_count"] != len(truth):
        bad.append("%d worker processes sampled, the workload ran %d"
                   % (g["process_count"], len(truth)))
    lines = g["python"]
    for part in PARTS:
        want = 100 * sum(t[part] for t in truth) / cpu
        have = 100 * sum(x["self_samples"] for x in lines if x["function"] == part) / g["samples"]
        print("%-6s %5.1f%% of the workers' CPU, by their clocks %5.1f%%" % (part, have, want))
        if abs(have - want) > POINTS:
            bad.append("%s: %.1f%% in the profile, %.1f%% by the workers' clocks"
                       % (part, have, want))
    # pack()'s time is zlib's: the native code under it, named by its file.
    # Its self samples are short of pack()'s clock by what zlib calls (libc's
    # memcpy, the kernel's page faults for each new buffer): the samples
    # with libz anywhere in their stack (the folded export's) hold it all.
    want = 100 * sum(t["pack"] for t in truth) / cpu
    libz = [x for x in g["native"] if "libz.so" in x["module"]]
    folded = [line.rsplit(" ", 1) for line in open(sys.argv[4]) if line.strip()]
    under = sum(int(n) for s, n in folded if "(libz.so" in s)
    have = 100 * under / g["samples"]
    print("libz   %5.1f%% under it, %5.1f%% its own (%s)"
          % (have, 100 * sum(x["self_samples"] for x in libz) / g["samples"],
             ", ".join(x["frame"] for x in libz) or "not named"))
    if not libz:
        bad.append("libz is not among the workers' native functions")
    if abs(have - want) > POINTS:
        bad.append("libz: %.1f%% of samples under it, pack() %.1f%% by the workers' clocks"
                   % (have, want))
    # the kinds of work: pack()'s is zlib's, a decoder's; heavy() and
    # light() are the workers' own Python, which the finding names
    works = {w["work"]: w["samples"] for w in g["works"]}
    for work, parts in (("decode", ("pack",)), ("python", ("heavy", "light"))):
        want = 100 * sum(t[p] for t in truth for p in parts) / cpu
        have = 100 * works.get(work, 0) / g["samples"]
        print("%-6s %5.1f%% of the samples' work, %s by the clocks %5.1f%%"
              % (work, have, "+".join(parts), want))
        if abs(have - want) > POINTS:
            bad.append("work %s: %.1f%% in the profile, %.1f%% by the workers' clocks"
                       % (work, have, want))
    f = g.get("finding") or {}
    if f.get("work") != "python" or f.get("samples") != works.get("python") or \
            (f.get("top") or {}).get("function") != "heavy":
        bad.append("the finding is not the workers' own Python at heavy(): %r" % f)
    # each worker's own profile: its CPU by its clock, and the two the group
    for t in truth:
        own = procs.get(t["pid"], {}).get("profile")
        if not own:
            bad.append("worker %d has no profile of its own" % t["pid"])
            continue
        got = own["samples"] * period
        slack = (nthreads[t["pid"]] + missed) * period + 0.05 * t["cpu_s"]
        if not t["cpu_s"] - slack <= got <= t["cpu_s"] * 1.05 + uncounted:
            bad.append("worker %d: its samples hold %.3f s of CPU, its clock %.3f s"
                       % (t["pid"], got, t["cpu_s"]))
    own = sum((procs.get(t["pid"], {}).get("profile") or {}).get("samples", 0) for t in truth)
    if own != g["samples"]:
        bad.append("the workers' own profiles hold %d samples, their group %d"
                   % (own, g["samples"]))
    # the chain whose fix speaks of the workers carries their profile
    ch = [c for c in report["chains"] if c["cause"] == "data_starvation"]
    if not ch or ch[0].get("profile") != g:
        bad.append("the data-starvation chain does not carry the workers' profile")
    # the folded stacks: a line per stack, its count last
    total = sum(int(n) for _, n in folded)
    if total != int(meta.get("profile.samples", "-1")):
        bad.append("the folded stacks hold %d samples, the trace %s"
                   % (total, meta.get("profile.samples")))
    # heavy()'s lines: each the report lists as many in the folded stacks;
    # one it does not list (past its top lines: the def line, once in an
    # arm64 guest) no more than the least it lists
    fh = {}
    for s, n in folded:
        if innermost_line(s).endswith(" in heavy"):
            fh[innermost_line(s)] = fh.get(innermost_line(s), 0) + int(n)
    rh = {x["frame"]: x["self_samples"] for x in lines if x["function"] == "heavy"}
    least = min(x["self_samples"] for x in lines) if lines else 0
    print("heavy  %d samples folded, %d in the report's lines" % (sum(fh.values()),
                                                                sum(rh.values())))
    if not rh or any(fh.get(k, 0) != v for k, v in rh.items()) or \
            any(v > least for k, v in fh.items() if k not in rh):
        bad.append("heavy(): %r folded, %r in the report (its least line %d)" % (fh, rh, least))
    if bad:
        sys.exit("\n".join(bad))


if __name__ == "__main__":
    main()
