#!/usr/bin/env bash
# export --format perfetto on a synthetic trace: the file keeps the rules of
# the Trace Event Format and of Perfetto's JSON importer (perfetto_check.py),
# every call and every switch and wake-up of the trace is in it exactly once,
# and the same trace always gives the same bytes, to a file or to stdout.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 to parse JSON"

"$IFT_TOOLS/gentrace" -n 60000 -s 5 --chunk-rows 2000 >/dev/null || fail "gentrace failed"

"$IFT" export --format perfetto -o out.json 2>err; rc=$?
[ $rc -eq 0 ] || fail "export exited $rc: $(cat err)"
[ ! -s err ] || fail "export wrote to stderr: $(cat err)"
python3 "$IFT_SRC/tests/e2e/perfetto_check.py" "$IFT" ingero.trace out.json ||
	fail "the export breaks the format or loses events (above)"

"$IFT" export --format perfetto >stdout.json 2>err || fail "export to stdout failed: $(cat err)"
cmp -s out.json stdout.json || fail "the export to stdout differs from the export to a file"
"$IFT" export -i ingero.trace --format perfetto -o again.json || fail "second export failed"
cmp -s out.json again.json || fail "two exports of one trace differ"

# a CUDA call, by its arguments, with the thread's state inside it
grep -q '"name":"cudaMemcpyAsync","ts":[0-9]*\.[0-9]\{3\},"pid":[0-9]*,"tid":[0-9]*,"dur":[0-9]*\.[0-9]\{3\},"cat":"cuda.runtime","args":{"dur_ns":[0-9]*,.*"arg.bytes":[0-9]*,"arg.kind":[0-9]*,"arg.stream":"0x[0-9a-f]*"' out.json ||
	fail "no cudaMemcpyAsync slice with bytes, kind and stream"
exit 0
