# callsmatch.py TRUTH.tsv CALLS.json: the calls a trace holds (ingero-ftrace
# dump --json --table calls) are exactly those cuda-seq logged (TRUTH), in
# order: the same functions, return codes and arguments, each inside the
# CLOCK_MONOTONIC interval the program measured around it, none without
# its return.  Prints what differs and exits 1.
import json, sys
truth = []
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    args = dict(a.split("=") for a in f[4:])
    truth.append((f[0], int(f[1]), int(f[2]), int(f[3]), {k: int(v) for k, v in args.items()}))
calls = [json.loads(l) for l in open(sys.argv[2])]
calls = [c for c in calls if not c.get("nested")]
bad = 0
if len(calls) != len(truth):
    print("count: recorded %d, program made %d" % (len(calls), len(truth)))
    print("recorded:", [c["event"] for c in calls][:20])
    sys.exit(1)
for (name, ret, t0, t1, args), c in zip(truth, calls):
    errs = []
    if c["event"] != name:
        errs.append("event %s" % c["event"])
    if c["ret"] != ret:
        errs.append("ret %d != %d" % (c["ret"], ret))
    if not (t0 <= c["ts"] and c["ts"] + c["dur_ns"] <= t1):
        errs.append("time [%d, +%d] outside [%d, %d]" % (c["ts"], c["dur_ns"], t0, t1))
    for k, v in args.items():
        if c.get(k) != v:
            errs.append("%s=%s, program passed %d" % (k, c.get(k), v))
    if c.get("no_return"):
        errs.append("no return")
    if errs:
        bad += 1
        print(name, "; ".join(errs))
if bad:
    sys.exit(1)
print("ok: %d calls match" % len(calls))
