#!/usr/bin/env bash
# Capacity: the event rate a recorder sustains before it loses events.  The
# load (contrib/bench/hammer.c) is 2 threads calling a probed function at a
# rising rate, plus 2 processes faulting in fresh pages and yielding; each
# tool records it with the same entry+return uprobes, sched and kmem events
# and the same per-CPU buffer.  The truth is the calls the load made: every
# call is an entry and a return event, so a tool that kept them all has
# 2 x calls.  The tools run in turn at each rate.  Prints a markdown section.
# Needs root and tracefs.
#
#   capacity.sh BUILD_DIR [SECONDS] [BUFFER_KB] [RATES...]   (rates per thread; 0: flat out)
set -euo pipefail
build=${1:-build}
secs=${2:-2}
buf=${3:-512}
shift 3 || true
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(25000 50000 100000 200000 400000 0)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/contrib/bench/lib.sh"
bench_paths "$build"

bench_setup capacity.sh

work=$(mktemp -d /tmp/ift-capacity.XXXXXX)
group=iftcap_$$
cleanup() {
	bench_remove_group "$group"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$bdir/bench"
tiny=$bdir/bench/libcudart-probetiny.so
hammer=$bdir/bench/hammer
cc -O0 -fcf-protection=none -fPIC -shared -o "$tiny" "$top/contrib/bench/probe-tiny.c"
cc -O2 -o "$hammer" "$top/contrib/bench/hammer.c" -ldl -pthread
bench_shim "$work"

toff=$(bench_fileoff "$tiny" cudaSetDevice)
echo "p:$group/tiny $tiny:$toff device=%di:u64" >>$T/uprobe_events
echo "r:$group/tiny_ret $tiny:$toff ret=\$retval:s32" >>$T/uprobe_events

host=(sched:sched_switch sched:sched_wakeup sched:sched_wakeup_new sched:sched_process_fork
	sched:sched_process_exec sched:sched_process_exit kmem:mm_page_alloc)
ev_args() { for x in "${host[@]}" "$@"; do printf -- '-e\n%s\n' "$x"; done; }
mapfile -t tc_ev < <(ev_args "$group")
mapfile -t perf_ev < <(ev_args "$group:tiny" "$group:tiny_ret")
pages=$((buf / 4))

# each prints "kept lost_reported", after the load wrote its calls to $work/calls
# ours [--reader=mmap]: the default (the rings spliced, each page copied
# once), or the rings mapped and parsed in place
run_ours() {
	local r=$1
	shift
	"$ift" record -q --buffer-kb "$buf" "$@" -o "$work/o.trace" --cuda-lib "$tiny" -- \
		"$hammer" "$tiny" "$secs" 2 "$r" 2 "$work/calls" >/dev/null 2>"$work/o.log" || true
	bench_await_helpers
	"$ift" report -i "$work/o.trace" --json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
calls = sum(o["calls"] for o in r["ops"] if o["op"] == "cudaSetDevice")
print(2 * calls, r["trace"]["lost_events"])'
}
run_tc() {
	local r=$1
	(cd "$work" && LD_PRELOAD="$work/shim.so" trace-cmd record -d -b "$buf" -o tc.dat "${tc_ev[@]}" \
		"$hammer" "$tiny" "$secs" 2 "$r" 2 "$work/calls" >tc.log 2>&1) || true
	local kept lost
	# trace-cmd prints the event without its group
	kept=$(trace-cmd report -i "$work/tc.dat" 2>/dev/null | grep -cE '[0-9]: tiny(_ret)?: ' || true)
	# the kernel's per-CPU counters, as trace-cmd saved them
	lost=$(trace-cmd report --stat -i "$work/tc.dat" 2>/dev/null |
		awk '/^overrun:|^dropped events:/ { s += $NF } END { print s + 0 }')
	echo "$kept $lost"
}
run_perf() {
	local r=$1
	(cd "$work" && perf record -q -a -m "$pages" -o p.data "${perf_ev[@]}" -- \
		"$hammer" "$tiny" "$secs" 2 "$r" 2 "$work/calls" >perf.log 2>&1) || true
	local kept lost
	kept=$(perf script -i "$work/p.data" -F event 2>/dev/null | grep -cE "^ *$group:tiny(_ret)?:" || true)
	lost=$(perf report -i "$work/p.data" --stats 2>/dev/null |
		awk '/LOST(_SAMPLES)? events:/ { s += $NF } END { print s + 0 }')
	echo "$kept $lost"
}

: >"$work/rows"
k=0
for r in "${rates[@]}"; do
	tools=(ours $(bench_maps && echo ours-mmap) trace-cmd perf)
	# rotate the order at each rate, so none always runs first
	for j in "${!tools[@]}"; do
		t=${tools[$(((j + k) % ${#tools[@]}))]}
		rm -f "$work/calls"
		case $t in
		ours) res=$(run_ours "$r") ;;
		ours-mmap) res=$(run_ours "$r" --reader=mmap) ;;
		trace-cmd) res=$(run_tc "$r") ;;
		perf) res=$(run_perf "$r") ;;
		esac
		calls=$(cat "$work/calls" 2>/dev/null || echo 0)
		echo "$r $t $calls $res" >>"$work/rows"
		echo "capacity: rate $r, $t: calls $calls, kept/lost $res" >&2
	done
	k=$((k + 1))
done
[ -n "$(grep -E "^[pr]:$group/" $T/uprobe_events | grep -v "$tiny" || true)" ] && echo "capacity.sh: stray probes" >&2

python3 - "$work/rows" "$secs" "$buf" <<'PY'
import sys
path, secs, buf = sys.argv[1], sys.argv[2], sys.argv[3]
rows = {}
order = []
for line in open(path):
    f = line.split()
    rate, tool, calls, kept, lost = f[0], f[1], int(f[2]), int(f[3]), int(f[4])
    if rate not in rows:
        rows[rate] = {}
        order.append(rate)
    rows[rate][tool] = (calls, kept, lost)
print("## Capacity: events kept as the rate rises\n")
print("`hammer TINY %s 2 RATE 2`: 2 threads call a probed `cudaSetDevice` RATE times a second each"
      " (flat out: as fast as they can, each call costs a uprobe round trip), 2 processes fault in"
      " 8 MiB and yield in a loop. Every tool records entry and return uprobes with the same"
      " arguments, sched and kmem:mm_page_alloc, with %s KiB per CPU (`record --buffer-kb %s`,"
      " `trace-cmd record -b %s`, `perf record -a -m %d`). Kept: the uprobe events in the file, against"
      " 2 x the calls the load counted itself; lost: what the tool reports (our lost_events, trace-cmd's"
      " overrun, perf's LOST events). ours-mmap is ours with its rings mapped and parsed in place"
      " (`--reader=mmap`, where the kernel maps them).\n" % (secs, buf, buf, buf, int(buf) // 4))
print("| rate / thread | tool | calls | uprobe events/s | kept / 2 x calls | lost, as reported |")
print("|---|---|---|---|---|---|")
verdict = []
splice_only = []
for rate in order:
    full = {}
    for tool in ("ours", "ours-mmap", "trace-cmd", "perf"):
        if tool not in rows[rate]:
            continue
        calls, kept, lost = rows[rate][tool]
        share = kept / (2 * calls) if calls else 0
        full[tool] = calls and kept == 2 * calls and lost == 0
        print("| %s | %s | %s | %.0fk | %.4f | %s |" % (
            "flat out" if rate == "0" else f"{int(rate):,}", tool, f"{calls:,}",
            2 * calls / float(secs) / 1e3, share, f"{lost:,}"))
    peers = [t for t in ("trace-cmd", "perf") if full.get(t)]
    if peers and not full.get("ours"):
        verdict.append("at %s/thread ours lost events where %s lost none" % (rate, ", ".join(peers)))
    if full.get("ours") and "ours-mmap" in rows[rate] and not full.get("ours-mmap"):
        splice_only.append(rate)
print()
print("Target: ours loses nothing at every rate where either peer loses nothing: %s." % (
    "met" if not verdict else "**missed** (" + "; ".join(verdict) + ")"))
if splice_only:
    print("\nMapped (`--reader=mmap`), ours lost events where spliced it kept them all: at %s/thread." %
          ", ".join("flat out" if r == "0" else f"{int(r):,}" for r in splice_only))
PY
