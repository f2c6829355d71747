# Helpers for the feeder tests (t411-feeder-*.sh): tests/workloads/feeders.py,
# real input pipelines over PyTorch feeding the stand-in CUDA runtime, each
# printing its own truth.  Sourced after lib.sh and lib-record.sh; the checks
# against the truth are in feedercheck.py.
FEEDERS=$IFT_SRC/tests/workloads/feeders.py
FEEDER_SIM=$IFT_BUILD/simcuda/libcudart.so.12

# need_torch: sets FEEDER_PY to a python3 that imports torch.  make check
# installs Debian's python3-torch (contrib/install-deps.sh test), so in CI
# its absence is a failure, not a skip.
need_torch() {
	local p
	FEEDER_PY=
	for p in /usr/bin/python3 python3; do
		if command -v "$p" >/dev/null && "$p" -c 'import torch' 2>/dev/null; then
			FEEDER_PY=$(command -v "$p")
			break
		fi
	done
	if [ -z "$FEEDER_PY" ]; then
		[ "${CI:-}" = true ] &&
			fail "needs PyTorch (contrib/install-deps.sh test), and CI must not skip it"
		skip "needs PyTorch (apt-get install python3-torch; make check installs it)"
	fi
	[ -f "$FEEDER_SIM" ] || fail "no stand-in runtime at $FEEDER_SIM (make workloads)"
}

# feeder_record NAME KIND [ARGS...]: records feeders.py --feeder KIND ARGS
# into NAME.trace, its truth into NAME.truth, the report into NAME.json
# (report --json --per-process); checks the recorder removed what it made.
feeder_record() {
	local name=$1 kind=$2 rp rc
	shift 2
	"$IFT" record -q --cuda-lib "$FEEDER_SIM" -o "$name.trace" -- "$FEEDER_PY" \
		"$FEEDERS" --cudart "$FEEDER_SIM" --feeder "$kind" "$@" \
		>"$name.truth" 2>"$name.err" &
	rp=$!
	wait $rp
	rc=$?
	[ $rc = 0 ] || fail "record of feeders.py --feeder $kind $* exited $rc: $(tail -3 "$name.err")"
	[ -s "$name.trace" ] || fail "no $name.trace"
	assert_no_leftover_of $rp
	"$IFT" report --json --per-process -i "$name.trace" >"$name.json" 2>"$name.rerr" ||
		fail "report $name failed: $(cat "$name.rerr")"
}

# feeder_check CHECK NAME...: feedercheck.py's CHECK on the recorded runs.
feeder_check() {
	PYTHONDONTWRITEBYTECODE=1 python3 "$IFT_SRC/tests/e2e/feedercheck.py" "$@"
}

# feeder_pair KIND: records the starved run of KIND and its healthy twin
# (--healthy) and checks both; FEEDER_BAD is 1 when a check failed (each
# prints why).  feeder_done ends the test.
FEEDER_BAD=0
feeder_pair() {
	feeder_record starved "$1"
	feeder_record healthy "$1" --healthy
	feeder_check starved starved || FEEDER_BAD=1
	feeder_check healthy healthy || FEEDER_BAD=1
}

feeder_done() {
	[ $FEEDER_BAD = 0 ] || fail "the reports do not match the program's truth"
	assert_no_leftovers
	exit 0
}
