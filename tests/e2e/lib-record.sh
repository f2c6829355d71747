# Helpers for record tests, sourced after lib.sh.

# The CUDA runtime the recording tests probe (lib.sh: the real one on x86-64).
cudart=$IFT_CUDART

# need_debian_python: py=/usr/bin/python3, Debian's, whose packages (torch)
# the Python workloads use; without it the test skips (fails in CI).
need_debian_python() {
	py=/usr/bin/python3
	[ -x $py ] || { [ "${CI:-}" = true ] && fail "needs Debian's python3"; skip "needs Debian's python3"; }
}

# The stand-in CUDA runtime and NCCL (contrib/simcuda, make workloads).
sim=$IFT_BUILD/simcuda/libcudart.so.12
nccl=$IFT_BUILD/simcuda/libnccl.so.2

# need_simcuda [nccl]: $sim (and $nccl), or the test fails.
need_simcuda() {
	[ -f "$sim" ] || fail "no stand-in runtime at $sim (make workloads)"
	[ -z "${1:-}" ] || [ -f "$nccl" ] || fail "no stand-in NCCL at $nccl (make workloads)"
}

# build_cuda_seq: ./cuda-seq (tests/workloads/cuda-seq.c) linked to $cudart.
build_cuda_seq() {
	cc -O2 -o cuda-seq "$IFT_SRC/tests/workloads/cuda-seq.c" $cudart \
		-Wl,-rpath,"$(dirname $cudart)" || fail "cannot build the CUDA workload"
}

# need_cuda_seq: $cudart, or the test skips (fails in CI); then build_cuda_seq.
need_cuda_seq() {
	[ -f $cudart ] || { [ "${CI:-}" = true ] && fail "no $cudart"; skip "no CUDA runtime at $cudart"; }
	build_cuda_seq
}

# await_teardown DIR: record returns before its probes are gone; the helper
# that removes them holds a lock on the instance's directory until it is
# removed.  Waits for it (and fails the test after 120 s).
await_teardown() {
	[ -d "$1" ] || return 0
	flock -s -w 120 "$1" true 2>/dev/null && return 0
	[ -d "$1" ] || return 0
	fail "the teardown of ${1##*/} did not finish in 120 s"
}

# helper_of DIR: the pid of the process that holds DIR open (a run's
# teardown helper holds its instance's directory), or nothing.  One find
# for every descriptor of every process: a readlink each took 12 s in a
# 6.1 guest, whose every exec reads its root over 9p.
helper_of() {
	local f
	f=$(find /proc/[0-9]*/fd -maxdepth 1 -lname "$1" -print -quit 2>/dev/null)
	[ -n "$f" ] || return 0
	f=${f#/proc/}
	echo "${f%%/*}"
}

# Only this test's leftovers count: others (helpers, other runs) may come and go.
assert_no_leftover_of() {	# recorder pid
	local pid=$1
	await_teardown "${IFT_TRACEFS:-/sys/kernel/tracing}/instances/ingero_$pid"
	if grep -q "ingero_${pid}/" /sys/kernel/tracing/uprobe_events; then
		fail "uprobe group ingero_$pid was left behind"
	fi
	if [ -d /sys/kernel/tracing/instances/ingero_$pid ]; then
		fail "instance ingero_$pid was left behind"
	fi
}

# The tracefs the leftover checks read; t121 points it at a copy of its own.
IFT_TRACEFS=${IFT_TRACEFS:-/sys/kernel/tracing}
# The runs named in tracefs when the test started (live or not): other
# engineers' and other tests' runs on a shared machine, not this test's.
ift_runs_before=" $(ls "$IFT_TRACEFS/instances" 2>/dev/null | sed -n 's/^ingero_\([0-9][0-9]*\)$/\1/p' | tr '\n' ' ')"
ift_runs_before+="$(sed -n 's/^[pr]:ingero_\([0-9]*\)\/.*/\1/p' "$IFT_TRACEFS/uprobe_events" 2>/dev/null | sort -u | tr '\n' ' ') "

# assert_no_leftovers: no recorder's instance or uprobe group is left by a
# dead run that started after the test; fails (exits) the test otherwise.
assert_no_leftovers() {
	local d pid
	for d in "$IFT_TRACEFS"/instances/ingero_*; do
		[ -d "$d" ] || continue
		pid=${d##*_}
		# only names a recorder uses: ingero_<pid>
		case $pid in *[!0-9]*|"") continue ;; esac
		[[ $ift_runs_before == *" $pid "* ]] && continue
		# a live recorder's instance is not a leftover, nor is one that
		# its recorder removed just before exiting (other runs may be
		# finishing while we look); a finished one's is, once its
		# teardown is done
		kill -0 "$pid" 2>/dev/null && continue
		await_teardown "$d"
		[ ! -d "$d" ] || fail "instance $d was left behind"
	done
	# not a pipeline into the loop: fail must exit the test, not a subshell
	for pid in $(sed -n 's/^[pr]:ingero_\([0-9]*\)\/.*/\1/p' "$IFT_TRACEFS/uprobe_events" | sort -u); do
		[[ $ift_runs_before == *" $pid "* ]] && continue
		kill -0 "$pid" 2>/dev/null && continue
		# a run that was live in the loop above may have ended since: its
		# helper removes the probes before letting go of the instance
		await_teardown "$IFT_TRACEFS/instances/ingero_$pid"
		! grep -qE "^[pr]:ingero_${pid}/" "$IFT_TRACEFS/uprobe_events" ||
			fail "uprobes of dead run $pid were left behind"
	done
}

# The machine's CPU time so far, in seconds, that perf's task clock (the
# profile's: the time a thread holds a CPU) counts and a thread's own clock
# may not (/proc/stat): the hypervisor's steal, and the interrupts' time,
# which a kernel with CONFIG_IRQ_TIME_ACCOUNTING (arm64's defconfig,
# Jetson's L4T) keeps apart from every task's (0.5 s of irq and softirq
# over a 1.5 s recording in the arm64 5.10 guest).  Read it before and
# after a run.
uncounted() { awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { print ($7 + $8 + $9) / hz }' /proc/stat; }
