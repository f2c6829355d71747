#!/usr/bin/env bash
# dump --json: one valid JSON object a line, one line an event, in time order,
# with the fields each kind of event promises; the text dump and --table agree.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 to parse JSON"

gen=$("$IFT_TOOLS/gentrace" -n 20000 -s 11 --chunk-rows 1000) || fail "gentrace failed"
read -r _ events _ <<<"$gen"

"$IFT" info >info.out 2>&1 || fail "info failed: $(cat info.out)"
awk '
	$1 == "table" && $2 == "events" { on = 1; next }
	on && $1 == "total" { exit }
	on && NF == 5 { gsub(",", "", $2); print $1, $2 }
' info.out >tables
[ "$(grep -c . tables)" = 8 ] || fail "cannot read the table counts of info: $(cat info.out)"

"$IFT" dump --json >dump.json 2>dump.err; rc=$?
[ $rc -eq 0 ] || fail "dump --json exited $rc: $(cat dump.err)"
[ ! -s dump.err ] || fail "dump --json wrote to stderr: $(cat dump.err)"
lines=$(wc -l <dump.json)
[ "$lines" = "$events" ] || fail "dump --json printed $lines lines for $events events"

python3 - dump.json tables <<'PY' || fail "the JSON dump is wrong (see above)"
import json, sys

# event name -> table, for every event the synthetic workload writes
table_of = {
    "sched_switch": "switches",
    "sched_waking": "wakeups", "sched_wakeup": "wakeups", "sched_wakeup_new": "wakeups",
    "mm_page_alloc": "page_allocs",
    "sched_process_fork": "tasks", "sched_process_exec": "tasks",
    "sched_process_exit": "tasks", "task_rename": "tasks",
    "sample": "samples", "gpu_sample": "gpu_samples",
}
# CUDA ops gentrace declares, with their argument names
op_args = {
    "cudaMemcpyAsync": ["dst", "src", "bytes", "kind", "stream"],
    "cudaLaunchKernel": ["func", "stream"],
    "cudaStreamSynchronize": ["stream"],
    "cuLaunchKernel": ["func", "stream"],
}
expect = {}
for line in open(sys.argv[2]):
    name, n = line.split()
    expect[name] = int(n)

bad = 0
def err(lineno, msg, line):
    global bad
    bad += 1
    if bad <= 10:
        print(f"dump.json:{lineno}: {msg}: {line.rstrip()[:200]}")

count = {t: 0 for t in expect}
seen_ops = set()
last_ts = -1
with open(sys.argv[1], "rb") as f:
    for lineno, raw in enumerate(f, 1):
        try:
            ev = json.loads(raw)
        except ValueError as e:
            err(lineno, f"not JSON ({e})", raw.decode(errors="replace"))
            continue
        if not isinstance(ev, dict):
            err(lineno, "not an object", raw.decode())
            continue
        missing = [k for k in ("ts", "cpu", "pid", "tid", "event") if k not in ev]
        if missing:
            err(lineno, f"missing {missing}", raw.decode())
            continue
        if not all(isinstance(ev[k], int) and ev[k] >= 0 for k in ("ts", "cpu", "pid", "tid")):
            err(lineno, "ts, cpu, pid, tid must be non-negative integers", raw.decode())
        if ev["ts"] < last_ts:
            err(lineno, f"ts goes back from {last_ts}", raw.decode())
        last_ts = ev["ts"]
        name = ev["event"]
        if name in op_args:
            seen_ops.add(name)
            count["calls"] += 1
            need = ["dur_ns", "ret"] + op_args[name]
            missing = [k for k in need if k not in ev]
            if missing:
                err(lineno, f"call without {missing}", raw.decode())
            elif not all(isinstance(ev[k], int) for k in need):
                err(lineno, "call fields must be integers", raw.decode())
            api = "driver" if name.startswith("cu") and not name.startswith("cuda") else "runtime"
            if ev.get("api") != api:
                err(lineno, f"api should be {api}", raw.decode())
        elif name in table_of:
            count[table_of[name]] += 1
        else:
            err(lineno, f"unknown event {name!r}", raw.decode())
        if name == "sched_switch" and not all(k in ev for k in ("prev_state", "next_pid", "next_tid")):
            err(lineno, "sched_switch without prev_state/next_pid/next_tid", raw.decode())
        if name == "mm_page_alloc" and "order" not in ev:
            err(lineno, "mm_page_alloc without order", raw.decode())

if "cudaMemcpyAsync" not in seen_ops:
    print("no cudaMemcpyAsync in the dump")
    bad += 1
for t, n in expect.items():
    if count[t] != n:
        print(f"table {t}: info says {n} events, dump --json has {count[t]}")
        bad += 1
if bad:
    print(f"{bad} problems")
    sys.exit(1)
PY

# text: one line an event too
"$IFT" dump >dump.txt 2>dump.err || fail "dump failed: $(cat dump.err)"
[ "$(wc -l <dump.txt)" = "$events" ] || fail "text dump has $(wc -l <dump.txt) lines, --json $events"
grep -q ' cudaMemcpyAsync: dur=[0-9]* ret=-\?[0-9]* dst=[^ ]* src=[^ ]* bytes=[^ ]* kind=[^ ]* stream=[^ ]' dump.txt ||
	fail "no cudaMemcpyAsync line with its arguments in the text dump"

# --table: one table only, all of it
switches=$(awk '$1 == "switches" { print $2 }' tables)
"$IFT" dump --json --table switches >sw.json 2>dump.err || fail "dump --table switches failed: $(cat dump.err)"
[ "$(wc -l <sw.json)" = "$switches" ] || fail "dump --table switches printed $(wc -l <sw.json) lines, info says $switches"
other=$(grep -vc '"event":"sched_switch"' sw.json)
[ "$other" = 0 ] || fail "dump --table switches printed $other other events: $(grep -vm1 '"event":"sched_switch"' sw.json)"
"$IFT" dump --table switches >sw.txt 2>dump.err || fail "text dump --table switches failed: $(cat dump.err)"
[ "$(grep -c ': sched_switch: ' sw.txt)" = "$switches" ] || fail "text dump --table switches: wrong lines"
[ "$(wc -l <sw.txt)" = "$switches" ] || fail "text dump --table switches has other lines"

# two tables at once
calls=$(awk '$1 == "calls" { print $2 }' tables)
"$IFT" dump --json --table calls,switches >two.json || fail "dump --table calls,switches failed"
[ "$(wc -l <two.json)" = $((calls + switches)) ] || fail "dump --table calls,switches: $(wc -l <two.json) lines, want $((calls + switches))"
exit 0
