#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a `export --format perfetto` file against the rules of the Trace
Event Format and of Perfetto's JSON importer, and against the trace it came
from, read on another path (`dump --json`, `info`).

    perfetto_check.py IFT TRACE OUT.json [--no-chains]

The format rules (docs/perfetto.md says where each comes from):
  - one JSON object (no NaN or Infinity); its keys only those Perfetto's
    importer knows, traceEvents first (it stops at a key it does not know);
  - every event has the fields its phase needs: M (pid, tid, args.name or
    args.sort_index), X (name, ts, dur >= 0, pid, tid), C (name, ts, pid,
    numeric args), i (name, ts, pid, tid, s in g/p/t); no other phase;
  - ts and dur are microseconds: every event lies inside the trace's span
    read from the dump in ns, and each slice's dur is its call's dur_ns;
  - slices of one thread nest strictly: two either are disjoint or one holds
    the other;
  - every pid and tid an event uses is named by an M event;
  - systemTraceEvents holds ftrace text lines Perfetto's systrace tokenizer
    matches, with args it can split (no space or '=' inside a value).
And exactly once: every call of the calls table is one X slice (same thread,
entry ns and op), every row of switches one sched_switch line, every row of
wakeups one wake-up line (same ts, CPU, tasks); the page_allocs counter
integrates to the number of page allocations.
"""
import collections
import json
import re
import subprocess
import sys

KEYS = ["traceEvents", "systemTraceEvents", "otherData", "metadata", "displayTimeUnit"]
# Perfetto's SystraceLineTokenizer, as a Python regex
LINE = re.compile(r"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*[a-zA-Z0-9.]{0,4}\s+(\d+\.\d+):\s+(\S+):")
STATE = re.compile(r"^(R\+?|[SDTtXZPIKWNx](\|[SDTtXZPIKWNx])*)$")

problems = []


def bad(msg):
    problems.append(msg)
    if len(problems) <= 20:
        print("perfetto_check: " + msg)


def run(*args):
    return subprocess.run(args, check=True, stdout=subprocess.PIPE).stdout.decode()


def dump(ift, trace, table):
    return [json.loads(l) for l in run(ift, "dump", "--json", "-i", trace, "--table", table).splitlines()]


def table_counts(ift, trace):
    counts, on = {}, False
    for line in run(ift, "info", "-i", trace).splitlines():
        f = line.split()
        if f[:2] == ["table", "events"]:
            on = True
        elif on and f and f[0] == "total":
            break
        elif on and len(f) == 5:
            counts[f[0]] = int(f[1].replace(",", ""))
    return counts


def ns(us):
    """Microseconds (a JSON number) to integer ns, as an importer would."""
    return int(round(us * 1000))


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_id(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def reject_constant(name):
    raise ValueError("%s is not JSON" % name)


def check_events(evs, lo_ns, hi_ns):
    named_p, named_t, used = set(), set(), set()
    slices = collections.defaultdict(list)
    counters = collections.defaultdict(list)
    phases = collections.Counter()
    for i, e in enumerate(evs):
        where = "traceEvents[%d]" % i
        if not isinstance(e, dict):
            bad("%s is not an object" % where)
            continue
        ph = e.get("ph")
        phases[ph] += 1
        if ph not in ("M", "X", "C", "i"):
            bad("%s: phase %r is not one this export writes" % (where, ph))
            continue
        if not is_id(e.get("pid")) or (ph != "C" and not is_id(e.get("tid"))):
            bad("%s: pid/tid missing or not integers: %r" % (where, e))
            continue
        if not isinstance(e.get("name"), str) or not e["name"]:
            bad("%s: no name" % where)
        if ph == "M":
            a = e.get("args")
            if e.get("name") in ("process_name", "thread_name"):
                if not isinstance(a, dict) or not isinstance(a.get("name"), str):
                    bad("%s: %s without args.name" % (where, e.get("name")))
                elif e["name"] == "process_name":
                    named_p.add(e["pid"])
                else:
                    named_t.add((e["pid"], e["tid"]))
            elif e.get("name") == "process_sort_index":
                if not isinstance(a, dict) or not isinstance(a.get("sort_index"), int):
                    bad("%s: process_sort_index without an integer args.sort_index" % where)
            else:
                bad("%s: unknown metadata %r" % (where, e.get("name")))
            continue
        if not is_num(e.get("ts")):
            bad("%s: ts missing or not a number" % where)
            continue
        t = ns(e["ts"])
        if not lo_ns <= t <= hi_ns:
            bad("%s: ts %r us (%d ns) outside the trace [%d, %d] ns: not microseconds?" %
                (where, e["ts"], t, lo_ns, hi_ns))
        used.add((e["pid"], e.get("tid")))
        if ph == "X":
            if not is_num(e.get("dur")) or e["dur"] < 0:
                bad("%s: X without a dur >= 0" % where)
                continue
            end = ns(e["ts"] + e["dur"])
            if end > hi_ns:
                bad("%s: ends at %d ns, after the trace's %d" % (where, end, hi_ns))
            a = e.get("args", {})
            d = ns(e["dur"])
            if not a.get("clamped_to_parent") and abs(d - a.get("dur_ns", -10)) > 1:
                bad("%s: dur %r us is not its call's %r ns" % (where, e["dur"], a.get("dur_ns")))
            slices[(e["pid"], e["tid"])].append((t, end, i))
        elif ph == "C":
            a = e.get("args")
            if not isinstance(a, dict) or not a or not all(is_num(v) for v in a.values()):
                bad("%s: counter args must be numbers: %r" % (where, a))
                continue
            for k, v in a.items():
                counters[(e["pid"], e["name"], k)].append((t, v))
        elif ph == "i":
            if e.get("s") not in ("g", "p", "t"):
                bad("%s: instant scope %r" % (where, e.get("s")))
    for pid, tid in used:
        if pid not in named_p:
            bad("pid %d has no process_name" % pid)
        if tid is not None and tid != pid and (pid, tid) not in named_t:
            bad("thread %d/%d has no thread_name" % (pid, tid))
    # strict nesting: by start, the longer first; every slice ends inside
    # the one that holds it
    for key, v in slices.items():
        v.sort(key=lambda s: (s[0], -s[1], s[2]))
        stack = []
        for s, e, i in v:
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack and e > stack[-1][1]:
                bad("thread %d/%d: slice traceEvents[%d] [%d, %d] overlaps traceEvents[%d] "
                    "[%d, %d] without nesting" % (key + (i, s, e) + stack[-1][2:] + stack[-1][:2]))
            stack.append((s, e, i))
    return phases, counters


def parse_line(line):
    m = LINE.search(line)
    if not m:
        return None
    args = {}
    for tok in line[m.end():].split():
        if "=" not in tok:
            continue
        parts = [p for p in tok.split("=") if p]
        if len(parts) == 2:
            args[parts[0]] = parts[1]
        elif len(parts) > 2:
            return None    # Perfetto would keep the last piece only
    return {"task": line[:m.start()].strip(), "pid": int(m.group(1)), "tgid": m.group(2),
            "cpu": int(m.group(3)), "ts": m.group(4), "event": m.group(5), "args": args}


def sec_ns(s):
    whole, frac = s.split(".")
    return int(whole) * 10**9 + int((frac + "000000000")[:9])


def check_sched(text, switches, wakeups):
    if not isinstance(text, str):
        bad("systemTraceEvents is not a string")
        return
    got_sw, got_wk = collections.Counter(), collections.Counter()
    for n, line in enumerate(text.split("\n"), 1):
        if not line or line.startswith("#"):
            continue
        p = parse_line(line)
        if not p:
            bad("systemTraceEvents line %d does not parse as ftrace text: %s" % (n, line[:160]))
            continue
        a, ts = p["args"], sec_ns(p["ts"])
        if len(p["ts"].split(".")[1]) != 9:
            bad("line %d: ts %s has not 9 decimals (ns)" % (n, p["ts"]))
        if p["event"] == "sched_switch":
            need = ("prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid",
                    "next_prio")
            if not all(k in a for k in need) and not all(k in a for k in need if "comm" not in k):
                bad("line %d: sched_switch without %s: %s" % (n, need, line[:160]))
                continue
            if not STATE.match(a["prev_state"]):
                bad("line %d: prev_state %r" % (n, a["prev_state"]))
            if int(a["prev_pid"]) != p["pid"]:
                bad("line %d: the line's task is not prev_pid" % n)
            got_sw[(ts, p["cpu"], int(a["prev_pid"]), int(a["next_pid"]))] += 1
        elif p["event"] in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
            if "pid" not in a or "target_cpu" not in a:
                bad("line %d: %s without pid or target_cpu" % (n, p["event"]))
                continue
            got_wk[(ts, p["event"], int(a["pid"]), p["pid"])] += 1
        else:
            bad("line %d: unexpected event %s" % (n, p["event"]))
    want_sw = collections.Counter((s["ts"], s["cpu"], s["tid"], s["next_tid"]) for s in switches)
    want_wk = collections.Counter((w["ts"], w["event"], w["tid"], w.get("waker_tid", 0))
                                  for w in wakeups)
    for name, got, want in (("switches", got_sw, want_sw), ("wake-ups", got_wk, want_wk)):
        if got != want:
            missing, extra = want - got, got - want
            bad("%s: %d in the trace, %d lines; %d missing (e.g. %s), %d extra (e.g. %s)" %
                (name, sum(want.values()), sum(got.values()), sum(missing.values()),
                 list(missing)[:2], sum(extra.values()), list(extra)[:2]))


def main():
    ift, trace, out = sys.argv[1:4]
    with open(out, "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw.decode("utf-8"), parse_constant=reject_constant)
    except ValueError as e:
        bad("%s is not JSON (UTF-8): %s" % (out, e))
        return 1
    if not isinstance(doc, dict):
        bad("the top level is not an object")
        return 1
    keys = list(doc)
    if keys[:1] != ["traceEvents"] or any(k not in KEYS for k in keys):
        bad("top-level keys %s: traceEvents first, then only %s" % (keys, KEYS))
    if "displayTimeUnit" in doc:
        bad("displayTimeUnit: Perfetto reads it as the unit of ts")

    calls = dump(ift, trace, "calls")
    switches = dump(ift, trace, "switches")
    wakeups = dump(ift, trace, "wakeups")
    counts = table_counts(ift, trace)
    stamps = [e["ts"] for e in calls + switches + wakeups]
    ends = [c["ts"] + c["dur_ns"] for c in calls]
    info = run(ift, "info", "-i", trace)
    m = re.search(r"time span:\s+(\d+)\.(\d{9}) \.\. (\d+)\.(\d{9})", info)
    if m:
        stamps += [int(m.group(1)) * 10**9 + int(m.group(2)),
                   int(m.group(3)) * 10**9 + int(m.group(4))]
    # the recording's own window may start before its first event
    for key in ("record.start_ns", "record.stop_ns"):
        m = re.search(r"^%s\s+(\d+)$" % re.escape(key), info, re.M)
        if m:
            stamps.append(int(m.group(1)))
    lo, hi = min(stamps), max(stamps + ends)

    evs = doc.get("traceEvents", [])
    phases, counters = check_events(evs, lo, hi)
    print("perfetto_check: %d events %s, %d sched lines" %
          (len(evs), dict(phases), doc.get("systemTraceEvents", "").count("\n")))

    # every call exactly once
    want = collections.Counter((c["tid"], c["ts"], c["event"]) for c in calls)
    got = collections.Counter((e["tid"], ns(e["ts"]), e["name"]) for e in evs
                              if isinstance(e, dict) and e.get("ph") == "X")
    if got != want:
        missing, extra = want - got, got - want
        bad("calls: %d in the trace, %d slices; %d missing (e.g. %s), %d extra (e.g. %s)" %
            (len(calls), sum(got.values()), sum(missing.values()), list(missing)[:3],
             sum(extra.values()), list(extra)[:3]))
    check_sched(doc.get("systemTraceEvents"), switches, wakeups)

    # the page-allocation rate integrates to the allocations
    pts = sorted(v for k, v in counters.items() if k[1] == "page_allocs" for v in v)
    total = sum(v * (pts[i + 1][0] - t) / 1e9 for i, (t, v) in enumerate(pts[:-1]))
    pages = counts.get("page_allocs", 0)
    if pts and pts[-1][1] != 0:
        bad("page_allocs counter does not end at 0")
    if abs(total - pages) > max(0.5, pages * 1e-9):
        bad("page_allocs counter integrates to %.3f, the trace has %d" % (total, pages))
    if counts.get("samples", 0) and not any(k[1] == "cpu.busy" for k in counters):
        bad("samples in the trace but no cpu.busy counter")

    if "--no-chains" not in sys.argv:
        report = json.loads(run(ift, "report", "--json", "-i", trace))
        inst = [e for e in evs if isinstance(e, dict) and e.get("ph") == "i"]
        if len(inst) != len(report["chains"]):
            bad("%d chain instants, the report has %d chains" % (len(inst), len(report["chains"])))
        for e, c in zip(inst, report["chains"]):
            a = e.get("args", {})
            if (a.get("summary"), a.get("cause"), a.get("severity")) != \
               (c["summary"], c["cause"], c["severity"]):
                bad("chain instant %r is not the report's %s %s" % (e.get("name"), c["severity"],
                                                                     c["cause"]))
    if problems:
        print("perfetto_check: %d problems" % len(problems))
        return 1
    print("perfetto_check: ok: %d calls, %d switches, %d wake-ups, %d page allocations" %
          (len(calls), len(switches), len(wakeups), pages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
