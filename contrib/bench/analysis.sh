#!/usr/bin/env bash
# Analysis speed and memory: `ingero-ftrace report` (every figure and the
# causal chains) on generated traces of growing size, wall time, CPU time and
# peak RSS of REPS runs each.  Host events per second is the figure the
# analyzer is held to (at least 10 million on the 50-million-event trace).
# Prints a markdown section.  Needs no root.
#
#   analysis.sh BUILD_DIR [REPS] [SIZES...]
set -euo pipefail
build=${1:-build}
reps=${2:-5}
shift 2 || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 10000000 50000000)
top=$(cd "$(dirname "$0")/../.." && pwd)
ift=$top/ingero-ftrace
gen=$top/$build/tests/tools/gentrace
command -v /usr/bin/time >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends time >&2

work=$(mktemp -d /tmp/ift-analysis.XXXXXX)
trap 'rm -rf "$work"' EXIT

# min, median and max of numbers on stdin
stats() {
	sort -g | awk '{ v[NR] = $1 } END { printf "%s %s %s\n", v[1], v[int((NR + 1) / 2)], v[NR] }'
}

echo "## Analysis: \`report\` on generated traces"
echo
echo "\`gentrace -n N\` writes a DataLoader-shaped trace (a launch thread calling the runtime,"
echo "4 page-allocating workers, switches, wake-ups, samples) through the writer; \`report\` reads"
echo "all of it and builds every table and the causal chains. $reps runs per size; wall and CPU"
echo "time and peak RSS from /usr/bin/time. Host events are the rows other than CUDA calls."
echo
echo "| events | host events | CUDA calls | file (MB) | wall s (min / median / max) | CPU s (median) | host events/s (median) | peak RSS MiB (median) | peak RSS bytes per CUDA call |"
echo "|---|---|---|---|---|---|---|---|---|"
prev_calls= prev_kb= margins=
for n in "${sizes[@]}"; do
	"$gen" -o "$work/g.trace" -n "$n" -s 11 >/dev/null
	json=$("$ift" report -i "$work/g.trace" --json)
	host=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["trace"]["host_events"])')
	calls=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["trace"]["calls"])')
	: >"$work/runs"
	for _ in $(seq "$reps"); do
		/usr/bin/time -f "%e %U %S %M" -o "$work/t" "$ift" report -i "$work/g.trace" >/dev/null
		cat "$work/t" >>"$work/runs"
	done
	read -r wmin wmed wmax < <(awk '{ print $1 }' "$work/runs" | stats)
	read -r _ cmed _ < <(awk '{ print $2 + $3 }' "$work/runs" | stats)
	read -r _ rmed _ < <(awk '{ print $4 / 1024 }' "$work/runs" | stats)
	read -r _ kb _ < <(awk '{ print $4 }' "$work/runs" | stats)
	mb=$(awk -v b="$(stat -c %s "$work/g.trace")" 'BEGIN { printf "%.0f", b / 1e6 }')
	rate=$(awk -v h="$host" -v w="$wmed" 'BEGIN { printf "%.1fM", h / w / 1e6 }')
	printf '| %s | %s | %s | %s | %s / %s / %s | %.2f | %s | %.0f | %.1f |\n' "$n" "$host" "$calls" \
		"$mb" "$wmin" "$wmed" "$wmax" "$cmed" "$rate" "$rmed" "$(awk -v k="$kb" -v c="$calls" \
		'BEGIN { print c ? k * 1024 / c : 0 }')"
	if [ -n "$prev_calls" ] && [ "$calls" -gt "$prev_calls" ]; then
		marginal=$(awk -v k1="$prev_kb" -v k2="$kb" -v c1="$prev_calls" -v c2="$calls" \
			'BEGIN { printf "%.1f", (k2 - k1) * 1024 / (c2 - c1) }')
		margins="$margins${margins:+, }$marginal bytes (from $prev_calls to $calls calls)"
	fi
	prev_calls=$calls prev_kb=$kb
done
echo
if [ -n "${margins:-}" ]; then
	echo "Peak RSS per added CUDA call (the difference of two sizes over the difference of their"
	echo "calls, so the fixed part cancels): $margins. Target: at most 24 bytes a call."
	echo
fi
echo "Memory grows with the CUDA calls only by what the percentiles need: each call's duration"
echo "(8 bytes, read from the calls table before the pass), never its breakdown, which is"
echo "complete when the call closes and is then added up (op tables, the chains' tallies)."
echo "The host events cost nothing that stays. Reading runs in two threads: a prefetcher"
echo "decodes each table's next chunk while the analysis works on the current one, so CPU time"
echo "exceeds wall time."
