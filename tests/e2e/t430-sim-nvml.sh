#!/usr/bin/env bash
# simnvml, the stand-in NVML of simcuda (contrib/simcuda/simnvml.c): its
# exports carry NVML's names, and what it says of the device, read from
# another process while two processes of simcuda share it, agrees with the
# truth simcuda logs (nvmlcheck: utilization samples within 5 points of the
# kernels' busy share, P apart, only newer ones after lastSeenTimeStamp; the
# running processes and their memory; no driver without a state file).
# Needs no root: it traces nothing.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v nm >/dev/null || skip "needs nm (binutils)"
build=${IFT_BUILD:-${IFT_TOOLS%/tests/tools}}
check=$build/tests/workloads/nvmlcheck
lib=$build/simcuda/libnvidia-ml.so.1
[ -x "$check" ] && [ -f "$lib" ] || fail "no $check or $lib: build them with 'make workloads'"

nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort >exports
for f in nvmlInit_v2 nvmlInit nvmlShutdown nvmlErrorString nvmlDeviceGetCount_v2 \
	nvmlDeviceGetHandleByIndex_v2 nvmlDeviceGetName nvmlDeviceGetUUID nvmlDeviceGetPciInfo_v3 \
	nvmlDeviceGetSamples nvmlDeviceGetUtilizationRates nvmlDeviceGetMemoryInfo \
	nvmlDeviceGetClockInfo nvmlDeviceGetCurrentClocksThrottleReasons \
	nvmlDeviceGetPcieThroughput nvmlDeviceGetComputeRunningProcesses_v3 \
	nvmlDeviceGetComputeRunningProcesses_v2; do
	grep -qx "$f" exports || fail "$lib does not export $f"
done
# nothing of its own: the state file's code stays hidden
grep -v '^nvml' exports >strays && fail "$lib exports more than NVML: $(cat strays)"

# its state file and truth log in this test's directory
TMPDIR=$PWD "$check" "$lib" >out 2>err; rc=$?
[ $rc -eq 0 ] || fail "nvmlcheck exited $rc: $(cat err out)"
cat out
grep -q '^nvmlcheck: ok: ' out || fail "nvmlcheck did not say ok: $(cat out err)"
exit 0
