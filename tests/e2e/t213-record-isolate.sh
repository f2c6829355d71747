#!/usr/bin/env bash
# record --isolate arms the uprobes in the traced tasks only.  A bystander
# (not traced) calls cudaGetDeviceCount for ever; the traced program calls it
# K times, then awaits 16,384 more calls of the bystander, so both called
# while the probes were armed, and copies the kernel's hit count of each
# uprobe (uprobe_profile) before its recorder removes them.  With --isolate
# the entry probe fired exactly K times; with --no-isolate (every process
# that maps the library traps) at least K + 16,384: the check that the count
# can tell.  Then, the probes still armed, it reads the first byte of
# cudaGetDeviceCount through /proc/PID/mem in itself and in the bystander:
# the breakpoint (int3, BRK #5) in itself in every mode, in the bystander with
# --no-isolate only.  Either way the trace holds the K calls and nothing of
# the bystander.  A plain record isolates, as --isolate does.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
command -v python3 >/dev/null || skip "needs python3 to parse JSON"
B=${IFT_BUILD:-${IFT_TOOLS%/tests/tools}}
lib=$B/simcuda/libcudart.so.12
[ -f "$lib" ] || fail "no $lib: build it with 'make workloads'"
cc -O2 -o callcount "$IFT_SRC/tests/workloads/callcount.c" "$lib" -Wl,-rpath,"$(dirname "$lib")" ||
	fail "cannot build the workload"

./callcount loop count.bin &
by=$!
trap 'kill $by 2>/dev/null' EXIT
# until it has called (the file holds its count)
for ((i = 0; i < 6000; i++)); do
	[ -s count.bin ] && break
	kill -0 $by 2>/dev/null || fail "the bystander died"
	sleep 0.01
done
[ -s count.bin ] || fail "the bystander made no calls in 60 s"

K=5000
# hits MODE: the entry probes' hits on cudaGetDeviceCount of $lib, and the
# calls the trace holds, as "HITS CALLS BYSTANDER_CALLS"
hits() {
	python3 - "$1.profile" "$lib" "$1.calls.json" $by <<'PY'
import json, os, re, sys
prof, lib, calls, by = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3], int(sys.argv[4])
hits = 0
for line in open(prof):
    f = line.split()
    # "  FILE EVENT HITS": our entry event is cudaGetDeviceCount_<lib>[_<k>]
    if len(f) == 3 and os.path.realpath(f[0]) == lib and \
            re.fullmatch(r"cudaGetDeviceCount_\d+(_\d+)?", f[1]):
        hits += int(f[2])
rows = [json.loads(l) for l in open(calls)]
mine = sum(1 for c in rows if c["event"] == "cudaGetDeviceCount" and c["pid"] != by)
theirs = sum(1 for c in rows if c["pid"] == by)
print(hits, mine, theirs)
PY
}

for mode in isolate no-isolate default; do
	flag=--$mode
	[ $mode = default ] && flag=
	"$IFT" record -q $flag --no-host -o $mode.trace -- \
		./callcount traced $K count.bin $mode.profile $by 2>$mode.err &
	rp=$!
	wait $rp || fail "record --$mode failed: $(cat $mode.err)"
	assert_no_leftover_of $rp
	"$IFT" dump --json -i $mode.trace --table calls >$mode.calls.json || fail "dump failed"
	# a file, not <(...): a QEMU guest's /dev has no /dev/fd
	hits $mode >$mode.hits || fail "cannot read the hit counts"
	read -r h mine theirs <$mode.hits
	read -r self other <$mode.profile.mem || fail "--$mode: no first bytes read"
	echo "$mode: the entry probe fired $h times; the trace holds $mine calls, $theirs of the bystander;" \
		"cudaGetDeviceCount begins with 0x$self here, 0x$other in the bystander"
	[[ $self =~ ^[0-9a-f]{8}$ && $other =~ ^[0-9a-f]{8}$ ]] ||
		fail "--$mode: cannot read the first bytes through /proc/PID/mem: '$self' '$other'"
	[[ $self == $ift_breakpoint* ]] || fail "--$mode: no breakpoint in the traced process (0x$self)"
	[ "$mine" = $K ] || fail "--$mode: the trace holds $mine calls, the program made $K"
	[ "$theirs" = 0 ] || fail "--$mode: the trace holds $theirs calls of the bystander"
	case $mode in
	isolate|default)
		[ "$h" = $K ] || fail "$mode: the probe fired $h times for $K traced calls: the bystander trapped"
		[[ $other != $ift_breakpoint* ]] || fail "$mode: the bystander's copy has the breakpoint" ;;
	no-isolate)
		[ "$h" -ge $((K + 16384)) ] || fail "--no-isolate: the probe fired $h times, not the bystander's too"
		[[ $other == $ift_breakpoint* ]] || fail "--no-isolate: no breakpoint in the bystander (0x$other)" ;;
	esac
done
for mode in isolate default; do
	"$IFT" info -i $mode.trace | grep -q '^isolate.records' || fail "$mode wrote no isolate.* metadata"
done
"$IFT" info -i no-isolate.trace | grep -q '^isolate\.' && fail "--no-isolate wrote isolate.* metadata"
exit 0
