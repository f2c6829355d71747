#!/usr/bin/env bash
# The static release binary (make STATIC=1, what make dist ships) beside the
# dynamic build: file sizes, and `report` and `export --format sqlite` on one
# generated trace, the two binaries alternating, REPS pairs.  A ratio is
# static / dynamic of one pair's wall times: median and range.  The static
# one is held to `report` within 5%.  Prints a markdown section.  Needs no
# root.
#
#   static.sh BUILD_DIR [REPS] [EVENTS]
set -euo pipefail
build=${1:-build}
reps=${2:-5}
events=${3:-10000000}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/contrib/bench/lib.sh"
bench_paths "$build"
static=$bdir-static/ingero-ftrace
[ -x "$static" ] || { echo "static.sh: no $static (make STATIC=1)" >&2; exit 1; }
gen=$bdir/tests/tools/gentrace
command -v /usr/bin/time >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends time >&2

work=$(mktemp -d /tmp/ift-static.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$gen" -o "$work/g.trace" -n "$events" -s 11 >/dev/null

# wall seconds of one run: wall BIN ARGS...
wall() {
	/usr/bin/time -f %e -o "$work/t" "$@" >/dev/null
	cat "$work/t"
}

# pairs LABEL ARGS...: REPS pairs, alternating which binary goes first
pairs() {
	local label=$1 i d s
	shift
	: >"$work/$label"
	for i in $(seq "$reps"); do
		if [ $((i % 2)) = 1 ]; then
			d=$(wall "$ift" "$@") s=$(wall "$static" "$@")
		else
			s=$(wall "$static" "$@") d=$(wall "$ift" "$@")
		fi
		echo "$d $s" >>"$work/$label"
		rm -f "$work/o.db"
	done
}
pairs report report -i "$work/g.trace"
pairs sqlite export --format sqlite -i "$work/g.trace" -o "$work/o.db"

python3 - "$work" "$ift" "$static" "$reps" "$events" <<'PY'
import os, statistics, subprocess, sys
work, dyn, sta, reps, events = sys.argv[1:6]

def size(p):
    return os.stat(p).st_size / 1e6

def stripped(p):
    out = os.path.join(work, "stripped")
    subprocess.run(["strip", "--strip-debug", "-o", out, p], check=True)
    return size(out)

print("## The static release binary beside the dynamic one\n")
print("`make dist` ships the `STATIC=1` build: glibc and every library linked in "
      "(docs/static.md). Sizes in MB; `ldd` counts the shared libraries the dynamic one "
      "loads. Speeds: %s pairs of runs on one generated trace of %s events, the two "
      "binaries alternating; a ratio is static / dynamic wall time of one pair.\n"
      % (reps, format(int(events), ",")))
libs = subprocess.run(["ldd", dyn], capture_output=True, text=True).stdout.count("=>")
print("| binary | file | without debug sections | shared libraries |")
print("|---|---|---|---|")
print("| dynamic (`make`) | %.1f | %.1f | %d |" % (size(dyn), stripped(dyn), libs))
print("| static (`make STATIC=1`) | %.1f | %.1f | 0 |" % (size(sta), stripped(sta)))
print()
print("| command | dynamic s (median) | static s (median) | static / dynamic (median, min-max) |")
print("|---|---|---|---|")
verdict = []
for label, cmd in (("report", "`report`"), ("sqlite", "`export --format sqlite`")):
    rows = [tuple(map(float, l.split())) for l in open(os.path.join(work, label))]
    r = [s / d for d, s in rows if d > 0]
    print("| %s | %.2f | %.2f | %.3f (%.3f-%.3f) |" % (
        cmd, statistics.median(d for d, _ in rows), statistics.median(s for _, s in rows),
        statistics.median(r), min(r), max(r)))
    if label == "report":
        verdict = statistics.median(r)
print()
print("Target: `report` within 5%%: the median ratio is %.3f, %s." % (
    verdict, "met" if verdict <= 1.05 else "missed"))
PY
