#!/usr/bin/env bash
# Runs every test and ends with one line: "N passed, N failed, N skipped".
#   unit tests (cmocka, TAP output) from the normal build and the sanitizer build,
#   then end-to-end tests tests/e2e/t*.sh against the real binary.
# --needs-kernel runs only the e2e tests that trace (those calling need_root):
# what contrib/kernels/check-kernels.sh runs in each guest kernel.
# An e2e script exits 0 (pass), 77 (skip, with a reason on stdout) or anything else (fail);
# each "skip-part: REASON" line it prints (lib.sh's skip_part) counts as one skip more.
# IFT_TEST_KEEP=DIR keeps a failed e2e test's working directory (its traces,
# the reports it checked) as DIR/NAME, for a failure seen once to be read.
set -u
cd "$(dirname "$0")/.."

build=build
san=
filter=
kernel_only=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--san-build) san=$2; shift ;;
	--filter) filter=$2; shift ;;
	--needs-kernel) kernel_only=1 ;;
	*) echo "usage: $0 [--build DIR] [--san-build DIR] [--filter PATTERN] [--needs-kernel]" >&2; exit 2 ;;
	esac
	shift
done

pass=0 fail=0 skip=0
failed=()
log=$(mktemp -d /tmp/ift-tests.XXXXXX)
trap 'rm -rf "$log"' EXIT

run_unit() {	# binary label
	local bin=$1 label=$2 out rc line
	out=$log/unit.out
	CMOCKA_MESSAGE_OUTPUT=TAP "$bin" >"$out" 2>&1
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
	printf '%-44s %s\n' "$label" "$(grep -c '^ok' "$out") ok, $(grep -v '# SKIP' "$out" | grep -c '^not ok') not ok, $(grep -c '# SKIP' "$out") skipped"
}

for dir in "$build" ${san:+"$san"}; do
	[ -n "$kernel_only" ] && break
	for bin in "$dir"/tests/unit/test-*; do
		[ -x "$bin" ] || continue
		case $bin in *.d|*.o) continue ;; esac
		name=$(basename "$bin")
		[ -n "$filter" ] && [[ $name != *$filter* ]] && continue
		run_unit "$bin" "unit${dir:+ ($dir)}: $name"
	done
done

export IFT="$PWD/ingero-ftrace"
export IFT_BUILD="$PWD/$build"
export IFT_TOOLS="$PWD/$build/tests/tools"
export IFT_FIXTURES="$PWD/fixtures"
export IFT_SRC="$PWD"
for t in tests/e2e/t*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	[ -n "$filter" ] && [[ $name != *$filter* ]] && continue
	[ -n "$kernel_only" ] && ! grep -q '^need_root' "$t" && continue
	work=$(mktemp -d /tmp/ift-e2e.XXXXXX)
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
	printf '%-44s %s\n' "e2e: $name" "$status"
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
