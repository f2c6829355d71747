#!/usr/bin/env bash
# The runner counts what a test could not check: a whole test that skips,
# and each part of a passing test that could not run here (skip_part), are
# counted as skipped with their reasons; a failing test still fails.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mkdir -p tree/tests/e2e
cp "$IFT_SRC/tests/run-tests.sh" tree/tests/
cp "$IFT_SRC/tests/e2e/lib.sh" tree/tests/e2e/
cat >tree/tests/e2e/t001-parts.sh <<'T'
. "$IFT_SRC/tests/e2e/lib.sh"
skip_part "no such device here"
skip_part "not as root"
exit 0
T
cat >tree/tests/e2e/t002-whole.sh <<'T'
. "$IFT_SRC/tests/e2e/lib.sh"
skip "needs nothing we have"
T
cat >tree/tests/e2e/t003-fails-after-part.sh <<'T'
. "$IFT_SRC/tests/e2e/lib.sh"
skip_part "one part"
fail "on purpose"
T
out=$(cd tree && IFT_SRC=$PWD bash tests/run-tests.sh --build nobuild --filter t00 2>&1)
echo "$out"
last=$(printf '%s\n' "$out" | tail -1)
[ "$last" = "1 passed, 1 failed, 4 skipped" ] || fail "the runner counted: $last"
printf '%s\n' "$out" | grep -A2 "e2e: t001-parts" | grep -q "part skipped: no such device here" || fail "the runner does not say which part was skipped"
exit 0
