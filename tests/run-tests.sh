#!/usr/bin/env bash
# Runs every test and ends with one line: "N passed, N failed, N skipped".
#   unit tests (cmocka, TAP output) from the normal build and the sanitizer build,
#   then end-to-end tests tests/e2e/t*.sh against the real binary.
# --needs-kernel runs only the e2e tests that trace (those calling need_root):
# what contrib/kernels/check-kernels.sh runs in each guest kernel.
# An e2e script exits 0 (pass), 77 (skip, with a reason on stdout) or anything else (fail);
# each "skip-part: REASON" line it prints (lib.sh's skip_part) counts as one skip more.
# --cross-build DIR adds the unit tests of a build for another architecture
# (make ARCH=aarch64 unit-tests), each run through --emulate's CMD
# (qemu-aarch64: qemu-user, or qemu-user-static's qemu-aarch64-static, finding
# the arm64 libraries of Debian's multiarch under QEMU_LD_PREFIX, / by default).
# There IFT_TEST_EMULATOR names the emulator: a test that cannot work under
# it (uprobes never fire in translated code; qemu-user 7.2 has no clone3 or
# process_vm_readv) can skip with that reason.
# --unit-only runs no e2e test; --build '' no unit test of a native build.
# --units with --needs-kernel runs the build's unit tests too: in an arm64
# guest, natively, those that qemu-user cannot run (check-kernels.sh).
# --filter A|B runs the tests whose names hold A or B.
# IFT_TEST_KEEP=DIR keeps a failed e2e test's working directory (its traces,
# the reports it checked) as DIR/NAME, for a failure seen once to be read.
set -u
cd "$(dirname "$0")/.."

build=build
san=
filter=
kernel_only=
cross=
emulate=
unit_only=
with_units=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--san-build) san=$2; shift ;;
	--filter) filter=$2; shift ;;
	--needs-kernel) kernel_only=1 ;;
	--cross-build) cross=$2; shift ;;
	--emulate) emulate=$2; shift ;;
	--unit-only) unit_only=1 ;;
	--units) with_units=1 ;;
	*) echo "usage: $0 [--build DIR] [--san-build DIR] [--filter PATTERN] [--needs-kernel]" \
		"[--cross-build DIR [--emulate CMD]] [--unit-only] [--units]" >&2; exit 2 ;;
	esac
	shift
done

pass=0 fail=0 skip=0
failed=()
log=$(mktemp -d /tmp/ift-tests.XXXXXX)
trap 'rm -rf "$log"' EXIT

# qemu-aarch64 is qemu-user's; qemu-user-static names it qemu-aarch64-static
emulate_label=${emulate%% *}
if [ -n "$emulate" ] && ! command -v "$emulate" >/dev/null 2>&1 &&
   command -v "$emulate-static" >/dev/null 2>&1; then
	emulate=$emulate-static
fi

# wanted NAME: no --filter, or NAME holds one of its |-separated parts
wanted() {
	local f parts
	[ -z "$filter" ] && return 0
	IFS='|' read -ra parts <<<"$filter"
	for f in "${parts[@]}"; do
		[[ $1 == *"$f"* ]] && return 0
	done
	return 1
}

# the sanitizer build's leak reports, but for leaks inside libraries
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}

run_unit() {	# binary label [emulator]
	local bin=$1 label=$2 emu=${3:-} out rc line t0=$SECONDS
	out=$log/unit.out
	if [ -n "$emu" ]; then
		CMOCKA_MESSAGE_OUTPUT=TAP IFT_TEST_EMULATOR=$emulate_label \
			QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/} $emu "$bin" >"$out" 2>&1
	else
		CMOCKA_MESSAGE_OUTPUT=TAP "$bin" >"$out" 2>&1
	fi
	rc=$?
	local before=$((pass + fail + skip))
	while IFS= read -r line; do
		# cmocka 1.1 prints a skipped test as "not ok N # SKIP"
		case $line in
		*"ok "*"# SKIP"*) skip=$((skip + 1)) ;;
		"not ok "*) fail=$((fail + 1)); failed+=("$label: ${line#not ok }") ;;
		"ok "*) pass=$((pass + 1)) ;;
		esac
	done <"$out"
	if [ $rc -ne 0 ] || [ $((pass + fail + skip)) -eq "$before" ]; then
		# a crash, a sanitizer report, or no result at all
		if ! grep -v '# SKIP' "$out" | grep -q '^not ok'; then
			fail=$((fail + 1))
			failed+=("$label: exited $rc")
		fi
		sed 's/^/    /' "$out" | tail -40
	fi
	printf '%-44s %4ss  %s\n' "$label" $((SECONDS - t0)) "$(grep -c '^ok' "$out") ok, $(grep -v '# SKIP' "$out" | grep -c '^not ok') not ok, $(grep -c '# SKIP' "$out") skipped"
}

run_units() {	# dir label [emulator]
	local dir=$1 label=$2 emu=${3:-} bin name
	for bin in "$dir"/tests/unit/test-*; do
		[ -x "$bin" ] || continue
		case $bin in *.d|*.o) continue ;; esac
		name=$(basename "$bin")
		wanted "$name" || continue
		run_unit "$bin" "unit ($label): $name" "$emu"
	done
}

if [ -z "$kernel_only" ] || [ -n "$with_units" ]; then
	for dir in ${build:+"$build"} ${san:+"$san"}; do
		run_units "$dir" "$dir"
	done
	[ -z "$cross" ] || run_units "$cross" "$cross${emulate:+, ${emulate_label##*/}}" "$emulate"
fi

# ./ingero-ftrace is build/'s copy; another build's binary is its own;
# IFT_BIN names another binary to test with the build's workloads (the
# release binary in check-distros' roots)
if [ -n "${IFT_BIN:-}" ]; then
	export IFT=$IFT_BIN
elif [ "$build" = build ]; then
	export IFT="$PWD/ingero-ftrace"
else
	export IFT="$PWD/$build/ingero-ftrace"
fi
export IFT_BUILD="$PWD/$build"
# the static build of the same target (make STATIC=1), for t060
export IFT_STATIC=${IFT_STATIC:-$PWD/$build-static/ingero-ftrace}
# the sanitizer build's binary (make SAN=address,undefined all), for t017
export IFT_SAN=${IFT_SAN:-${san:+$PWD/$san/ingero-ftrace}}
export IFT_TOOLS="$PWD/$build/tests/tools"
export IFT_FIXTURES="$PWD/fixtures"
export IFT_SRC="$PWD"
for t in tests/e2e/t*.sh; do
	[ -z "$unit_only" ] || break
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	wanted "$name" || continue
	[ -n "$kernel_only" ] && ! grep -q '^need_root' "$t" && continue
	work=$(mktemp -d /tmp/ift-e2e.XXXXXX)
	t0=$SECONDS
	(cd "$work" && bash "$IFT_SRC/$t") >"$log/e2e.out" 2>&1
	rc=$?
	# the parts of a test that could not run here count as skipped
	parts=0
	[ $rc = 77 ] || parts=$(grep -c '^skip-part:' "$log/e2e.out")
	skip=$((skip + parts))
	case $rc in
	0) pass=$((pass + 1)); status=ok ;;
	77) skip=$((skip + 1)); status="skip: $(grep -m1 '^skip:' "$log/e2e.out" | sed 's/^skip: //')" ;;
	*) fail=$((fail + 1)); status="FAIL ($rc)"; failed+=("e2e: $name")
	   sed 's/^/    /' "$log/e2e.out" | tail -40
	   if [ -n "${IFT_TEST_KEEP:-}" ] && mkdir -p "$IFT_TEST_KEEP"; then
		rm -rf "${IFT_TEST_KEEP:?}/$name"
		cp -a "$work" "$IFT_TEST_KEEP/$name" && cp "$log/e2e.out" "$IFT_TEST_KEEP/$name/OUTPUT" &&
			echo "    kept in $IFT_TEST_KEEP/$name"
	   fi ;;
	esac
	# the seconds each took, for CI's time (issue 34: under 35 minutes)
	printf '%-44s %4ss  %s\n' "e2e: $name" $((SECONDS - t0)) "$status"
	[ "$parts" = 0 ] || grep '^skip-part:' "$log/e2e.out" | sed 's/^skip-part: /    part skipped: /'
	rm -rf "$work"
done

if [ ${#failed[@]} -gt 0 ]; then
	echo
	echo "failed:"
	printf '  %s\n' "${failed[@]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
