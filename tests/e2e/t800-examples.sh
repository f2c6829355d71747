#!/usr/bin/env bash
# The example traces of fixtures/examples: each opens with the current
# reader (info --verify, every chunk checksummed), and report --json on each
# still reaches the conclusion fixtures/examples/expect.tsv documents (the
# cause, severity, phase and op of the first chain, or no HIGH/MEDIUM chain
# at all, and the role of a named task); every file is under 1 MB and has
# its line in the README; the README's MCP exchange with one of them holds.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-examples.sh"

command -v python3 >/dev/null || skip "needs python3 to parse JSON"
dir=$IFT_FIXTURES/examples
check_examples "$dir"
[ "$n" -ge 6 ] || fail "expect.tsv lists $n examples, the README promises 6"
# the README's MCP exchange with dataloader-starvation.trace is what the
# server says: every piece of each answer between the cuts ("...")
python3 - "$IFT" "$IFT_SRC/README.md" "$dir/dataloader-starvation.trace" <<'PY' ||
import subprocess, sys
ift, readme, trace = sys.argv[1:]
lines = open(readme, encoding="utf-8").read().split("\n")
at = lines.index("$ ./ingero-ftrace mcp -i fixtures/examples/dataloader-starvation.trace")
block = lines[at + 1:lines.index("```", at)]
reqs = [l for l in block if '"method"' in l]
want = [l for l in block if '"result"' in l]
out = subprocess.run([ift, "mcp", "-i", trace], input="\n".join(reqs) + "\n", text=True,
                     capture_output=True, timeout=60).stdout.split("\n")
if len(want) != 2 or len(out) < 2:
    print("README: %d answers shown, %d given" % (len(want), len(out))); sys.exit(1)
for w, got in zip(want, out):
    for piece in w.split("..."):
        if piece.strip(" ,") and piece.strip(" ,") not in got:
            print("README's MCP answer: %r is not in %r" % (piece[:80], got[:200])); sys.exit(1)
print("README: the MCP exchange holds")
PY
	fail "the README's mcp example differs from the server's answers (above)"
# every trace in the directory is listed
for t in "$dir"/*.trace; do
	grep -q "^$(basename "$t")"$'\t' "$dir/expect.tsv" || fail "$(basename "$t") is not in expect.tsv"
done
exit 0
