#!/usr/bin/env bash
# Bytes per event: our trace file against trace-cmd's .dat, for exactly the same
# events.  trace-cmd records the mixed workload (sched switch/wakeup/fork/exec/exit,
# mm_page_alloc, uprobe entry/return pairs on the real libcudart); its events are
# converted (contrib/bench/tracecmd2tsv.py) and written through our writer API
# (tests/tools/tsv2trace).  Prints a markdown section.  Needs root and tracefs.
#
#   size.sh BUILD_DIR [REPS] [SECONDS]
set -euo pipefail
build=${1:-build}
reps=${2:-5}
secs=${3:-2}
top=$(cd "$(dirname "$0")/../.." && pwd)
lib=${CUDART:-/usr/local/cuda-13.0/lib/libcudart.so.13}
T=/sys/kernel/tracing

[ "$(id -u)" = 0 ] || { echo "size.sh: needs root" >&2; exit 1; }
[ -f "$lib" ] || { echo "size.sh: no CUDA runtime at '$lib' (set CUDART)" >&2; exit 1; }
[ -e $T/uprobe_events ] || mount -t tracefs nodev $T
command -v trace-cmd >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends trace-cmd >&2

work=$(mktemp -d /tmp/ift-size.XXXXXX)
group=iftbench_$$
cleanup() {
	for e in $T/events/$group/*/enable; do [ -f "$e" ] && echo 0 >"$e"; done 2>/dev/null || true
	grep "^[pr]:$group/" $T/uprobe_events 2>/dev/null | while read -r def _; do
		echo "-:${def#*:}" >>$T/uprobe_events
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cc -O2 -shared -fPIC -o "$work/shim.so" "$top/contrib/bench/tracecmd-shim.c" -ldl
cc -O2 -o "$work/workload" "$top/contrib/bench/mixed-workload.c" "$lib" -Wl,-rpath,"$(dirname "$lib")"

# uprobe_events wants file offsets: vaddr - p_vaddr + p_offset of the PT_LOAD holding it
fileoff() {
	local vaddr v typ off va _x _y memsz
	vaddr=$(readelf -Ws --dyn-syms "$lib" | awk -v f="$1" '$8 == f || index($8, f "@") == 1 { print $2; exit }')
	v=$((16#$vaddr))
	while read -r typ off va _x _y memsz _; do
		[ "$typ" = LOAD ] || continue
		if [ "$v" -ge $((va)) ] && [ "$v" -lt $((va + memsz)) ]; then
			printf '0x%x\n' $((v - va + off))
			return
		fi
	done < <(readelf -lW "$lib")
	echo "size.sh: no PT_LOAD holds $1" >&2
	return 1
}
probe() {	# name args
	local off
	off=$(fileoff "$1")
	echo "p:$group/$1 $lib:$off $2" >>$T/uprobe_events
	echo "r:$group/${1}_ret $lib:$off ret=\$retval:s32" >>$T/uprobe_events
}
probe cudaMalloc "ptr=%di:u64 size=%si:u64"
probe cudaFree "ptr=%di:u64"
probe cudaMemcpy "dst=%di:u64 src=%si:u64 bytes=%dx:u64 kind=%cx:u64"
probe cudaMemcpyAsync "dst=%di:u64 src=%si:u64 bytes=%dx:u64 kind=%cx:u64 stream=%r8:u64"
probe cudaStreamSynchronize "stream=%di:u64"

events=(-e sched:sched_switch -e sched:sched_wakeup -e sched:sched_waking
	-e sched:sched_wakeup_new -e sched:sched_process_fork -e sched:sched_process_exec
	-e sched:sched_process_exit -e kmem:mm_page_alloc -e "$group")

declare -a r_ev r_dat r_data r_ours
for i in $(seq "$reps"); do
	(cd "$work" && LD_PRELOAD="$work/shim.so" trace-cmd record -d -o tc.dat "${events[@]}" \
		./workload "$secs" 50 4 >record.log 2>&1)
	dat=$(stat -c %s "$work/tc.dat")
	# the compressed ring-buffer data alone, without trace-cmd's headers
	data=$(awk '/bytes in size/ { s += $1 } END { print s + 0 }' "$work/record.log")
	trace-cmd report -t -R -i "$work/tc.dat" 2>/dev/null >"$work/tc.txt"
	ev=$(grep -cE '^\s*.+-[0-9]+\s+\[[0-9]+\]' "$work/tc.txt")
	python3 "$top/contrib/bench/tracecmd2tsv.py" <"$work/tc.txt" >"$work/tc.tsv"
	"$top/$build/tests/tools/tsv2trace" -o "$work/ours.trace" <"$work/tc.tsv" >/dev/null
	ours=$(stat -c %s "$work/ours.trace")
	r_ev+=("$ev") r_dat+=("$dat") r_data+=("$data") r_ours+=("$ours")
	echo "run $i: $ev events, trace-cmd $dat bytes (data $data), ours $ours bytes" >&2
done

python3 - "${r_ev[*]}" "${r_dat[*]}" "${r_data[*]}" "${r_ours[*]}" "$secs" <<'PY'
import statistics, sys
ev, dat, data, ours = ([int(x) for x in a.split()] for a in sys.argv[1:5])
secs = sys.argv[5]
def row(name, xs):
    xs = sorted(xs)
    return "| %s | %.3f | %.3f | %.3f |" % (name, xs[0], statistics.median(xs), xs[-1])
bpe = lambda b: [b[i] / ev[i] for i in range(len(ev))]
print("## File size: bytes per event, same events\n")
print("Workload: `contrib/bench/mixed-workload.c %s 50 4` (4 page-touching workers, a CUDA-runtime loop),"
      " recorded by `trace-cmd record -d` with sched switch/wakeup/waking/fork/exec/exit, mm_page_alloc"
      " and entry+return uprobes on 5 libcudart functions; the same events stored through our writer."
      " Events are counted as trace-cmd records them (an entry and a return are two).\n" % secs)
print("%d runs, %s events per run (median).\n" % (len(ev), f"{int(statistics.median(ev)):,}"))
print("| figure | min | median | max |\n|---|---|---|---|")
print(row("trace-cmd .dat, whole file (B/event)", bpe(dat)))
print(row("trace-cmd .dat, ring data only (B/event)", bpe(data)))
print(row("ingero-ftrace trace, whole file (B/event)", bpe(ours)))
print(row("ratio ours / trace-cmd whole file", [ours[i] / dat[i] for i in range(len(ev))]))
print(row("ratio ours / trace-cmd ring data only", [ours[i] / data[i] for i in range(len(ev))]))
PY
