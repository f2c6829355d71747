#!/usr/bin/env bash
# check-kernels.sh [NAME...] - `make check-kernels`: in a QEMU guest of each
# kernel (default: every kernel of kernel.sh), `ingero-ftrace check` and every
# e2e test that traces (tests/run-tests.sh --needs-kernel), then that
# tracefs is left as the guest booted with it, against the
# binaries already built in $IFT_BUILD_DIR (default build/: ./ingero-ftrace;
# another build's binary is its own, as tests/run-tests.sh --build has it).
# ARCH=aarch64 (what `make check-kernels ARCH=aarch64` passes, with
# IFT_BUILD_DIR=build-aarch64): by default the arm64 kernels of kernel.sh,
# booted in aarch64 guests on their own Debian arm64 root.  One line per kernel,
#   NAME (uname -r, BPF: no, BTF: no): N passed, N failed, N skipped
# and a last line "N passed, N failed, N skipped" over all of them; the
# guests' whole output is in $IFT_KERNEL_LOGS (default BUILD/kernels/NAME.log),
# and each guest's console (the kernel's messages) in NAME.console there; a
# failed test's working directory (its traces) in BUILD/kernels/NAME.failed/,
# in the tree, the one place the guest writes.
# IFT_TEST_FILTER=PATTERN runs only the tests whose names contain it.
# Run it on an otherwise idle host: under TCG the guest has no steal-time
# accounting, so host CPU time another process takes from the guest reads,
# in the guest, as the running thread's own time on its CPU.  Each kernel's
# line says the host's load (1-minute average, less the guest's own thread)
# at the end of its run.
# CI=true in the guests: a test that would skip there fails instead.
set -uo pipefail
cd "$(dirname "$0")/../.."
kernels=${*:-$(contrib/kernels/kernel.sh list "${ARCH:-}")}
build=${IFT_BUILD_DIR:-build}
bin=./ingero-ftrace
[ "$build" = build ] || bin=$build/ingero-ftrace
logs=${IFT_KERNEL_LOGS:-$build/kernels}
mkdir -p "$logs"
[ -x "$bin" ] && [ -d "$build/tests" ] ||
	{ echo "check-kernels: build first (make${ARCH:+ ARCH=$ARCH} all unit-tests workloads)" >&2; exit 2; }

tp=0 tf=0 ts=0 lines=()
for k in $kernels; do
	log=$logs/$k.log
	t0=$SECONDS
	echo "== $k: booting (log: $log)"
	rm -rf "$build/kernels/$k.failed"
	CI=true IFT_GUEST_CONSOLE=$logs/$k.console IFT_TEST_KEEP=$PWD/$build/kernels/$k.failed \
	IFT_CK_BIN=$bin IFT_CK_BUILD=$build \
	contrib/kernels/run-in-guest.sh --kernel "$k" -- bash -c '
		echo "guest: uname $(uname -r)"
		# bpf(BPF_PROG_LOAD) with no attributes: ENOSYS where there is no
		# bpf(); its number differs by architecture
		case $(uname -m) in aarch64) nr=280 ;; *) nr=321 ;; esac
		python3 -c "import ctypes; l = ctypes.CDLL(None, use_errno=True); l.syscall($nr, 5, None, 0); print(\"guest: bpf\", \"no\" if ctypes.get_errno() == 38 else \"yes\")"
		echo "guest: btf $([ -e /sys/kernel/btf/vmlinux ] && echo yes || echo no)"
		if "$IFT_CK_BIN" check; then echo "guest: check ok"; else echo "guest: check FAILED"; fi
		# an arm64 build also runs its unit tests here, natively: the tracing
		# ones make check skips under qemu-user
		units=
		[ "$(uname -m)" = aarch64 ] && units=--units
		tests/run-tests.sh --build "$IFT_CK_BUILD" --needs-kernel $units \
			${IFT_TEST_FILTER:+--filter "$IFT_TEST_FILTER"}
		rc=$?
		# nothing else traces in the guest: after the tests tracefs is as
		# the guest booted with it, every instance and probe removed
		t=/sys/kernel/tracing
		# once the last teardown helper is done: it holds its instance lock till then
		for d in "$t"/instances/ingero_*; do [ -d "$d" ] && flock -s -w 300 "$d" true; done 2>/dev/null
		left=$(ls "$t/instances"; cat "$t/uprobe_events" "$t/kprobe_events" "$t/set_event" 2>/dev/null)
		if [ -z "$left" ]; then echo "guest: tracefs clean"; else echo "guest: tracefs left:" $left; fi
		exit $rc
	' >"$log" 2>&1
	rc=$?
	secs=$((SECONDS - t0))
	# the 1-minute load average, less the guest's one busy thread
	load=$(awk '{ x = $1 - 1; printf "%.1f", x < 0 ? 0 : x }' /proc/loadavg)
	rel=$(sed -n 's/^guest: uname //p' "$log")
	bpf=$(sed -n 's/^guest: bpf //p' "$log")
	btf=$(sed -n 's/^guest: btf //p' "$log")
	sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
	if [ -z "$sum" ]; then
		# the guest or the runner died: what ran before counts, and the
		# death is one failure more, with its reason
		p=$(grep -c '^e2e: .* ok$' "$log")
		f=$(($(grep -c '^e2e: .* FAIL' "$log") + 1))
		echo "$k: no result ($(tail -1 "$log"))"
		lines+=("$k (${rel:-no boot}, BPF: ${bpf:-?}, BTF: ${btf:-?}): $p passed, $f failed, 0 skipped ($secs s, host load $load, the guest died: $(tail -1 "$log" | cut -c1-120))")
		tp=$((tp + p)) tf=$((tf + f))
		continue
	fi
	read -r p _ f _ s _ <<<"${sum//,/}"
	if grep -q '^guest: check ok' "$log"; then p=$((p + 1)); else f=$((f + 1)); fi
	if grep -q '^guest: tracefs clean' "$log"; then p=$((p + 1)); else f=$((f + 1)); fi
	grep -E '^e2e: .* FAIL|^guest: check FAILED|^guest: tracefs left' "$log" | sed "s/^/  $k: /"
	tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
	lines+=("$k ($rel, BPF: $bpf, BTF: $btf): $p passed, $f failed, $s skipped ($secs s, host load $load)")
	[ $rc = 0 ] || [ "$f" -gt 0 ] || { tf=$((tf + 1)); lines+=("  $k: the guest run exited $rc"); }
done
echo
printf '%s\n' "${lines[@]}"
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" = 0 ]
