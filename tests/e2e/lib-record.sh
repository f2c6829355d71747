# Helpers for record tests, sourced after lib.sh.

# Only this test's leftovers count: others (helpers, other runs) may come and go.
assert_no_leftover_of() {	# recorder pid
	local pid=$1
	if grep -q "ingero_${pid}/" /sys/kernel/tracing/uprobe_events; then
		fail "uprobe group ingero_$pid was left behind"
	fi
	if [ -d /sys/kernel/tracing/instances/ingero_$pid ]; then
		fail "instance ingero_$pid was left behind"
	fi
}

# assert_no_leftovers: no recorder's instance or uprobe group is left by a
# dead run; fails (exits) the test otherwise.
assert_no_leftovers() {
	local d pid
	for d in /sys/kernel/tracing/instances/ingero_*; do
		[ -d "$d" ] || continue
		pid=${d##*_}
		# only names a recorder uses: ingero_<pid>
		case $pid in *[!0-9]*|"") continue ;; esac
		# a live recorder's instance is not a leftover, nor is one that
		# its recorder removed just before exiting (other runs may be
		# finishing while we look)
		kill -0 "$pid" 2>/dev/null || [ ! -d "$d" ] || fail "instance $d was left behind"
	done
	# not a pipeline into the loop: fail must exit the test, not a subshell
	for pid in $(sed -n 's/^[pr]:ingero_\([0-9]*\)\/.*/\1/p' /sys/kernel/tracing/uprobe_events | sort -u); do
		kill -0 "$pid" 2>/dev/null ||
			! grep -qE "^[pr]:ingero_${pid}/" /sys/kernel/tracing/uprobe_events ||
			fail "uprobes of dead run $pid were left behind"
	done
}
