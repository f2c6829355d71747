#!/usr/bin/env bash
# fuzz-cli.sh [--bin BIN] [--time SECONDS] [--seed N] [--keep DIR]
#
# Mutated traces through every command that reads one, run by the sanitizer
# build of the CLI (make SAN=address,undefined: ASan, UBSan, LeakSanitizer).
# Each input is a trace of fixtures/ with 1 to 4 mutations (mutate.py), most
# with their CRCs recomputed so the damage reaches the parsers.  A command
# fails the run when it
#   - crashes, is killed, or runs past its time (a hang);
#   - makes a sanitizer report (its own exit code, or the report's words);
#   - exits other than 0 or 1, or exits 1 without its one-line error;
#   - writes JSON (report, dump, Perfetto, MCP) that a strict parser refuses;
#   - leaves an unfinished output (FILE.part) or an export's stage behind.
# Each failing input is kept in DIR (default build-fuzz/cli-crashes) with the
# command that failed on it, and named by its fixture and R: a line "FIXTURE R"
# in tests/fuzz/cli-regress runs it first in every later run.  The seed is
# printed: --seed N runs the same inputs again.  Exit 0 when nothing failed, 1 otherwise, 2 when it cannot
# run.
set -u
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$src/build-san/ingero-ftrace
time_s=${FUZZ_CLI_TIME:-180}
seed=${FUZZ_CLI_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
keep=$src/build-fuzz/cli-crashes
while [ $# -gt 0 ]; do
	case $1 in
	--bin) bin=$2; shift ;;
	--time) time_s=$2; shift ;;
	--seed) seed=$2; shift ;;
	--keep) keep=$2; shift ;;
	*) echo "usage: $0 [--bin BIN] [--time SECONDS] [--seed N] [--keep DIR]" >&2; exit 2 ;;
	esac
	shift
done
[ -x "$bin" ] || { echo "fuzz-cli: no binary $bin (make SAN=address,undefined all)" >&2; exit 2; }
bin=$(realpath "$bin")	# the commands run in a work directory
command -v python3 >/dev/null || { echo "fuzz-cli: needs python3" >&2; exit 2; }

seeds=()
for f in "$src"/fixtures/examples/*.trace "$src"/fixtures/arm64/*.trace; do
	[ -f "$f" ] && [ "$(stat -c %s "$f")" -le 2000000 ] && seeds+=("$f")
done
[ ${#seeds[@]} -gt 0 ] || { echo "fuzz-cli: no seed traces in $src/fixtures" >&2; exit 2; }

work=$(mktemp -d /tmp/ift-fuzz-cli.XXXXXX) || exit 2
trap 'rm -rf "$work"' EXIT
# one MCP session: the handshake, then every tool call of the fuzzer's seeds
{
	head -n 2 "$src/tests/fuzz/mcp-seeds/tools-list"
	for s in "$src"/tests/fuzz/mcp-seeds/*; do
		grep -h '"tools/call"' "$s"
	done
	echo '{"jsonrpc":"2.0","id":99,"method":"ping"}'
} >"$work/session"

# each sanitizer's own exit code, so that none passes for exit 1
export ASAN_OPTIONS=exitcode=86:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=exitcode=87:print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=exitcode=88:suppressions=$src/tests/lsan.supp:print_suppressions=0
export IFT_QUERY_TIMEOUT_S=5

# the commands: a name, then the arguments after the binary (@: the input)
cmds=(
	"info|info -i @"
	"verify|info --verify -i @"
	"dump|dump -i @"
	"dump-json|dump --json -i @"
	"report|report -i @"
	"report-json|report --json -i @"
	"report-html|report --html out.html -i @"
	"sqlite|export --format sqlite -i @ -o out.db"
	"perfetto|export --format perfetto -i @ -o out.json"
	"parquet|export --format parquet -i @ -o pq"
	"query|query --json -i @ SELECT * FROM calls ORDER BY ts LIMIT 50"
	"mcp|mcp -i @"
)

inputs=0 runs=0 failures=0 damaged=0
declare -A kinds=()

failed() {	# input name why
	local n
	failures=$((failures + 1))
	mkdir -p "$keep"
	n=$keep/$2-$seed-$inputs
	cp "$1" "$n.trace"
	printf '%s %s\n# %s\n' "$bin" "$args" "$3" >"$n.cmd"
	echo "FAIL: $2 on mutation $r of ${from#"$src"/} ($what): $3 (kept: $n.trace)"
}

# try_input FROM R: the mutation R of trace FROM through every command
try_input() {
	local from=$1 r=$2 d=$work/in what k c name rc bad left
	inputs=$((inputs + 1))
	rm -rf "$d" && mkdir "$d" && cd "$d" || exit 2
	what=$(python3 "$src/tests/fuzz/mutate.py" "$from" t.trace "$r") || exit 2
	IFS=+ read -ra ks <<<"${what%% *}"
	for k in "${ks[@]}"; do kinds[$k]=1; done
	for c in "${cmds[@]}"; do
		name=${c%%|*}
		args=${c#*|}
		args=${args//@/t.trace}
		runs=$((runs + 1))
		if [ $name = mcp ]; then
			timeout -k 5 60 "$bin" $args <"$work/session" >mcp.out 2>err
		elif [ $name = query ]; then
			timeout -k 5 60 "$bin" query --json -i t.trace \
				"SELECT * FROM calls ORDER BY ts LIMIT 50" >query.out 2>err
		else
			timeout -k 5 60 "$bin" $args >$name.out 2>err
		fi
		rc=$?
		if [ $rc = 124 ] || [ $rc = 137 ]; then
			failed t.trace $name "ran past 60 s"
		elif [ $rc -ge 86 ] && [ $rc -le 88 ] || grep -qE 'Sanitizer|runtime error:' err; then
			failed t.trace $name "sanitizer: $(grep -m1 -E 'ERROR|runtime error' err)"
		elif [ $rc -ge 128 ]; then
			failed t.trace $name "killed by signal $((rc - 128))"
		elif [ $rc -gt 1 ]; then
			failed t.trace $name "exit $rc: $(head -c 300 err)"
		elif [ $rc = 1 ] && ! grep -q '^ingero-ftrace: error: ' err; then
			failed t.trace $name "exit 1 without an error line: $(head -c 300 err)"
		fi
		[ $name = info ] && grep -q DAMAGED info.out && damaged=$((damaged + 1))
	done
	# JSON that a strict parser (UTF-8 too) reads, line by line for MCP
	bad=$(python3 - <<'PY'
import json, os
def check(f, lines):
    if not os.path.exists(f) or not os.path.getsize(f):
        return
    docs = open(f, "rb").readlines() if lines else [open(f, "rb").read()]
    for n, doc in enumerate(docs):
        try:
            json.loads(doc)
        except ValueError as e:
            print("%s%s: %s" % (f, " line %d" % (n + 1) if lines else "", e))
            return
for f in ("report-json.out", "out.json", "query.out"):
    check(f, False)
for f in ("dump-json.out", "mcp.out"):	# a document a line
    check(f, True)
PY
)
	args="(JSON outputs)"
	[ -z "$bad" ] || failed t.trace json "$bad"
	left=$(find "$d" "$work" -maxdepth 1 \( -name '*.part' -o -name '.*.ingero-*' \) | head -3)
	args="(outputs)"
	[ -z "$left" ] || failed t.trace leftovers "unfinished outputs left: $left"
	cd "$work" || exit 2
}

# first the inputs that once failed (cli-regress: a fixture and its R each),
# then new ones for TIME seconds
start=$SECONDS
while read -r f r _; do
	case $f in ''|'#'*) continue ;; esac
	[ -f "$src/$f" ] || { echo "fuzz-cli: cli-regress names $f: no such fixture" >&2; exit 2; }
	try_input "$src/$f" "$r"
done <"$src/tests/fuzz/cli-regress"
regressions=$inputs
while [ $((SECONDS - start)) -lt "$time_s" ]; do
	r=$((seed + inputs - regressions + 1))
	try_input "${seeds[$((r % ${#seeds[@]}))]}" "$r"
done
echo "fuzz-cli: seed $seed: $inputs inputs ($regressions from cli-regress, $damaged read as damaged; mutations:" \
	"$(echo "${!kinds[@]}" | tr ' ' '\n' | sort | tr '\n' ' ')), $runs commands in $((SECONDS - start)) s, $failures failed"
[ $failures = 0 ]
