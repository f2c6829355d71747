# A runtime call that makes driver calls: the driver calls are recorded
# nested inside it (flag, depth, times within), so no analysis counts the
# same wait twice.  Uses stand-in libraries: this machine has no libcuda.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root

src="$IFT_SRC/tests/workloads/fakecuda"
mkdir -p lib
cc -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -o lib/libcuda.so.1 "$src/cuda.c" || fail "build libcuda"
cc -O1 -shared -fPIC -Wl,-soname,libcudart.so.12 -o lib/libcudart.so.12 "$src/cudart.c" \
	-Llib -l:libcuda.so.1 -Wl,-rpath,'$ORIGIN' || fail "build libcudart"
cc -O1 -o app "$src/app.c" -Llib -l:libcudart.so.12 -Wl,-rpath,"$PWD/lib" || fail "build app"

"$IFT" -q record -o n.trace -- ./app 20 || fail "record failed"
"$IFT" dump --json -i n.trace --table calls >calls.json
python3 - calls.json <<'PY' || fail "driver calls are not nested in their runtime calls"
import json, sys
calls = [json.loads(l) for l in open(sys.argv[1])]
outer = [c for c in calls if c["api"] == "runtime"]
inner = [c for c in calls if c["api"] == "driver"]
names = sorted({c["event"] for c in outer}), sorted({c["event"] for c in inner})
if len(outer) != 60 or len(inner) != 80:
    sys.exit("expected 60 runtime and 80 driver calls, got %d and %d: %s" % (len(outer), len(inner), names))
for c in outer:
    if c["depth"] != 0 or c.get("nested"):
        sys.exit("runtime call nested: %s" % c)
want = {"cudaLaunchKernel": ["cuLaunchKernel"], "cudaMemcpy": ["cuMemcpyHtoD_v2"],
        "cudaDeviceSynchronize": ["cuCtxSynchronize", "cuCtxSynchronize"]}
for c in outer:
    kids = [k for k in inner if c["ts"] <= k["ts"] and k["ts"] + k["dur_ns"] <= c["ts"] + c["dur_ns"]]
    if [k["event"] for k in kids] != want[c["event"]]:
        sys.exit("%s at %d holds %s" % (c["event"], c["ts"], [k["event"] for k in kids]))
    for k in kids:
        if k["depth"] != 1 or not k.get("nested"):
            sys.exit("driver call not flagged nested: %s" % k)
print("ok: %d runtime calls, each with its driver calls nested" % len(outer))
PY
assert_no_leftovers
exit 0
