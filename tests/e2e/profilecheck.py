"""t703's check: report --json's profile against the workers' own clocks.

usage: profilecheck.py REPORT.json TRUTH.jsonl INFO.txt FOLDED

FOLDED is export --format folded of the same trace: it must hold every
sample, and heavy()'s as many as the report's lines of heavy().

TRUTH holds a line per worker (tests/workloads/profshares.py): its pid, its
process's CPU (cpu_s) and its thread CPU in heavy(), light() and pack().
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
    # every sample is a period of a worker thread's CPU; each thread ends
    # short of its next sample, and lost or late ones are counted
    missed = sum(int(meta.get("profile." + k, "0")) for k in ("lost", "late"))
    got = g["samples"] * period
    slack = (g["thread_count"] + missed) * period + 0.05 * cpu
    if not cpu - slack <= got <= cpu + 0.05 * cpu:
        bad.append("the workers' samples hold %.3f s of CPU, their own clocks %.3f s"
                   % (got, cpu))
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
    # pack()'s time is zlib's: the native code under it, named by its file
    want = 100 * sum(t["pack"] for t in truth) / cpu
    libz = [x for x in g["native"] if "libz.so" in x["module"]]
    have = 100 * sum(x["self_samples"] for x in libz) / g["samples"]
    print("libz   %5.1f%% (%s)" % (have, ", ".join(x["frame"] for x in libz) or "not named"))
    if abs(have - want) > POINTS:
        bad.append("libz: %.1f%% in the profile, pack() %.1f%% by the workers' clocks"
                   % (have, want))
    # the folded stacks: a line per stack, its count last
    folded = [line.rsplit(" ", 1) for line in open(sys.argv[4]) if line.strip()]
    total = sum(int(n) for _, n in folded)
    if total != int(meta.get("profile.samples", "-1")):
        bad.append("the folded stacks hold %d samples, the trace %s"
                   % (total, meta.get("profile.samples")))
    fh = sum(int(n) for s, n in folded if innermost_line(s).endswith(" in heavy"))
    rh = sum(x["self_samples"] for x in lines if x["function"] == "heavy")
    print("heavy  %d samples folded, %d in the report" % (fh, rh))
    if fh != rh:
        bad.append("heavy(): %d samples folded, %d in the report" % (fh, rh))
    if bad:
        sys.exit("\n".join(bad))


if __name__ == "__main__":
    main()
