#!/usr/bin/env bash
# `report` against an earlier tree: the commit REF built in a worktree of
# its own, then both binaries on one generated trace, alternating, REPS
# pairs.  A ratio is this tree / REF's wall time of one pair: median and
# range, with CPU time and peak RSS beside it.  The default REF is the tree
# on which the read plan was one pass among many (issue 37's "as fast as
# today"); this tree is held to a median ratio of at most 1.0.  The outputs
# of the two must be the same text.  Prints a markdown section.  Needs no
# root.
#
#   baseline.sh BUILD_DIR [REPS] [EVENTS] [REF]
set -euo pipefail
build=${1:-build}
reps=${2:-5}
events=${3:-50000000}
ref=${4:-7695403}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/contrib/bench/lib.sh"
bench_paths "$build"
gen=$bdir/tests/tools/gentrace
command -v /usr/bin/time >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends time >&2

work=$(mktemp -d /tmp/ift-baseline.XXXXXX)
cleanup() {
	git -C "$top" worktree remove --force "$work/tree" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
git -C "$top" worktree add --detach --quiet "$work/tree" "$ref" >&2
make -C "$work/tree" --no-print-directory -j"$(nproc)" all >"$work/build.log" 2>&1 ||
	{ tail -5 "$work/build.log" >&2; echo "baseline.sh: $ref does not build" >&2; exit 1; }
base=$work/tree/build/ingero-ftrace
"$gen" -o "$work/g.trace" -n "$events" -s 11 >/dev/null

"$ift" report -i "$work/g.trace" >"$work/ours.txt"
"$base" report -i "$work/g.trace" >"$work/base.txt"
same=yes
cmp -s "$work/ours.txt" "$work/base.txt" || same=no

# one run: "wall cpu rss_kb"
run() {
	/usr/bin/time -f "%e %U %S %M" -o "$work/t" "$@" report -i "$work/g.trace" >/dev/null
	awk '{ print $1, $2 + $3, $4 }' "$work/t"
}
: >"$work/pairs"
for i in $(seq "$reps"); do
	if [ $((i % 2)) = 1 ]; then
		o=$(run "$ift") b=$(run "$base")
	else
		b=$(run "$base") o=$(run "$ift")
	fi
	echo "$o $b" >>"$work/pairs"
done

python3 - "$work/pairs" "$reps" "$events" "$ref" "$same" <<'PY'
import statistics, sys
path, reps, events, ref, same = sys.argv[1:6]
rows = [tuple(map(float, l.split())) for l in open(path)]
med = statistics.median

def col(i):
    return [r[i] for r in rows]

ratio = [o / b for o, _, _, b, _, _ in rows if b > 0]
print("## Analysis against an earlier tree: `report` on %s events\n" % format(int(events), ","))
print("This tree's `report` beside the one built from `%s` (before the read plan: the "
      "calls were read four times before the pass), %s pairs on one `gentrace -s 11` "
      "trace, alternating which goes first; a ratio is this tree / `%s` of one pair's "
      "wall time. The two reports are %s.\n"
      % (ref, reps, ref, "the same text" if same == "yes" else "**not** the same text"))
print("| binary | wall s (median, min-max) | CPU s (median) | peak RSS MiB (median) |")
print("|---|---|---|---|")
print("| this tree | %.2f (%.2f-%.2f) | %.2f | %.1f |"
      % (med(col(0)), min(col(0)), max(col(0)), med(col(1)), med(col(2)) / 1024))
print("| `%s` | %.2f (%.2f-%.2f) | %.2f | %.1f |"
      % (ref, med(col(3)), min(col(3)), max(col(3)), med(col(4)), med(col(5)) / 1024))
print()
v = med(ratio)
print("Wall time, this tree / `%s`: %.3f median (%.3f-%.3f). Target: at most 1.0, "
      "%s." % (ref, v, min(ratio), max(ratio), "met" if v <= 1.0 else "missed"))
PY
