#!/usr/bin/env bash
# What one string can make: a trace (made by tsv2trace, no root) whose
# process is named with 1 MiB and whose command line is 10 MiB.  Every output
# shows at most 4096 bytes of a string ("...[+N bytes]"), so dump --json and
# the Perfetto timeline stay within a few KiB an event (they wrote 2.2 GB and
# more before), and MCP answers what it used to refuse after building it
# (get_trace_stats, get_per_process_breakdown) or builds only what fits its
# limit (get_timeline: truncated, with where to go on), in bounded memory.
# get_trace_stats and get_op_latency take a limit too.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3"
MAX=4096	# IFT_TEXT_MAX
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" HUGENAME HUGECMD | python3 -c '
import sys
d = sys.stdin.read()
sys.stdout.write(d.replace("HUGENAME", "n" * (1 << 20)).replace("HUGECMD", "c" * (10 << 20)))
' >h.tsv || fail "cannot write the rows"
"$IFT_TOOLS/tsv2trace" -o h.trace <h.tsv >tsv.out || fail "tsv2trace failed"
rows=$(awk '{ print $2 }' tsv.out)

# an event line holds at most three strings of the trace
bound=$((rows * (3 * (MAX + 64) + 1024)))
"$IFT" dump --json -i h.trace >dump.json || fail "dump --json failed"
"$IFT" export --format perfetto -i h.trace -o h.json || fail "export perfetto failed"
for f in dump.json h.json; do
	size=$(stat -c %s $f)
	[ "$size" -le "$bound" ] || fail "$f: $size bytes for $rows events (bound $bound)"
done
grep -q "n\{$MAX\}\.\.\.\[+$(((1 << 20) - MAX)) bytes\]" dump.json ||
	fail "dump --json does not cut the name at $MAX bytes with its mark"

cat >mcp.in <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_trace_stats","arguments":{}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_timeline","arguments":{"from_ns":0,"limit":1000}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_per_process_breakdown","arguments":{}}}
{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_trace_stats","arguments":{"limit":1}}}
{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_op_latency","arguments":{"op":"cudaMemcpy","limit":1}}}
EOF
/usr/bin/time -f "%M" -o rss "$IFT" mcp -i h.trace <mcp.in >mcp.out 2>mcp.err || fail "mcp failed: $(cat mcp.err)"
python3 - mcp.out "$(cat rss)" "$(stat -c %s h.trace)" $MAX <<'PY' || fail "mcp (above)"
import json, sys
answers = {}
for line in open(sys.argv[1], encoding="utf-8"):
    a = json.loads(line)
    answers[a["id"]] = (len(line.encode()), a)
rss_kb, size, MAX = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
errs = []
for i in range(2, 7):
    n, a = answers[i]
    r = a.get("result", {})
    if r.get("isError"):
        errs.append("answer %d is an error: %s" % (i, r["content"][0]["text"][:200]))
    # the result's limit (512 KiB) and the line's framing
    if n > 512 * 1024 + 4096:
        errs.append("answer %d: a line of %d bytes" % (i, n))
sc = lambda i: answers[i][1].get("result", {}).get("structuredContent") or {}
cmd = sc(2).get("trace", {}).get("command", "")
if not cmd.endswith("...[+%d bytes]" % ((10 << 20) - MAX)) or len(cmd) > MAX + 64:
    errs.append("get_trace_stats: the command line is %d bytes, ending %r" % (len(cmd), cmd[-40:]))
tl = sc(3)
if not tl.get("truncated") or "next_from_ns" not in tl or not 0 < tl.get("returned", 0) < 1000:
    errs.append("get_timeline: %s" % {k: tl.get(k) for k in ("returned", "truncated", "next_from_ns")})
whole, one = sc(2), sc(5)
if len(one.get("ops", [])) != 1 or one.get("ops_total") != len(whole.get("ops", [])) or \
        one["ops"][0] != whole["ops"][0]:
    errs.append("get_trace_stats limit 1: %d ops of %s" % (len(one.get("ops", [])), one.get("ops_total")))
lat = sc(6)
if len(lat.get("processes", [])) != 1 or lat.get("processes_total", 0) < 1:
    errs.append("get_op_latency limit 1: %d processes of %s" % (len(lat.get("processes", [])),
                                                               lat.get("processes_total")))
# memory: the trace, its analysis and an answer, not what a string makes
if rss_kb * 1024 > 64 * 2**20 + 4 * size:
    errs.append("peak RSS %d KiB for a trace of %d bytes" % (rss_kb, size))
print("mcp: 5 answers, the longest line %d bytes; timeline %d events, truncated; peak RSS %d KiB"
      % (max(answers[i][0] for i in range(2, 7)), tl.get("returned", 0), rss_kb))
if errs:
    sys.exit("\n".join(errs))
PY
exit 0
