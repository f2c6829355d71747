#!/usr/bin/env bash
# The traces recorded in an arm64 guest (fixtures/arm64): each opens with
# the current reader, and report --json on each reaches the conclusion
# fixtures/arm64/expect.tsv documents, as t800 asks of x86-64's; each says
# it was recorded on aarch64; and the calls of cuda-seq carry the
# arguments the program passed, fetched from AAPCS64's registers.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-examples.sh"

command -v python3 >/dev/null || skip "needs python3 to parse JSON"
dir=$IFT_FIXTURES/arm64
check_examples "$dir"
[ "$n" -ge 2 ] || fail "expect.tsv lists $n traces, the README names 2"
for t in "$dir"/*.trace; do
	"$IFT" info -i "$t" | grep -q '^host.arch *aarch64$' || fail "$t: not recorded on aarch64"
done
# cuda-seq's calls (tests/workloads/cuda-seq.c): round i's cudaMalloc asks
# 4096 * (i + 1) bytes, its cudaMemcpy copies as many to 0x7000000 (kind 1),
# its cudaLaunchKernel has grid (i + 1, 2) and 256 bytes of shared memory
"$IFT" dump --json -i "$dir/cudart-sequence.trace" --table calls >calls.json || fail "dump failed"
python3 - calls.json <<'PY' || fail "cuda-seq's arguments as recorded on aarch64 are not what it passed"
import json, sys
calls = [json.loads(l) for l in open(sys.argv[1])]
by = lambda op: [c for c in calls if c["event"] == op]
m, cp, lk = by("cudaMalloc"), by("cudaMemcpy"), by("cudaLaunchKernel")
assert len(m) == len(cp) == len(lk) == 20, (len(m), len(cp), len(lk))
for i in range(20):
    assert m[i]["bytes"] == 4096 * (i + 1), m[i]
    assert (cp[i]["dst"], cp[i]["bytes"], cp[i]["kind"]) == (0x7000000, 4096 * (i + 1), 1), cp[i]
    assert lk[i]["grid_xy"] == (i + 1) | 2 << 32 and lk[i]["shared_mem"] == 256, lk[i]
    assert lk[i]["func"] == 0x400000 + 16 * i and lk[i]["stream"] == 0x5a5a000, lk[i]
print("60 calls: every argument as cuda-seq passed it")
PY
exit 0
