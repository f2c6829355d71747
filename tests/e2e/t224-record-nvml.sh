#!/usr/bin/env bash
# record samples the GPUs through NVML, in a helper, never in the recorder:
# simtrain's loader on simcuda, with simcuda's stand-in NVML (simnvml) and
# its truth, the log of every interval the device was busy.  The trace's
# gpu_samples must hold the driver's utilization samples over the whole
# recording, their busy time the log's over the time they cover (within 2
# points: each sample is rounded to a percent), each sample in its own
# period (closer to the log there than half a period away), the workload's process on
# the GPU with its memory, and the device named; the helper holds no
# descriptor of the recorder's.  The report's busy share of the steady
# state is the log's over the same time (2 points).  Then: under sudo the
# helper loads NVML as the user, with the user's groups (as t106 checks
# the interpreter); a machine without the library, or without the driver,
# records all the same and says why once; --no-nvml loads nothing.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
need_root
need_sim
nvml=$SIM_BUILD/simcuda/libnvidia-ml.so.1
[ -f "$nvml" ] || fail "no $nvml: build it with 'make workloads'"
period_us=50000

SIMCUDA_NVML=$PWD/nvml.state SIMCUDA_BUSY_LOG=$PWD/busy.log SIMCUDA_NVML_PERIOD_US=$period_us \
SIMCUDA_NVML_WHO=$PWD/who "$IFT" record --nvml-lib "$nvml" -o nv.trace -- \
	"$SIMTRAIN" loader --steps 60 -o nv.jsonl >nv.out 2>nv.err &
rp=$!
# the helper holds nothing of the recorder's: its input, output and
# errors, and the pipe it writes into (fd 3)
helper=
for ((i = 0; i < 3000 && !helper; i++)); do
	helper=$(pgrep -P $rp -f __nvml-helper | head -n 1)
	[ -n "$helper" ] || { kill -0 $rp 2>/dev/null || break; sleep 0.01; }
done
[ -n "$helper" ] || fail "no NVML helper was seen while recording"
fds=$(ls /proc/$helper/fd 2>/dev/null | sort -n | tr '\n' ' ')
wait $rp || fail "record failed: $(tail -3 nv.err)"
[ "$fds" = "0 1 2 3 " ] || fail "the NVML helper holds descriptors $fds, not only 0-3"
assert_no_leftover_of $rp
grep -q '^  gpu  *[0-9,]* samples from 1 GPU (NVML)$' nv.err ||
	fail "record did not say it measured the GPU: $(grep gpu nv.err)"
"$IFT" info -i nv.trace >info.txt || fail "info failed"
for kv in "gpu.nvml ok 1" "gpu.util_source samples" "gpu.0.name simcuda modelled GPU" \
	  "clock.source mono"; do
	grep -q "^${kv%% *} *${kv#* }$" info.txt || fail "info: no '$kv': $(grep "^${kv%% *}" info.txt)"
done
# not under sudo: as we are
[ "$(cut -d' ' -f1,2 who)" = "$(id -u) $(id -g)" ] || fail "the helper loaded NVML as '$(cat who)'"
[ "$(grep -c . who)" = 1 ] || fail "NVML was loaded $(grep -c . who) times, not once"
"$IFT" dump --json --table gpu_samples -i nv.trace >gpu.json || fail "dump failed"
# and the report's figures: the GPU's busy share over the steady state,
# against the log over the same time (2 points)
"$IFT" report --json -i nv.trace >nv.json || fail "report failed"
sim_check gpu.json busy.log nv.jsonl info.txt $period_us nv.json <<'PY' || fail "the GPU samples disagree with the device's log (above)"
import json, sys
from simcheck import busy_spans, busy_in
rows = [json.loads(l) for l in open(sys.argv[1])]
busy = busy_spans(sys.argv[2])
pid = [json.loads(l) for l in open(sys.argv[3]) if '"type":"run"' in l][0]["pid"]
meta = dict(l.split(None, 1) for l in open(sys.argv[4]) if l.startswith("record."))
start, stop = int(meta["record.start_ns"]), int(meta["record.stop_ns"])
period = int(sys.argv[5]) * 1000
bad = []

util = [r for r in rows if r["metric"] == "util.gpu_percent"]
if any(not start <= r["ts"] <= stop for r in rows):
    bad.append("rows outside the recording [%d, %d]" % (start, stop))
# each utilization sample over the time since the one before, in order (the
# driver's stamps are wall-clock time: a preemption between the recorder's
# reads of the two clocks once moved one sample 45 ms late, and the next
# spanned -45 ms, in a loaded arm64 guest)
for a, b in zip(util, util[1:]):
    if b["ts"] < a["ts"] or b["span_ns"] > b["ts"] - a["ts"] + 1000:
        bad.append("a sample at %d over %d ns follows one at %d" % (b["ts"], b["span_ns"], a["ts"]))
        break
# every period from the first sample on: one sample each, none lost (the
# stand-in's device has samples from the helper's nvmlInit on, which a
# 6.12 guest reached 0.5 s into the recording; the driver's go back further)
first = min((r["ts"] - r["span_ns"] for r in util if r["span_ns"]), default=stop)
want = (stop - max(first, start)) // period - 2
if not util or len(util) < want or first - start > (stop - start) / 2:
    bad.append("%d utilization samples, %d periods of %d us from the first (%.3f s into "
               "the recording)" % (len(util), want + 2, period // 1000, (first - start) / 1e9))
spans = [r for r in util if r["span_ns"]]
have = sum(r["value"] * r["span_ns"] for r in spans) / 100
truth = sum(busy_in(busy, r["ts"] - r["span_ns"], r["ts"]) for r in spans)
cover = sum(r["span_ns"] for r in spans)
print("GPU busy %.1f%% of %.2f s by the samples, %.1f%% by the device's log; %d samples"
      % (100 * have / cover, cover / 1e9, 100 * truth / cover, len(util)))
if abs(have - truth) > 0.02 * cover:
    bad.append("busy %.1f ms by the samples, %.1f ms by the log" % (have / 1e6, truth / 1e6))
if not truth:
    bad.append("the device's log holds no kernel in the %.2f s the samples cover" % (cover / 1e9))
# and each sample is its own period's: against the log, the samples err less
# where they say they are than half a period earlier or later (a clock
# mapped wrong keeps the total and moves every sample)
def err(shift):
    return sum(abs(r["value"] * r["span_ns"] / 100 -
                   busy_in(busy, r["ts"] - r["span_ns"] + shift, r["ts"] + shift)) for r in spans)
here, moved = err(0), min(err(-period // 2), err(period // 2))
print("off by %.1f ms where they are, %.1f ms half a period away" % (here / 1e6, moved / 1e6))
if not here < moved / 2:
    bad.append("the samples fit the log no better where they are (%.1f ms off) than half "
               "a period away (%.1f ms)" % (here / 1e6, moved / 1e6))
procs = {r["pid"] for r in rows if r["metric"] == "proc.used_bytes" and r["value"] > 0}
if pid not in procs:
    bad.append("the workload %d is not among the GPU's processes %s" % (pid, sorted(procs)))
for m in ("mem.used_bytes", "clock.sm_mhz", "throttle.reasons", "pcie.tx_kbps", "pcie.rx_kbps"):
    if not any(r["metric"] == m for r in rows):
        bad.append("no %s row" % m)
g = json.load(open(sys.argv[6]))["gpu"]
start = json.load(open(sys.argv[6]))["trace"]["start_ts"]
if not g["measured"] or len(g["gpus"]) != 1 or not g["gpus"][0]["used"]:
    sys.exit("the report did not measure the one GPU the workload used: %r" % g)
x = g["gpus"][0]["stages"]["steady"]
lo, hi = start + g["steady_from_ns"], start + g["steady_to_ns"]
if not x["covered_ns"] or abs(x["covered_ns"] - (hi - lo)) > 0.1 * (hi - lo):
    bad.append("the samples cover %d ns of the %d ns steady state" % (x["covered_ns"], hi - lo))
want = 100 * busy_in(busy, lo, hi) / (hi - lo)
have = 100 * x["busy_ns"] / max(x["covered_ns"], 1)
print("steady state: GPU busy %.1f%% by the report, %.1f%% by the device's log" % (have, want))
if abs(have - want) > 2:
    bad.append("steady state: busy %.1f%% by the report, %.1f%% by the log" % (have, want))
if bad:
    sys.exit("\n".join(bad))
PY
# the text says it; a trace without NVML says why (below)

"$IFT" report -i nv.trace | grep -q '^gpu        0 simcuda modelled GPU: busy [0-9]*% of the steady state' ||
	fail "the text report does not give the GPU's busy share: $("$IFT" report -i nv.trace | sed -n 1,6p)"

# under sudo: the helper is the user, with the user's groups, before NVML
# is loaded; a library it may read, in a directory it may reach
if id nobody >/dev/null 2>&1; then
	uid=$(id -u nobody) gid=$(id -g nobody)
	w=$(mktemp -d /tmp/ift-nvml.XXXXXX)
	trap 'rm -rf "$w"' EXIT
	cp "$nvml" "$w/libnvidia-ml.so.1"
	: >"$w/who"
	mkdir "$w/out" && chown "$uid:$gid" "$w/out"
	chmod 755 "$w" && chmod 644 "$w/libnvidia-ml.so.1" && chmod 666 "$w/who"
	# the command lasts until the helper has loaded NVML (a 6.12 guest took
	# longer to start it than /bin/true to run)
	SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=nobody SIMCUDA_NVML=$w/out/state SIMCUDA_NVML_WHO=$w/who \
		"$IFT" record --nvml-lib "$w/libnvidia-ml.so.1" -o "$w/out/s.trace" -- /bin/sh -c \
		"for i in \$(seq 600); do [ -s $w/who ] && exit 0; sleep 0.05; done; exit 1" \
		>/dev/null 2>sudo.err &
	rp=$!
	wait $rp || fail "record under sudo failed: $(tail -3 sudo.err)"
	assert_no_leftover_of $rp
	read -r hu hg hgroups <"$w/who" || fail "under sudo, NVML was not loaded"
	[ "$hu $hg" = "$uid $gid" ] || fail "under sudo the helper loaded NVML as $hu:$hg, not nobody's $uid:$gid"
	want=$(id -G nobody | tr ' ' '\n' | sort -n | tr '\n' ' ')
	have=$( { echo "$hgroups" | tr ' ' '\n'; echo "$hg"; } | grep . | sort -nu | tr '\n' ' ')
	[ "$have" = "$want" ] || fail "under sudo the helper's groups are '$have', not nobody's '$want'"
	# and it measured the GPU all the same (its state file is nobody's)
	"$IFT" info -i "$w/out/s.trace" | grep -q '^gpu.nvml *ok 1$' ||
		fail "under sudo: $("$IFT" info -i "$w/out/s.trace" | grep '^gpu.nvml')"
fi

# the device's name is written as soon as the helper says it, not at the
# end: every piece of a rotated recording that holds GPU rows has it (top
# follows those pieces while they are written)
mkdir rot
SIMCUDA_NVML=$PWD/rot.state SIMCUDA_NVML_PERIOD_US=$period_us "$IFT" record --rotate 1s \
	--nvml-lib "$nvml" -o rot/nv.trace -- "$SIMTRAIN" loader --steps 200 -o rot.jsonl \
	>/dev/null 2>rot.err || fail "record --rotate with NVML failed: $(tail -3 rot.err)"
with_rows=0
for p in rot/nv.*.trace; do
	"$IFT" info -i "$p" >rot.info || fail "$p: $(cat rot.info)"
	[ "$(awk '$1 == "gpu_samples" { print $2 }' rot.info)" != 0 ] || continue
	with_rows=$((with_rows + 1))
	grep -q '^gpu.0.name *simcuda modelled GPU$' rot.info ||
		fail "$p holds GPU rows and not the device's name: $(grep '^gpu' rot.info)"
done
[ $with_rows -ge 2 ] || fail "$with_rows pieces with GPU rows of $(ls rot | wc -l)"

# no library, no driver: the recording is whole, and says why once
"$IFT" record --nvml-lib "$PWD/absent/libnvidia-ml.so.1" -o none.trace -- /bin/true >/dev/null 2>none.err ||
	fail "record without NVML failed: $(tail -3 none.err)"
[ "$(grep -c 'gpu  *not measured: .*absent/libnvidia-ml.so.1' none.err)" = 1 ] ||
	fail "without the library, record did not say so once: $(cat none.err)"
SIMCUDA_NVML=$PWD/none.state SIMCUDA_NVML_NO_DRIVER=1 "$IFT" record --nvml-lib "$nvml" \
	-o nodrv.trace -- /bin/true >/dev/null 2>nodrv.err || fail "record without the driver failed"
"$IFT" info -i nodrv.trace >nodrv.txt
grep -q '^gpu.nvml *nvmlInit: .*Driver Not Loaded' nodrv.txt || fail "no driver: $(grep '^gpu' nodrv.txt)"
"$IFT" report -i nodrv.trace | grep -q '^gpu        not measured: nvmlInit: .*Driver Not Loaded' ||
	fail "the report of a trace without a driver does not say the GPU was not measured"
[ "$(awk '$1 == "gpu_samples" { print $2 }' nodrv.txt)" = 0 ] || fail "GPU rows without a driver"
: >who
SIMCUDA_NVML=$PWD/nvml.state SIMCUDA_NVML_WHO=$PWD/who "$IFT" record --no-nvml --nvml-lib "$nvml" \
	-o off.trace -- /bin/true >/dev/null 2>off.err || fail "record --no-nvml failed"
[ ! -s who ] || fail "--no-nvml loaded NVML: $(cat who)"
"$IFT" info -i off.trace | grep -q '^gpu.nvml *off (--no-nvml)$' || fail "--no-nvml: not said in the trace"
grep -q 'gpu' off.err && fail "--no-nvml: record spoke of the GPU: $(grep gpu off.err)"
exit 0
