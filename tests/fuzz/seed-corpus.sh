#!/bin/sh
# Writes a small seed corpus for tests/fuzz/fuzz-reader into OUTDIR.
#   seed-corpus.sh GENTRACE OUTDIR
# Every seed stays under 64 KiB (make fuzz runs with -max_len=65536) and is
# deterministic, so the same corpus comes out on every machine.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 GENTRACE OUTDIR" >&2
	exit 2
fi
gentrace=$1
out=$2
max=65536

mkdir -p "$out"
rm -f "$out"/seed-*

gen() {	# name gentrace-args...
	name=$1
	shift
	"$gentrace" -o "$out/$name" "$@" >/dev/null
}

gen seed-finished -n 300
gen seed-finished-s7-w1 -n 200 -s 7 -w 1
gen seed-tiny-chunks --chunk-rows 3 -n 150
gen seed-one-row-chunks --chunk-rows 1 -n 40
gen seed-raw --level -1 -n 200
gen seed-raw-tiny-chunks --level -1 --chunk-rows 5 -n 120
gen seed-empty -n 0
gen seed-big --chunk-rows 512 -n 6000
# an unfinished recording leaves NAME.part
gen seed-unfinished --unfinished -n 250
gen seed-unfinished-raw --unfinished --level -1 --chunk-rows 7 -n 120
# cut short in the middle, with and without compression
size=$(wc -c <"$out/seed-finished")
head -c $((size / 2)) "$out/seed-finished" >"$out/seed-truncated"
size=$(wc -c <"$out/seed-raw-tiny-chunks")
head -c $((size * 2 / 3)) "$out/seed-raw-tiny-chunks" >"$out/seed-raw-truncated"
# the header alone
head -c 64 "$out/seed-finished" >"$out/seed-header-only"

for f in "$out"/seed-*; do
	[ "$(wc -c <"$f")" -le $max ] || { echo "$0: $f is over $max bytes" >&2; exit 1; }
done
