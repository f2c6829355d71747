# A CUDA library that a traced process dlopen()s while it is recorded, from a
# path no discovery would search, gets probes too: its calls are traced from
# shortly after it was mapped.
. "$IFT_SRC/tests/e2e/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
lib=/usr/local/cuda-13.0/lib/libcudart.so.13
[ -f $lib ] || { [ "${CI:-}" = true ] && fail "no $lib"; skip "no CUDA runtime at $lib"; }

mkdir -p hidden
cp $lib hidden/libcudart.so.13	# another inode: the probes on $lib do not reach it
cc -O2 -o late "$IFT_SRC/tests/workloads/late-dlopen.c" -ldl || fail "cannot build"
"$IFT" -q record -o late.trace -- ./late "$PWD/hidden/libcudart.so.13" 800 60 >truth.txt ||
	fail "record failed"
"$IFT" info -i late.trace | grep -q "hidden/libcudart.so.13" || fail "the late library is not listed"
"$IFT" dump --json -i late.trace --table calls >calls.json
python3 - truth.txt calls.json <<'PY' || fail "calls of the late library were not traced"
import json, sys
t_open, calls = None, []
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "dlopen":
        t_open = int(f[1])
    else:
        calls.append((int(f[1]), int(f[2]), int(f[3])))
rec = [json.loads(l) for l in open(sys.argv[2])]
rec = [c for c in rec if c["event"] == "cudaMalloc"]
# a rescan every second plus the probes' creation: 1.5 s is ample
late = [c for c in calls if c[1] > t_open + 1500000000]
got = {(c["bytes"]) for c in rec}
missing = [c for c in late if c[0] not in got]
print("%d calls 1.5 s after dlopen, %d recorded in all, %d missing" % (len(late), len(rec), len(missing)))
for c in rec:
    match = [x for x in calls if x[0] == c["bytes"]]
    if not match or not (match[0][1] <= c["ts"] <= match[0][2]):
        sys.exit("call %s outside the program's interval" % c)
sys.exit(1 if missing or not late else 0)
PY
assert_no_leftovers
exit 0
