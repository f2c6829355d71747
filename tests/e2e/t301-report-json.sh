#!/usr/bin/env bash
# report --json has every key docs/report.md documents, with the documented
# type, and no other (chains included, on a starved feeding thread built
# row by row; the Python call sites, only on the same thread recorded with
# Python frames); the text report fits 100 columns in every mode, --diff too;
# bad options are usage errors; report runs as an unprivileged user.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 to parse JSON"

# 12 workers: more processes than one ranking shows
"$IFT_TOOLS/gentrace" -o g.trace -n 60000 -s 7 -w 12 >/dev/null || fail "gentrace failed"

"$IFT" report -i g.trace --json >report.json 2>err.txt || fail "report --json failed: $(cat err.txt)"
[ ! -s err.txt ] || fail "report --json wrote to stderr: $(cat err.txt)"
"$IFT" report -i g.trace --json --from 20ms --to 60ms >window.json 2>err.txt ||
	fail "report --json --from --to failed: $(cat err.txt)"

# a feeding thread (tid 101 of "train") that blocks 5 ms between 200 us copies
# until loader worker 200 wakes it, while 4 more workers preempt it
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train --workers 5" stacks >starve.tsv ||
	fail "starve-tsv.py failed"
"$IFT_TOOLS/tsv2trace" -o starve.trace <starve.tsv >/dev/null || fail "tsv2trace failed"
"$IFT" report -i starve.trace --json >starve.json 2>err.txt || fail "report --json failed: $(cat err.txt)"
# the same with Python frames (record --py-stack)
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train --workers 5" pystacks >py.tsv ||
	fail "starve-tsv.py pystacks failed"
"$IFT_TOOLS/tsv2trace" -o py.trace <py.tsv >/dev/null || fail "tsv2trace failed"
"$IFT" report -i py.trace --json >py.json 2>err.txt || fail "report --json failed: $(cat err.txt)"
# a thread that queues work ahead of a GPU NVML measured busy: the
# gpu_bound chain by measurement, and a chain whose GPU did not wait
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train" gpubound >gb.tsv ||
	fail "starve-tsv.py gpubound failed"
"$IFT_TOOLS/tsv2trace" -o gb.trace <gb.tsv >/dev/null || fail "tsv2trace failed"
"$IFT" report -i gb.trace --json >gb.json 2>err.txt || fail "report --json failed: $(cat err.txt)"
# the same thread as rank 1 of a NCCL job whose rank 0 waits for it: one
# trace's job, and a job of two traces (the other without ranks)
python3 "$IFT_SRC/tests/e2e/starve-tsv.py" train "./train --workers 5" ranks >job.tsv ||
	fail "starve-tsv.py ranks failed"
"$IFT_TOOLS/tsv2trace" -o job.trace <job.tsv >/dev/null || fail "tsv2trace failed"
"$IFT" report -i job.trace --json >job.json 2>err.txt || fail "report --json failed: $(cat err.txt)"
"$IFT" report -i job.trace -i g.trace --json >jobs.json 2>err.txt ||
	fail "report --json of two traces failed: $(cat err.txt)"

python3 - "$IFT_SRC/docs/report.md" report.json window.json starve.json py.json job.json jobs.json gb.json <<'PY' || fail "the JSON report does not match docs/report.md"
import json, re, sys

# the key tables of docs/report.md: "### kind", then "| `key` | type | meaning |"
spec, kind = {}, None
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"^(##|###) (.+?)\s*$", line)
    if m:
        kind = m.group(2) if m.group(1) == "###" else None  # a section ends them
        continue
    m = re.match(r"^\| `([a-z0-9_]+)` \| ([a-z ]+?) \|", line)
    if m and kind:
        spec.setdefault(kind, {})[m.group(1)] = m.group(2)
for k in ("report", "trace", "op", "process", "thread", "error code", "copy", "nested op",
          "stack site", "loop", "role evidence"):
    if k not in spec:
        print("docs/report.md has no key table for", k)
        sys.exit(1)

bad = []
seen = set()
def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)
def check_type(v, t, path):
    if t.startswith("optional "):
        t = t[len("optional "):]
    if t == "integer":
        ok = is_int(v)
    elif t == "number":
        ok = (is_int(v) or isinstance(v, float))
    elif t == "string":
        ok = isinstance(v, str)
    elif t == "string or null":
        ok = v is None or isinstance(v, str)
    elif t == "integer or null":
        ok = v is None or is_int(v)
    elif t == "boolean":
        ok = isinstance(v, bool)
    elif t.endswith(" or null") and t[:-len(" or null")] in spec:
        # an object of a documented kind, or null
        ok = v is None or isinstance(v, dict)
        if ok and v is not None:
            check(v, t[:-len(" or null")], path)
    elif t in spec:
        # an object of a documented kind
        ok = isinstance(v, dict)
        if ok:
            check(v, t, path)
    elif t == "object":
        ok = isinstance(v, dict)
        if ok:
            check(v, path.rsplit(".", 1)[-1], path)
    elif t == "array":
        ok = isinstance(v, list)
    elif t == "array of strings":
        ok = isinstance(v, list) and all(isinstance(x, str) for x in v)
    elif t.startswith("array of "):
        ok = isinstance(v, list)
        for i, x in enumerate(v if ok else []):
            if not isinstance(x, dict):
                bad.append("%s[%d] is not an object" % (path, i))
            else:
                check(x, t[len("array of "):], "%s[%d]" % (path, i))
    else:
        bad.append("docs/report.md: unknown type %r for %s" % (t, path))
        return
    if not ok:
        bad.append("%s: %r is not %s" % (path, v, t))
def check(obj, kind, path):
    seen.add(kind)
    want = spec[kind]
    # evidence holds the keys that apply to its chain's kind: a documented
    # subset, always with the tasks and the CPUs
    need = {"tasks", "cpus"} if kind == "evidence" else \
        {k for k in want if not want[k].startswith("optional ")}
    for k in sorted(need - set(obj)):
        bad.append("%s: missing key %r (documented for %s)" % (path, k, kind))
    for k in sorted(set(obj) - set(want)):
        bad.append("%s: key %r is not documented for %s" % (path, k, kind))
    for k in sorted(set(want) & set(obj)):
        check_type(obj[k], want[k], path + "." + k)

r = json.load(open(sys.argv[2]))
check(r, "report", "report")
s = json.load(open(sys.argv[4]))
check(s, "report", "starve")
# the optional keys: none without Python frames, all of them with
py = json.load(open(sys.argv[5]))
check(py, "report", "py")
for name, x, want in (("report", r, False), ("starve", s, False), ("py", py, True)):
    if ("py_sites" in x) != want or any(("py_sites" in c) != want for c in x["chains"]):
        bad.append("%s: py_sites %s" % (name, "missing" if want else "present"))
# the GPU NVML measured busy 97% of each 20 ms (gb.tsv): the gpu_bound
# chain by measurement first, with that share; the on-CPU gaps' chain after
# it, LOW, its GPU busy meanwhile; the chains explain no more than the idle
gb = json.load(open(sys.argv[8]))
check(gb, "report", "gb")
st = gb["gpu"]["stages"]["steady"]
busy = 1000 * st["busy_ns"] // max(st["covered_ns"], 1)
if not gb["gpu"]["measured"] or not 965 <= busy <= 975 or \
        st["idle_ns"] != st["covered_ns"] - st["busy_ns"] or \
        st["explained_ns"] + st["unexplained_ns"] != st["idle_ns"]:
    bad.append("gb: the steady state %r, busy %d permille, not 970" % (st, busy))
ch = gb["chains"]
if [c["cause"] for c in ch] != ["gpu_bound", "data_starvation"] or \
        abs(ch[0]["evidence"].get("gpu_busy_permille", 0) - 970) > 5 or \
        ch[0]["gpu"]["not_waiting"] or not ch[1]["gpu"]["not_waiting"] or \
        ch[1]["severity"] != "LOW" or \
        sum(c["gpu"]["idle_ns"] for c in ch if c["stage"] == "steady") != st["explained_ns"]:
    bad.append("gb: chains %r" % [(c["cause"], c["severity"], c["evidence"].get("gpu_busy_permille"),
                                   c.get("gpu")) for c in ch])
# a job: rank 0 (pid 300) entered each of 49 all-reduces 5 ms before rank 1
# (pid 100), which came 20 us before its copy and left 10 us before it
job = json.load(open(sys.argv[6]))
check(job, "report", "job")
jobs = json.load(open(sys.argv[7]))
check(jobs, "job report", "jobs")
for name, j in (("job", job.get("job")), ("jobs", jobs.get("job"))):
    st = (j or {}).get("stragglers") or [{}]
    if not j or j["collectives"] != 49 or st[0].get("rank") != 1 or st[0].get("pid") != 100 or \
            st[0].get("cost_ns") != 49 * (5000000 - 20000) or \
            (st[0].get("cause") or {}).get("cause") != "data_starvation":
        bad.append("%s: job %r" % (name, j and {k: j[k] for k in ("collectives", "stragglers")}))
if [t["path"] for t in jobs["traces"]] != ["job.trace", "g.trace"] or "job" in jobs["traces"][0]["report"]:
    bad.append("jobs: traces %r" % [t["path"] for t in jobs["traces"]])
# every kind of object was exercised: errors, copies, nested driver calls,
# chains with their timeline, evidence and tasks
for k in spec:
    if k not in seen:
        bad.append("the reports had no %s to check" % k)
ch = [c for c in s["chains"] if c["cause"] == "data_starvation"]
if len(ch) != 1:
    bad.append("starve: want one data_starvation chain, got %r" % [c["cause"] for c in s["chains"]])
else:
    c = ch[0]
    # 49 gaps of 5.1 ms: 5 ms - 2 us blocked until a worker woke the thread,
    # 100 us on CPU
    if c["cost_ns"] != 49 * (5000000 - 2000) + 49 * 100000 or c["tid"] != 101 or \
            c["op"] != "cudaMemcpy" or c["evidence"]["fed_ns"] != 49 * (5000000 - 2000):
        bad.append("starve: chain %r" % {k: c[k] for k in ("cost_ns", "tid", "op")})
    if c["severity"] != "HIGH" or c["phase"] != "before":
        bad.append("starve: severity %s phase %s" % (c["severity"], c["phase"]))
    woke = [x for x in c["evidence"]["tasks"] if x["relation"] == "woke"]
    if not woke or woke[0]["tid"] != 200 or woke[0]["role"] != "input worker":
        bad.append("starve: the waker should be worker 200: %r" % woke[:1])
    # five processes named pt_data_worker, one of them (200) feeds: names
    # never decide alone; it sleeps most of the time, so the fix is more
    # batches in flight
    if c["evidence"]["workers"] != 1:
        bad.append("starve: %d input workers, only 200 fed" % c["evidence"]["workers"])
    if not any("prefetch_factor" in x for x in c["recommendations"]):
        bad.append("starve: a blocked worker and no prefetch_factor in %r" % c["recommendations"])
    # every other copy from each of the two sites: the gaps before them
    sites = sorted((x["stack_id"], x["calls"]) for x in c["sites"])
    if sites != [(1, 24), (2, 25)] or sum(x["cost_ns"] for x in c["sites"]) != c["cost_ns"] \
            or not all(x["frames"][0].startswith("cudaMemcpy+0x0") for x in c["sites"]):
        bad.append("starve: chain sites %r" % c["sites"])
    ts = [x["t_ns"] for x in c["timeline"]]
    if ts != sorted(ts) or not ts:
        bad.append("starve: timeline not in time order: %r" % ts)
for c in r["chains"]:
    if c["severity"] not in ("HIGH", "MEDIUM", "LOW"):
        bad.append("chain severity %r" % c["severity"])
    if c["sites"]:
        bad.append("gentrace has no stacks, yet chain sites %r" % c["sites"][:1])
t = r["trace"]
if t["events"] < 60000:
    bad.append("trace.events %d, gentrace wrote at least 60000" % t["events"])
if t["from_ns"] != 0 or t["to_ns"] != t["duration_ns"]:
    bad.append("whole trace: from_ns %d to_ns %d duration_ns %d" % (t["from_ns"], t["to_ns"], t["duration_ns"]))
if len(r["processes"]) <= 10:
    bad.append("expected more than 10 processes, got %d" % len(r["processes"]))
for p in r["processes"]:
    if p["context_switches"] != p["involuntary_switches"] + p["voluntary_switches"]:
        bad.append("pid %d: switches do not add up" % p["pid"])
    if p["cuda_ns"] and p["role"] != "cuda process":
        bad.append("pid %d makes CUDA calls but its role is %r" % (p["pid"], p["role"]))
for o in r["ops"]:
    if not (o["min_ns"] <= o["p50_ns"] <= o["p95_ns"] <= o["p99_ns"] <= o["max_ns"]):
        bad.append("op %s: percentiles out of order" % o["op"])
    if o["errors"] != sum(e["calls"] for e in o["error_codes"]):
        bad.append("op %s: errors by code do not add up" % o["op"])

w = json.load(open(sys.argv[3]))
check(w, "report", "window")
wt = w["trace"]
if (wt["from_ns"], wt["to_ns"], wt["duration_ns"]) != (20000000, 60000000, 40000000):
    bad.append("window: from %d to %d duration %d" % (wt["from_ns"], wt["to_ns"], wt["duration_ns"]))
if not 0 < wt["events"] < t["events"]:
    bad.append("window: %d events of %d" % (wt["events"], t["events"]))

for b in bad[:20]:
    print(b)
sys.exit(1 if bad else 0)
PY

# text: every mode fits 100 columns (characters, not bytes: µ and ↳ are one)
for mode in "-i g.trace" "-i g.trace --threads" "-i g.trace --per-process" \
	"-i g.trace --per-process --threads" "-i g.trace --op cudaMemcpyAsync" \
	"-i g.trace --pid 4242 --from 10ms" "-i g.trace --diff starve.trace" "-i starve.trace" \
	"-i starve.trace --diff g.trace" "-i py.trace" "-i py.trace --per-process --threads" \
	"-i job.trace" "-i job.trace -i g.trace" "-i job.trace -i g.trace --per-process --threads" \
	"-i job.trace -i g.trace --diff job.trace" "-i job.trace --diff job.trace --diff g.trace"; do
	"$IFT" report $mode >text.txt 2>err.txt || fail "report $mode failed: $(cat err.txt)"
	[ -s text.txt ] || fail "report $mode printed nothing"
	python3 - text.txt "$mode" <<'PY' || fail "report $mode: lines wider than 100 columns"
import sys
bad = [l for l in open(sys.argv[1], encoding="utf-8").read().split("\n") if len(l) > 100]
for l in bad[:5]:
    print("%d columns: %s" % (len(l), l))
sys.exit(1 if bad else 0)
PY
done
"$IFT" report -i g.trace >text.txt
grep -q '^CUDA ops' text.txt || fail "no op table: $(cat text.txt)"
grep -q 'processes by CUDA time (top 10 of' text.txt || fail "no ranking by CUDA time"
grep -q 'processes by off-CPU time (top 10 of' text.txt || fail "no ranking by off-CPU time"
grep -q '↳ cuLaunchKernel' text.txt || fail "the nested driver call is not under its runtime call"
! grep -q 'called from:' text.txt || fail "call sites of chains in a trace without stacks"
"$IFT" report -i starve.trace >text.txt
grep -q '^    called from: #2 51% (25 gaps)  \[unknown\] 0x7f0012345678$' text.txt ||
	fail "no call site under the chain: $(cat text.txt)"
! grep -q 'Python' text.txt || fail "Python in the report of a trace without Python frames"
"$IFT" report -i py.trace >text.txt
grep -q '^    in Python:   torch/utils/data/dataloader.py:631 in _BaseDataLoaderIter.__next__ 67% (26 gaps)$' \
	text.txt || fail "no line of Python under the chain: $(cat text.txt)"
grep -q '^cudaMemcpy: 50 calls, 50 with a stack; Python frames: 40 in flight, 10 late (dropped)$' \
	text.txt || fail "no Python call sites of cudaMemcpy: $(cat text.txt)"

# usage errors exit 2, a missing file 1, each with one line on stderr
for args in "--from abc" "--from 2s --to 1s" "--pid x" "--to" "--bogus" "extra" \
	"--tail-ratio 0.5" "--tail-ratio x" "--tail-floor 1q" "--diff" \
	"-i job.trace --html x.html" "-i job.trace -i g.trace --html x.html"; do
	"$IFT" report -i g.trace $args >/dev/null 2>err.txt; rc=$?
	[ $rc = 2 ] || fail "report $args exited $rc, want 2"
done
# a directory is its traces in name order; one that holds none is no job
mkdir -p jobdir empty
cp job.trace jobdir/a.trace && cp g.trace jobdir/b.trace && cp g.trace jobdir/.hidden.trace
"$IFT" report --json -i jobdir >dir.json 2>err.txt || fail "report -i DIR failed"
# the hidden one is left out, and said to be
grep -q "'jobdir': 1 hidden trace left out (.hidden.trace)" err.txt ||
	fail "report -i DIR left .hidden.trace out without a word: $(cat err.txt)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit([t["path"] for t in d["traces"]] != ["jobdir/a.trace", "jobdir/b.trace"] or not d["job"])' dir.json ||
	fail "report -i DIR: $(head -c 300 dir.json)"
"$IFT" report -i empty -i g.trace >/dev/null 2>err.txt || fail "an empty directory beside a trace failed: $(cat err.txt)"
grep -q "holds no \*.trace file" err.txt || fail "no warning of the empty directory: $(cat err.txt)"
# --diff of jobs: the job of two traces against one trace's, the same ranks
"$IFT" report -i job.trace -i g.trace --diff job.trace --json >jobdiff.json || fail "job --diff --json failed"
python3 - jobdiff.json <<'PY' || fail "job --diff --json is not as documented"
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"baseline", "current", "changes"}, set(d)
assert set(d["baseline"]) == {"job", "traces"} and len(d["current"]["traces"]) == 2, d.keys()
c = d["changes"]
assert set(c) == {"ranks", "collectives", "waited_ns", "rank_changes"}, set(c)
# rank 0 waits its whole 4.99 ms inside; rank 1 cost it the 4.98 ms to its entry
w = 49 * (5000000 - 20000)
assert c["waited_ns"] == {"baseline": 49 * 4990000, "current": 49 * 4990000, "ratio": 1.0}, \
    c["waited_ns"]
assert [(r["rank"], r["cost_ns"]["current"]) for r in c["rank_changes"]] == [(0, 0), (1, w)], \
    c["rank_changes"]
PY
"$IFT" report -i job.trace -i g.trace --diff job.trace >jobdiff.txt || fail "job --diff failed"
grep -q "^waiting in collectives  *244.5ms -> 244.5ms (1.00x)" jobdiff.txt &&
	grep -q "^first straggler  *rank 1 (244.0ms, data_starvation) -> rank 1" jobdiff.txt ||
	fail "job --diff: $(cat jobdiff.txt)"
# two processes claiming one rank are not one job: an error, not a guess
expect_one_line_error "$IFT" report -i job.trace -i jobdir/a.trace >/dev/null
expect_one_line_error "$IFT" report -i missing.trace >/dev/null
expect_one_line_error "$IFT" report -i g.trace --diff missing.trace >/dev/null
"$IFT" report -i g.trace --diff missing.trace >/dev/null 2>&1; [ $? = 1 ] || fail "a missing baseline should exit 1"

# --diff: the same tables side by side, with the change
"$IFT" report -i starve.trace --diff g.trace >diff.txt 2>err.txt || fail "report --diff failed: $(cat err.txt)"
grep -q '^wall time  *2.64s -> 261.9ms (0.10x)' diff.txt || fail "--diff: no wall-time change: $(head -20 diff.txt)"
grep -q '^cudaMemcpy  *0 -> 50 ' diff.txt || fail "--diff: cudaMemcpy only in the current trace: $(cat diff.txt)"
"$IFT" report -i starve.trace --diff g.trace --json >diff.json || fail "report --diff --json failed"
python3 - diff.json <<'PY' || fail "--diff --json is not as documented"
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"baseline", "current", "changes"}, set(d)
c = d["changes"]
assert c["duration_ns"]["current"] == d["current"]["trace"]["duration_ns"]
assert c["duration_ns"]["baseline"] == d["baseline"]["trace"]["duration_ns"]
ops = {o["op"]: o for o in c["ops"]}
assert ops["cudaMemcpy"]["calls"] == {"baseline": 0, "current": 50}, ops["cudaMemcpy"]
assert ops["cudaStreamSynchronize"]["calls"]["current"] == 0
assert any(x["cause"] == "data_starvation" for x in d["current"]["chains"])
PY
"$IFT" report -i missing.trace >/dev/null 2>&1; [ $? = 1 ] || fail "a missing trace should exit 1"

# an unprivileged user can read a trace: report needs nothing else
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 . && chmod 644 g.trace
	setpriv --reuid=65534 --regid=65534 --clear-groups "$IFT" report -i "$PWD/g.trace" --json \
		>nobody.json 2>err.txt || fail "report as nobody failed: $(cat err.txt)"
	cmp -s nobody.json report.json || fail "report as nobody differs from report as root"
elif [ "$(id -u)" = 0 ]; then
	skip_part "report as nobody: no setpriv"
else
	skip_part "report as nobody: not root, cannot switch users"
fi
exit 0
