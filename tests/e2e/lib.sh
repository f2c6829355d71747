# Sourced by tests/e2e/t*.sh.  The runner sets IFT (the binary), IFT_TOOLS
# (test tools such as gentrace), IFT_FIXTURES and IFT_SRC, and runs each test
# in an empty temporary directory.  Run on its own (bash tests/e2e/tNNN.sh),
# a test takes the tree's default build and works in a new temporary
# directory, which it names and leaves; without that build it refuses with
# exit 2 and one line, never passing by not running.
set -u
if [ -z "${IFT:-}" ]; then
	IFT_SRC=${IFT_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
	IFT_BUILD=${IFT_BUILD:-$IFT_SRC/build}
	IFT=$IFT_SRC/ingero-ftrace
	[ "$IFT_BUILD" = "$IFT_SRC/build" ] || IFT=$IFT_BUILD/ingero-ftrace
	export IFT IFT_SRC IFT_BUILD IFT_TOOLS=${IFT_TOOLS:-$IFT_BUILD/tests/tools} \
		IFT_FIXTURES=${IFT_FIXTURES:-$IFT_SRC/fixtures} \
		IFT_STATIC=${IFT_STATIC:-$IFT_BUILD-static/ingero-ftrace} \
		IFT_SAN=${IFT_SAN:-$IFT_SRC/build-san/ingero-ftrace}
	if [ ! -x "$IFT" ] || [ ! -d "$IFT_TOOLS" ]; then
		t=${0##*/}
		echo "$t: no build at $IFT_BUILD: run make (or tests/run-tests.sh --filter ${t%.sh})" >&2
		exit 2
	fi
	ift_alone=$(mktemp -d /tmp/ift-e2e.XXXXXX) && cd "$ift_alone" || exit 2
	echo "${0##*/}: working in $ift_alone" >&2
fi

# What a test must know of this machine.  IFT_CUDART: the CUDA runtime the
# recording tests probe, the real libcudart.so.13 on x86-64; on aarch64,
# where NVIDIA's runtime is in no package here, the arm64 build of
# contrib/simcuda (the same functions with the same C signatures).
# ift_breakpoint: what a uprobe writes over the first instruction (hex, in
# memory order): int3, or BRK #5.  ift_argreg N: the Nth integer argument's
# register at a function's entry, as uprobe_events names it.
case $(uname -m) in
aarch64)
	IFT_CUDART=${IFT_BUILD:-${IFT_TOOLS%/tests/tools}}/simcuda/libcudart.so.12
	ift_breakpoint=a00020d4
	ift_argreg() { echo "%x$1"; } ;;
*)
	IFT_CUDART=/usr/local/cuda-13.0/lib/libcudart.so.13
	ift_breakpoint=cc
	ift_argreg() { local r=(di si dx cx r8 r9); echo "%${r[$1]}"; } ;;
esac

fail() {
	echo "FAIL: $*"
	exit 1
}

# skip REASON: exit 77.  In CI a test that needs tracing must not skip.
skip() {
	echo "skip: $*"
	exit 77
}

# skip_part REASON: one part of the test cannot run here; the test goes on,
# and the runner counts the part as skipped, with REASON.  Never skip a part
# in silence.
skip_part() {
	echo "skip-part: $*"
}

# need_root: tracing tests need root and tracefs; in CI their absence is a failure.
need_root() {
	# a fresh boot has tracefs unmounted; record mounts it, and so do we
	if [ "$(id -u)" = 0 ] && [ ! -e /sys/kernel/tracing/uprobe_events ]; then
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
	fi
	if [ "$(id -u)" != 0 ] || [ ! -w /sys/kernel/tracing/uprobe_events ]; then
		if [ "${CI:-}" = true ]; then
			fail "needs root and tracefs, and CI must not skip tracing tests"
		fi
		skip "needs root and a writable /sys/kernel/tracing"
	fi
}

# expect_one_line_error CMD...: the command must exit non-zero with exactly one line on stderr.
expect_one_line_error() {
	local err rc
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	[ $rc -ne 0 ] || fail "expected failure: $*"
	[ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] || fail "expected one line on stderr from: $*; got: $err"
	printf '%s\n' "$err"
}

# plant_run: what a run leaves in tracefs, planted under the name of a pid
# that was a process and is none now (a killed or finished recorder): sets
# $dead and $group (ingero_$dead) and makes the instance, tracing off, with
# the group's probe GROUP/cudaMalloc_0 enabled in it where the CUDA runtime
# is (the instance alone is enough to be busy).  remove_planted undoes it.
plant_run() {
	local t=/sys/kernel/tracing cudart=$IFT_CUDART off
	dead=$(sh -c 'echo $$')
	[ -e "/proc/$dead" ] && fail "pid $dead should be gone"
	group=ingero_$dead
	mkdir "$t/instances/$group" || fail "cannot plant an instance"
	echo 0 >"$t/instances/$group/tracing_on"
	if [ -r "$cudart" ]; then
		off=$(readelf -Ws "$cudart" | awk '$8 ~ /^cudaMalloc(@|$)/ { print $2; exit }')
		echo "p:$group/cudaMalloc_0 $cudart:0x$off" >>"$t/uprobe_events" ||
			fail "cannot plant a uprobe"
		echo 1 >"$t/instances/$group/events/$group/cudaMalloc_0/enable"
	fi
}

# remove_planted GROUP: what a test planted as a killed run's leftovers, the
# instance GROUP and the uprobe GROUP/cudaMalloc_0, removed; quiet where
# they are gone already (check --cleanup removed them)
remove_planted() {
	local t=/sys/kernel/tracing
	{
		echo 0 >"$t/instances/$1/events/enable"
		rmdir "$t/instances/$1"
		# >> (O_APPEND): a plain > would delete every uprobe of the system
		echo "-:$1/cudaMalloc_0" >>"$t/uprobe_events"
	} 2>/dev/null
	return 0
}
