#!/usr/bin/env bash
# record --profile (on by default): two input workers spend their CPU in
# known shares, each part timed by the worker itself with thread_time():
# heavy() and light(), pure-Python loops 3:1, and pack(), zlib.compress
# (tests/workloads/profshares.py).  The report's input-worker group must
# hold the workers' CPU (its samples times the period against their
# process_time()), each part's share of it within 10 points, and name
# libz, where pack() spends its time: the samples with libz in their stack
# at pack()'s share (its own, short of it by memcpy's and the kernel's, are
# not the measure); its folded stacks hold every sample, and each line of
# heavy() the report lists as many (profilecheck.py).
# The text shows the workers' top lines under the chain, and each worker's
# own with --per-process; MCP's get_profile gives report --json's profile.
# A run with --profile=off has no profile at all.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
need_debian_python
need_simcuda
work=$IFT_SRC/tests/workloads/profshares.py

# the CPU time a thread's clock may leave out: uncounted (lib-record.sh)
unc0=$(uncounted)
"$IFT" record -q --cuda-lib "$sim" -o prof.trace -- $py "$work" --cudart "$sim" \
	>truth.jsonl 2>record.err &
rp=$!
wait $rp || fail "record failed: $(tail -3 record.err)"
assert_no_leftover_of $rp
"$IFT" report --json -i prof.trace >prof.json 2>report.err || fail "report failed: $(cat report.err)"
"$IFT" info -i prof.trace >info.txt || fail "info failed"
"$IFT" export --format folded -i prof.trace -o prof.folded || fail "export folded failed"
unc=$(awk -v a="$unc0" -v b="$(uncounted)" 'BEGIN { print b - a }')
python3 "$IFT_SRC/tests/e2e/profilecheck.py" prof.json truth.jsonl info.txt prof.folded "$unc" \
	>check.out 2>&1 ||
	fail "the profile disagrees with the workers' own clocks: $(cat check.out)"
cat check.out
# the clocks run from the set-up, but the profile is the recording's: no
# row before tracing began (a 6.1 guest's set-up took 1.2 s, and the
# trace's span began there, before any other event)
start=$(awk '$1 == "record.start_ns" { print $2 }' info.txt)
first=$("$IFT" dump --json --table profile -i prof.trace | head -n 1 |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["ts"])')
[ -n "$start" ] && [ "$first" -ge "$start" ] ||
	fail "a profile row at $first, before the recording began at $start"
# the text: the workers' top lines under the chain, and each worker's own
# under it with --per-process
"$IFT" report -i prof.trace >prof.txt || fail "report failed"
grep -q '^    their CPU: *[0-9]*% .*profshares.py:[0-9]* in heavy' prof.txt ||
	fail "no workers' CPU under the chain: $(grep -A3 '^ 1\.' prof.txt)"
"$IFT" report --per-process -i prof.trace >pp.txt || fail "report --per-process failed"
for pid in $(python3 -c 'import json, sys; [print(json.loads(l)["pid"]) for l in open(sys.argv[1])]' truth.jsonl); do
	sed -n "/^process $pid /,/^process /p" pp.txt | grep -q '^    its CPU: *[0-9]*% .*profshares.py' ||
		fail "worker $pid has no CPU profile of its own in --per-process"
done

# HTML: a flame graph of the workers, heavy()'s line as wide as its samples
"$IFT" report -i prof.trace --html prof.html || fail "report --html failed"
python3 - prof.html prof.json <<'PY' || fail "the flame graph disagrees with report --json (above)"
import html, json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
g = [x for x in json.load(open(sys.argv[2]))["profile"]["groups"] if x["role"] == "input worker"][0]
m = re.search(r'<svg class="chart flame" data-role="input worker".*?</svg>', page, re.S)
if not m:
    sys.exit("no flame graph of the input workers")
boxes = [(int(d), int(n), html.unescape(t)) for d, n, t in re.findall(
    r'<g class="box" data-depth="(\d+)" data-samples="(\d+)"><title>(.*?) \(', m.group(0))]
if sum(n for d, n, _ in boxes if d == 0) > g["samples"] or not boxes:
    sys.exit("the bottom boxes hold more than the group's %d samples" % g["samples"])
for x in g["python"]:
    if x["function"] == "heavy":
        got = sum(n for _, n, t in boxes if t == x["frame"])
        if got != x["total_samples"]:
            sys.exit("%s: %d samples in the flame graph, %d in the report"
                     % (x["frame"], got, x["total_samples"]))
PY

# MCP's get_profile: report --json's profile, a role's group, a process's own
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_profile","arguments":{"limit":10}}}' \
	'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_profile","arguments":{"role":"input worker","limit":10}}}' \
	"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"get_profile\",\"arguments\":{\"pid\":$(head -1 truth.jsonl | python3 -c 'import json, sys; print(json.load(sys.stdin)["pid"])')}}}" |
	"$IFT" mcp -i prof.trace >mcp.out || fail "mcp failed"
python3 - prof.json mcp.out truth.jsonl <<'PY' || fail "get_profile disagrees with report --json (above)"
import json, sys
rep = json.load(open(sys.argv[1]))["profile"]
res = {r["id"]: r["result"] for r in map(json.loads, open(sys.argv[2])) if r.get("id", 0) > 1}
got = {i: r.get("structuredContent") for i, r in res.items()}
pid = json.loads(open(sys.argv[3]).readline())["pid"]
if got[2] != rep:
    sys.exit("get_profile: %r\nreport: %r" % (got[2], rep))
if got[3]["groups"] != [g for g in rep["groups"] if g["role"] == "input worker"]:
    sys.exit("get_profile role input worker: %r" % got[3]["groups"])
g = (got[4] or {}).get("groups") or [{}]
if g[0].get("role") != "input worker" or g[0].get("process_count") != 1 or \
        not any(x["function"] == "heavy" for x in g[0].get("python", [])):
    sys.exit("get_profile pid %d: %r" % (pid, g))
PY

# asked not to, it samples nothing
"$IFT" record -q --profile=off --cuda-lib "$sim" -o off.trace -- $py "$work" --cudart "$sim" \
	--batches 4 >/dev/null 2>record.err &
rp=$!
wait $rp || fail "record --profile=off failed: $(tail -3 record.err)"
assert_no_leftover_of $rp
"$IFT" info -i off.trace >off.txt || fail "info failed"
grep -q '^profile\.' off.txt && fail "--profile=off recorded a profile: $(grep '^profile\.' off.txt)"
[ "$(awk '$1 == "profile" { print $2 }' off.txt)" = 0 ] ||
	fail "--profile=off wrote profile rows: $(grep '^profile' off.txt)"
"$IFT" report --json -i off.trace | python3 -c 'import json, sys; sys.exit("profile" in json.load(sys.stdin))' ||
	fail "a report without a profile has a profile key"
# a bad rate is a usage error
"$IFT" record --profile=0 -- true >bad.out 2>&1 && fail "--profile=0 was taken"
grep -q 'bad --profile' bad.out || fail "--profile=0: $(cat bad.out)"
exit 0
