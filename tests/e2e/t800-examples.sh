#!/usr/bin/env bash
# The example traces of fixtures/examples: each opens with the current
# reader (info --verify, every chunk checksummed), and report --json on each
# still reaches the conclusion fixtures/examples/expect.tsv documents (the
# cause, severity, phase and op of the first chain, or no HIGH/MEDIUM chain
# at all, and the role of a named task); every file is under 1 MB and has
# its line in the README; the README's MCP exchange with one of them holds.
. "$IFT_SRC/tests/e2e/lib.sh"

command -v python3 >/dev/null || skip "needs python3 to parse JSON"
dir=$IFT_FIXTURES/examples
[ -s "$dir/expect.tsv" ] || fail "no $dir/expect.tsv"

n=0
while IFS=$'\t' read -r file first task; do
	case $file in '#'* | '') continue ;; esac
	n=$((n + 1))
	t=$dir/$file
	[ -r "$t" ] || fail "$file: listed in expect.tsv, not in $dir"
	size=$(stat -c %s "$t")
	[ "$size" -lt 1000000 ] || fail "$file: $size bytes, over 1 MB"
	grep -q "\`$file\`" "$dir/README.md" || fail "$file: no line in $dir/README.md"
	"$IFT" info --verify -i "$t" >info.txt 2>err.txt || fail "$file: info --verify: $(cat err.txt)"
	grep -q "format:.*finished" info.txt || fail "$file: not a finished trace: $(head -3 info.txt)"
	"$IFT" report --json -i "$t" >r.json 2>err.txt || fail "$file: report: $(cat err.txt)"
	python3 - r.json "$file" "$first" "$task" <<'PY' || fail "$file: report no longer concludes what expect.tsv says (above)"
import json, sys
r = json.load(open(sys.argv[1]))
name, first, task = sys.argv[2], sys.argv[3], sys.argv[4]
chains = r["chains"]
got = ["%s %s %s %s" % (c["severity"], c["cause"], c["phase"], c["op"]) for c in chains]
ok = True
if first == "none":
    bad = [g for g in got if g.split()[0] in ("HIGH", "MEDIUM")]
    if bad:
        print("%s: expected no HIGH or MEDIUM chain, got %s" % (name, bad)); ok = False
else:
    want = first.split()
    have = got[0].split() if got else []
    # "*" in a field of expect.tsv takes any value there
    if len(have) != len(want) or any(w != "*" and w != h for w, h in zip(want, have)):
        print("%s: expected the first chain '%s', got %s" % (name, first, got)); ok = False
if task and task != "-":
    # ROLE:COMM: a process of that role and name in the report
    role, comm = task.split(":", 1)
    procs = [(p.get("role"), p.get("comm") or (p.get("names") or [""])[0]) for p in r["processes"]]
    if not any(p[0] == role and comm in (p[1] or "") for p in procs):
        print("%s: no process %s with role %s: %s" % (name, comm, role, procs)); ok = False
print("%s: %s" % (name, got[:3]))
sys.exit(0 if ok else 1)
PY
done <"$dir/expect.tsv"
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
