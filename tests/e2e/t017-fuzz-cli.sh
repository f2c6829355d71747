#!/usr/bin/env bash
# Mutated traces through every command that reads one (info, --verify, dump,
# report in each format, the three exports, query, an MCP session), in the
# sanitizer build: no crash, hang or sanitizer report, exit 0 or 1 with its
# one-line error, strict JSON, no unfinished output left
# (tests/fuzz/fuzz-cli.sh).  IFT_FUZZ_CLI_TIME seconds, 120 by default;
# The inputs that once failed (tests/fuzz/cli-regress) run first, then those
# of one fixed seed (IFT_FUZZ_CLI_SEED, 1 by default), so that a run finds
# what an earlier one did: `make fuzz-cli` runs new seeds, for longer.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
san=${IFT_SAN:-}
if [ -z "$san" ] || [ ! -x "$san" ]; then
	[ "${CI:-}" = true ] && fail "no sanitizer build at '$san' (make SAN=address,undefined all)"
	echo "${0##*/}: no sanitizer build at '$san': make SAN=address,undefined all" >&2
	exit 2
fi
bash "$IFT_SRC/tests/fuzz/fuzz-cli.sh" --bin "$san" --time "${IFT_FUZZ_CLI_TIME:-120}" \
	--seed "${IFT_FUZZ_CLI_SEED:-1}" \
	--keep "$PWD/kept" >fuzz.out 2>&1
rc=$?
grep '^FAIL' fuzz.out | head -10
tail -n 1 fuzz.out
case $rc in
0) grep -q '^fuzz-cli: seed [0-9]*: [1-9][0-9]* inputs' fuzz.out || fail "no inputs ran: $(tail -3 fuzz.out)" ;;
1) fail "$(grep -c '^FAIL' fuzz.out) commands failed on mutated traces (kept in $PWD/kept)" ;;
*) fail "fuzz-cli could not run (exit $rc): $(tail -3 fuzz.out)" ;;
esac
exit 0
