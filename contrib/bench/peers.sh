#!/usr/bin/env bash
# The same events in three tools' files, and the time each tool takes to read
# them back.  Each repetition records the mixed workload (sched
# switch/wakeup/waking/fork/exec/exit, mm_page_alloc, entry and return uprobes
# on 5 functions of the real libcudart) with `trace-cmd record` and, right
# after, with `perf record -a` on the very same tracefs events; trace-cmd's
# events are converted (contrib/bench/tracecmd2tsv.py) and written through our
# writer (tests/tools/tsv2trace), so ours and trace-cmd's files hold exactly
# the same events.  Then the uprobes alone, the same way.  Analysis: `report`
# against `trace-cmd report` on the same file's events, and `perf script` per
# event, with wall time and peak RSS; once more on a long recording for growth.
# Prints a markdown section.  Needs root and tracefs.
#
#   peers.sh BUILD_DIR [REPS] [SECONDS] [LONG_SECONDS]   (LONG_SECONDS 0: skip)
set -euo pipefail
build=${1:-build}
reps=${2:-5}
secs=${3:-2}
long=${4:-12}
top=$(cd "$(dirname "$0")/../.." && pwd)
lib=${CUDART:-/usr/local/cuda-13.0/lib/libcudart.so.13}
. "$top/contrib/bench/lib.sh"
bench_paths "$build"

[ -f "$lib" ] || { echo "peers.sh: no CUDA runtime at '$lib' (set CUDART)" >&2; exit 1; }
bench_setup peers.sh

work=$(mktemp -d /tmp/ift-peers.XXXXXX)
group=iftbench_$$
cleanup() {
	bench_remove_group "$group"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_shim "$work"
cc -O2 -o "$work/workload" "$top/contrib/bench/mixed-workload.c" "$lib" -Wl,-rpath,"$(dirname "$lib")"

probe() {	# name args
	local off
	off=$(bench_fileoff "$lib" "$1")
	echo "p:$group/$1 $lib:$off $2" >>$T/uprobe_events
	echo "r:$group/${1}_ret $lib:$off ret=\$retval:s32" >>$T/uprobe_events
}
probe cudaMalloc "ptr=%di:u64 size=%si:u64"
probe cudaFree "ptr=%di:u64"
probe cudaMemcpy "dst=%di:u64 src=%si:u64 bytes=%dx:u64 kind=%cx:u64"
probe cudaMemcpyAsync "dst=%di:u64 src=%si:u64 bytes=%dx:u64 kind=%cx:u64 stream=%r8:u64"
probe cudaStreamSynchronize "stream=%di:u64"

host=(sched:sched_switch sched:sched_wakeup sched:sched_waking sched:sched_wakeup_new
	sched:sched_process_fork sched:sched_process_exec sched:sched_process_exit
	kmem:mm_page_alloc)

# args: prefix, then the events; sets ${prefix}ev ${prefix}bytes
tc_record() {	# OUT SECONDS EVENTS...
	local out=$1 s=$2 e=()
	shift 2
	for x in "$@"; do e+=(-e "$x"); done
	(cd "$work" && LD_PRELOAD="$work/shim.so" trace-cmd record -d -o "$out" "${e[@]}" \
		./workload "$s" 50 4 >record.log 2>&1)
	# the compressed ring-buffer data alone, without trace-cmd's headers
	awk '/bytes in size/ { s += $1 } END { print s + 0 }' "$work/record.log" >"$work/$out.data"
}
perf_record() {	# OUT SECONDS EVENTS...
	local out=$1 s=$2 e=()
	shift 2
	for x in "$@"; do e+=(-e "$x"); done
	# -a: every CPU, as trace-cmd; -m 256: 1 MiB a CPU, trace-cmd's default buffer
	(cd "$work" && perf record -q -a -m 256 -o "$out" "${e[@]}" -- ./workload "$s" 50 4 \
		>perf.log 2>&1)
}
# the events of a .dat as our trace; prints the event count
to_ours() {	# DAT OUT
	trace-cmd report -t -R -i "$1" 2>/dev/null >"$work/tc.txt"
	python3 "$top/contrib/bench/tracecmd2tsv.py" <"$work/tc.txt" >"$work/tc.tsv"
	# in chunks of the rows record writes them in (src/record/record.c)
	"$top/$build/tests/tools/tsv2trace" -c 4096 -o "$2" <"$work/tc.tsv" >/dev/null
	grep -cE '^\s*.+-[0-9]+\s+\[[0-9]+\]' "$work/tc.txt"
}
timed() {	# OUT_FILE CMD...: "wall_s rss_kib" appended to OUT_FILE
	local out=$1
	shift
	/usr/bin/time -f "%e %M" -o "$work/t" "$@" >/dev/null 2>&1
	cat "$work/t" >>"$out"
}
perf_events() {	# DATA: samples in a perf.data
	perf script -i "$1" -F event 2>/dev/null | wc -l
}

: >"$work/rows"
run() {	# LABEL SECONDS
	local label=$1 s=$2 ev pev
	tc_record tc.dat "$s" "${host[@]}" "$group"
	perf_record perf.data "$s" "${host[@]}" "$group:*"
	ev=$(to_ours "$work/tc.dat" "$work/ours.trace")
	pev=$(perf_events "$work/perf.data")
	: >"$work/ta"; : >"$work/tb"; : >"$work/tc"
	timed "$work/ta" "$ift" report -i "$work/ours.trace"
	timed "$work/tb" trace-cmd report -i "$work/tc.dat"
	timed "$work/tc" perf script -i "$work/perf.data"
	echo "$label mixed $ev $(stat -c %s "$work/ours.trace") $(stat -c %s "$work/tc.dat") $(cat "$work/tc.dat.data")" \
		"$pev $(stat -c %s "$work/perf.data") $(cat "$work/ta") $(cat "$work/tb") $(cat "$work/tc")" \
		>>"$work/rows"
	echo "peers: $label: $ev events (perf $pev)" >&2
}
run_uprobes() {	# LABEL SECONDS
	local label=$1 s=$2 ev pev
	tc_record tcu.dat "$s" "$group"
	perf_record perfu.data "$s" "$group:*"
	ev=$(to_ours "$work/tcu.dat" "$work/oursu.trace")
	pev=$(perf_events "$work/perfu.data")
	echo "$label uprobes $ev $(stat -c %s "$work/oursu.trace") $(stat -c %s "$work/tcu.dat") $(cat "$work/tcu.dat.data")" \
		"$pev $(stat -c %s "$work/perfu.data")" >>"$work/rows"
	echo "peers: $label: uprobes only, $ev events (perf $pev)" >&2
}
for i in $(seq "$reps"); do
	run "rep$i" "$secs"
	run_uprobes "rep$i" "$secs"
done
[ "$long" -gt 0 ] && run long "$long"

python3 - "$work/rows" "$secs" "$long" "$ift" "$top/contrib/bench" <<'PY'
import statistics, sys
path, secs, long, ift = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, sys.argv[5])
from benchstat import row, verdict
mixed, upr, lng = [], [], None
for line in open(path):
    f = line.split()
    if f[1] == "mixed":
        r = dict(ev=int(f[2]), ours=int(f[3]), tc=int(f[4]), tcd=int(f[5]), pev=int(f[6]),
                 perf=int(f[7]), ow=float(f[8]), orss=int(f[9]), tw=float(f[10]),
                 trss=int(f[11]), pw=float(f[12]), prss=int(f[13]))
        if f[0] == "long":
            lng = r
        else:
            mixed.append(r)
    else:
        upr.append(dict(ev=int(f[2]), ours=int(f[3]), tc=int(f[4]), tcd=int(f[5]), pev=int(f[6]),
                        perf=int(f[7])))

med = lambda xs: statistics.median(xs)

print("## File size: bytes per event, the same events\n")
print("Workload: `contrib/bench/mixed-workload.c %s 50 4` (4 page-touching workers, a libcudart loop)."
      " Each repetition records it with `trace-cmd record -d` (sched switch/wakeup/waking/wakeup_new/"
      "fork/exec/exit, mm_page_alloc, entry and return uprobes on cudaMalloc, cudaFree, cudaMemcpy,"
      " cudaMemcpyAsync and cudaStreamSynchronize with their arguments), then with `perf record -a -m 256`"
      " on the very same tracefs events; trace-cmd's events are stored through our writer, so ours and"
      " the .dat hold exactly the same events. perf's run is a second run of the workload: it is"
      " compared per event. Events are counted as each tool stores them (an entry and a return are"
      " two).\n" % secs)
print("%d repetitions, %s events (trace-cmd, median), %s (perf).\n" % (
    len(mixed), f"{int(med([r['ev'] for r in mixed])):,}", f"{int(med([r['pev'] for r in mixed])):,}"))
print("| figure | min | median | max |\n|---|---|---|---|")
print(row("ingero-ftrace trace (B/event)", [r["ours"] / r["ev"] for r in mixed]))
print(row("trace-cmd .dat (B/event)", [r["tc"] / r["ev"] for r in mixed]))
print(row("trace-cmd .dat, ring data only (B/event)", [r["tcd"] / r["ev"] for r in mixed]))
print(row("perf.data (B/event)", [r["perf"] / r["pev"] for r in mixed]))
rt = [r["ours"] / r["tc"] for r in mixed]
rp = [(r["ours"] / r["ev"]) / (r["perf"] / r["pev"]) for r in mixed]
print(row("ratio ours / trace-cmd", rt))
print(row("ratio ours / trace-cmd ring data only", [r["ours"] / r["tcd"] for r in mixed]))
print(row("ratio ours / perf (per event)", rp))
print("\nTarget: at most a quarter of each: trace-cmd %s (median %.3f), perf %s (median %.3f).\n" % (
    verdict(rt, lambda x: x <= 0.25), med(rt), verdict(rp, lambda x: x <= 0.25), med(rp)))

print("The uprobes alone (the CUDA calls without host events), %s events (median):\n" %
      f"{int(med([r['ev'] for r in upr])):,}")
print("| figure | min | median | max |\n|---|---|---|---|")
print(row("ingero-ftrace trace (B/event)", [r["ours"] / r["ev"] for r in upr]))
print(row("trace-cmd .dat (B/event)", [r["tc"] / r["ev"] for r in upr]))
print(row("trace-cmd .dat, ring data only (B/event)", [r["tcd"] / r["ev"] for r in upr]))
print(row("perf.data (B/event)", [r["perf"] / r["pev"] for r in upr]))
print(row("ratio ours / trace-cmd", [r["ours"] / r["tc"] for r in upr]))
print(row("ratio ours / trace-cmd ring data only", [r["ours"] / r["tcd"] for r in upr]))
print(row("ratio ours / perf (per event)", [(r["ours"] / r["ev"]) / (r["perf"] / r["pev"]) for r in upr]))
print("\nAn entry and its return are one row of our calls table; a loop calling the same functions"
      " with the same arguments compresses to almost nothing. trace-cmd's .dat also carries about"
      " 1 MB of headers (formats, kallsyms), which weigh on a short stream; the ring data alone"
      " is given for that reason.")

print("\n## Analysis against trace-cmd report and perf script, the same events\n")
print("`%s report -i ours.trace` (every table and the causal chains) against `trace-cmd report -i"
      " tc.dat` (every event as text) on the same events, and `perf script -i perf.data` per event;"
      " output to /dev/null, wall time and peak RSS from /usr/bin/time.\n" % "ingero-ftrace")
print("| figure | min | median | max |\n|---|---|---|---|")
print(row("ingero-ftrace report, M events/s", [r["ev"] / r["ow"] / 1e6 for r in mixed], "%.1f"))
print(row("trace-cmd report, M events/s", [r["ev"] / r["tw"] / 1e6 for r in mixed], "%.2f"))
print(row("perf script, M events/s", [r["pev"] / r["pw"] / 1e6 for r in mixed], "%.2f"))
st = [r["tw"] / r["ow"] for r in mixed]
sp = [(r["pw"] / r["pev"]) / (r["ow"] / r["ev"]) for r in mixed]
print(row("speed-up over trace-cmd report", st, "%.1f"))
print(row("speed-up over perf script (per event)", sp, "%.1f"))
print(row("ingero-ftrace report peak RSS MiB", [r["orss"] / 1024 for r in mixed], "%.0f"))
print(row("trace-cmd report peak RSS MiB", [r["trss"] / 1024 for r in mixed], "%.0f"))
print(row("perf script peak RSS MiB", [r["prss"] / 1024 for r in mixed], "%.0f"))
print("\nTarget: at least 20x faster than trace-cmd report: %s (median %.1fx).\n" % (
    verdict(st, lambda x: x >= 20, "%.1f"), med(st)))
if lng:
    r = lng
    print("Growth: one recording of %d s, %s events (perf: %s). ingero-ftrace report %.2f s, %.0f MiB;"
          " trace-cmd report %.2f s, %.0f MiB; perf script %.2f s, %.0f MiB. Against the median"
          " short run, events x%.1f: time x%.1f (ours), x%.1f (trace-cmd), x%.1f (perf); peak RSS"
          " x%.2f (ours), x%.2f (trace-cmd), x%.2f (perf).\n" % (
              long, f"{r['ev']:,}", f"{r['pev']:,}", r["ow"], r["orss"] / 1024, r["tw"],
              r["trss"] / 1024, r["pw"], r["prss"] / 1024,
              r["ev"] / med([m["ev"] for m in mixed]),
              r["ow"] / med([m["ow"] for m in mixed]), r["tw"] / med([m["tw"] for m in mixed]),
              r["pw"] / med([m["pw"] for m in mixed]),
              r["orss"] / med([m["orss"] for m in mixed]), r["trss"] / med([m["trss"] for m in mixed]),
              r["prss"] / med([m["prss"] for m in mixed])))
PY
