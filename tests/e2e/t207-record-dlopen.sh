# A CUDA library that a traced process dlopen()s while it is recorded, from a
# path no discovery would search, gets probes too: the recorder says when
# they were armed (late.N.armed_ns), and every call from then on is traced.
# The workload waits for the probe itself (the breakpoint in its own copy of
# cudaMalloc), so how long the recorder took to notice decides nothing.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
lib=$IFT_CUDART
[ -f $lib ] || { [ "${CI:-}" = true ] && fail "no $lib"; skip "no CUDA runtime at $lib"; }

mkdir -p hidden
cp $lib hidden/libcudart.so.13	# another inode: the probes on $lib do not reach it
cc -O2 -o late "$IFT_SRC/tests/workloads/late-dlopen.c" -ldl || fail "cannot build"
"$IFT" -q record -o late.trace -- ./late "$PWD/hidden/libcudart.so.13" 800 60 >truth.txt 2>late.err ||
	fail "record failed: $(cat late.err)"
"$IFT" info -i late.trace >info.out || fail "info failed"
grep -q "^library: .*hidden/libcudart.so.13" info.out || fail "the late library is not listed"
"$IFT" dump --json -i late.trace --table calls >calls.json
python3 - truth.txt calls.json info.out "$PWD/hidden/libcudart.so.13" <<'PY' || fail "calls of the late library were not traced"
import json, sys
t = {}
calls = []
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "call":
        calls.append((int(f[1]), int(f[2]), int(f[3])))
    else:
        t[f[0]] = int(f[1])
meta = dict(l.split(None, 1) for l in open(sys.argv[3]) if l.startswith("late."))
late = [k.split(".")[1] for k, v in meta.items() if k.endswith(".path") and v.strip() == sys.argv[4]]
if len(late) != 1:
    sys.exit("the trace names %d late libraries at %s: %s" % (len(late), sys.argv[4], meta))
armed = int(meta["late.%s.armed_ns" % late[0]])
if not t["dlopen"] < armed:
    sys.exit("armed %d ns before the dlopen" % (t["dlopen"] - armed))
rec = [json.loads(l) for l in open(sys.argv[2])]
rec = [c for c in rec if c["event"] == "cudaMalloc"]
got = {c["bytes"] for c in rec}
after = [c for c in calls if c[1] > armed]
missing = [c for c in after if c[0] not in got]
print("dlopen to armed %.1f ms, to the probe seen %.1f ms; %d calls after, %d recorded in all, %d missing"
      % ((armed - t["dlopen"]) / 1e6, (t["probed"] - t["dlopen"]) / 1e6, len(after), len(rec), len(missing)))
for c in rec:
    match = [x for x in calls if x[0] == c["bytes"]]
    if not match or not (match[0][1] <= c["ts"] <= match[0][2]):
        sys.exit("call %s outside the program's interval" % c)
# the program made 60 calls 50 ms apart once it saw the probe
if len(after) < len(calls) // 2:
    sys.exit("only %d of the %d calls came after the probes were armed" % (len(after), len(calls)))
sys.exit(1 if missing else 0)
PY
assert_no_leftovers
exit 0
