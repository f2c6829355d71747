# Helpers for the tests on simcuda, the stand-in CUDA runtime with a
# modelled device (contrib/simcuda), and simtrain, the workload that logs its
# own truth (tests/workloads/simtrain.c).  Sourced after lib.sh and
# lib-record.sh.  The checks against the truth are in simcheck.py.
SIM_BUILD=${IFT_BUILD:-${IFT_TOOLS%/tests/tools}}
SIMTRAIN=$SIM_BUILD/tests/workloads/simtrain
SIMCUDA=$SIM_BUILD/simcuda/libcudart.so.12

# need_sim: python3, the built workload, and record's discovery finding
# simcuda through simtrain's DT_NEEDED.  Writes probed.txt: the functions
# record will probe there, one a line.
need_sim() {
	command -v python3 >/dev/null || skip "needs python3 to parse JSON"
	[ -x "$SIMTRAIN" ] && [ -f "$SIMCUDA" ] ||
		fail "no $SIMTRAIN or $SIMCUDA: build them with 'make workloads'"
	SIMCUDA=$(realpath "$SIMCUDA")
	"$IFT" discover -v -- "$SIMTRAIN" >discover.txt 2>&1 || fail "discover failed: $(cat discover.txt)"
	awk -F'\t' -v lib="$SIMCUDA" '
		$1 != "" { cur = ($1 == lib && $3 == "DT_NEEDED") ; if (cur) found = 1; next }
		cur { print $2 }
		END { exit !found }' discover.txt >probed.txt ||
		fail "discover did not find $SIMCUDA through DT_NEEDED: $(cat discover.txt)"
	[ -s probed.txt ] || fail "no function of $SIMCUDA would be probed"
}

# The thresholds were calibrated on 2 CPUs: on a bigger machine the workload
# and the neighbours share CPUs 0 and 1 all the same.
PIN=
if [ "$(nproc)" -gt 2 ]; then
	PIN="taskset -c 0,1"
fi

SIMNVML=$SIM_BUILD/simcuda/libnvidia-ml.so.1

# sim_record NAME MODE [ARGS...]: records simtrain MODE ARGS into NAME.trace,
# its truth into NAME.jsonl, the report into NAME.json; checks the recorder
# finished the trace and removed what it created.  The GPU is measured
# through simcuda's stand-in NVML (50 ms samples), the device's busy
# intervals logged in NAME.busy.log (simcheck.check_gpu()).
sim_record() {
	local name=$1 rp rc
	shift
	[ -f "$SIMNVML" ] || fail "no $SIMNVML: build it with 'make workloads'"
	rm -f "$name.nvml" "$name.busy.log"
	SIMCUDA_NVML=$PWD/$name.nvml SIMCUDA_BUSY_LOG=$PWD/$name.busy.log \
	SIMCUDA_NVML_PERIOD_US=50000 \
	$PIN "$IFT" record --nvml-lib "$SIMNVML" -o "$name.trace" -- "$SIMTRAIN" "$@" \
		-o "$name.jsonl" >"$name.out" 2>"$name.err" &
	rp=$!
	wait $rp
	rc=$?
	[ $rc = 0 ] || fail "record of simtrain $* exited $rc: $(tail -5 "$name.err")"
	[ -s "$name.trace" ] || fail "no $name.trace"
	[ -e "$name.trace.part" ] && fail "$name.trace.part was left behind"
	# $PIN runs the recorder in place (taskset execs it): $rp is its pid
	assert_no_leftover_of $rp
	grep -q '"type":"run"' "$name.jsonl" || fail "simtrain $* logged no truth"
	"$IFT" report -i "$name.trace" --json >"$name.json" 2>"$name.rerr" ||
		fail "report failed: $(cat "$name.rerr")"
	"$IFT" report -i "$name.trace" >"$name.txt" 2>&1 || fail "text report failed"
	"$IFT" dump --json -i "$name.trace" --table switches,wakeups,calls >"$name.dump.json" ||
		fail "dump failed"
}

# sim_check ARGS...: runs the python check on stdin, with ARGS as sys.argv[1:] and
# simcheck importable.
sim_check() {
	# no __pycache__ in the source tree
	PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$IFT_SRC/tests/e2e${PYTHONPATH:+:$PYTHONPATH}" \
		python3 - "$@"
}
