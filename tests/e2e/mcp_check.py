# SPDX-License-Identifier: MIT
"""A scripted MCP client for the e2e tests: runs `ingero-ftrace mcp` over
pipes, one JSON-RPC message per line, and checks what comes back.

  mcp_check.py protocol IFT TRACE             lifecycle, versions, errors, framing
  mcp_check.py tools IFT TRACE REPORT.json    every tool, against report --json
  mcp_check.py stacks IFT TRACE REPORT.json EXPECT.json PLAIN
                                              get_stacks on a trace with call
                                              sites (sites-tsv.py), and on PLAIN,
                                              one without

Prints what it measured (bytes and ms per tool) and exits 1 on the first
mismatch, saying which."""
import json
import os
import subprocess
import sys
import time

VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
TOOLS = {"get_trace_stats", "get_causal_chains", "get_per_process_breakdown",
         "get_op_latency", "get_slow_calls", "get_stacks", "get_profile", "get_timeline",
         "run_sql"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


class Server:
    def __init__(self, ift, trace):
        self.p = subprocess.Popen([ift, "mcp", "-i", trace], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 1

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def read(self):
        line = self.p.stdout.readline()
        if not line:
            fail("the server closed stdout (stderr: %s)" % self.p.stderr.read()[-500:])
        if not line.endswith(b"\n"):
            fail("an answer without its newline")
        try:
            msg = json.loads(line)
        except ValueError:
            fail("stdout carries something that is not JSON: %r" % line[:200])
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            fail("not a JSON-RPC 2.0 message: %r" % line[:200])
        self.last_bytes = len(line)
        return msg

    def request(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        t0 = time.monotonic()
        self.send_raw(json.dumps(msg).encode() + b"\n")
        r = self.read()
        self.last_ms = (time.monotonic() - t0) * 1000
        if r.get("id") != rid:
            fail("answer id %r for request %r" % (r.get("id"), rid))
        return r

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def init(self, version="2025-11-25"):
        r = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "mcp_check", "version": "1"}})
        self.notify("notifications/initialized")
        return r

    def call(self, name, args=None, error=False):
        r = self.request("tools/call", {"name": name, "arguments": args or {}})
        if "result" not in r:
            fail("%s %r: a protocol error %r" % (name, args, r.get("error")))
        res = r["result"]
        if bool(res.get("isError")) != error:
            fail("%s %r: isError %r: %s" % (name, args, res.get("isError"),
                                            res["content"][0]["text"][:300]))
        if not res["content"] or res["content"][0]["type"] != "text":
            fail("%s: no text content" % name)
        return res

    def close(self):
        self.p.stdin.close()
        try:
            rc = self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            fail("the server did not exit when stdin closed")
        rest = self.p.stdout.read()
        if rest:
            fail("stdout after the last answer: %r" % rest[:200])
        if rc != 0:
            fail("the server exited %d when stdin closed" % rc)


def expect_error(r, code, what):
    if "error" not in r or r["error"].get("code") != code:
        fail("%s: expected error %d, got %r" % (what, code, r))


def protocol(ift, trace):
    for v in VERSIONS + ["1999-01-01", "2026-12-31"]:
        s = Server(ift, trace)
        r = s.init(v)["result"]
        want = v if v in VERSIONS else VERSIONS[-1]
        if r["protocolVersion"] != want:
            fail("asked %s, got %s (want %s)" % (v, r["protocolVersion"], want))
        if "tools" not in r["capabilities"] or "prompts" not in r["capabilities"]:
            fail("capabilities %r" % r["capabilities"])
        if r["serverInfo"]["name"] != "ingero-ftrace" or not r["serverInfo"]["version"]:
            fail("serverInfo %r" % r["serverInfo"])
        # the notification got no answer: the next answer is the ping's
        if s.request("ping")["result"] != {}:
            fail("ping")
        tools = s.request("tools/list")["result"]["tools"]
        if {t["name"] for t in tools} != TOOLS:
            fail("tools/list: %r" % [t["name"] for t in tools])
        for t in tools:
            if t["inputSchema"].get("type") != "object" or not t["description"]:
                fail("tool %s: inputSchema %r" % (t["name"], t["inputSchema"]))
            if ("outputSchema" in t) != (want >= "2025-06-18"):
                fail("%s: outputSchema with version %s" % (t["name"], want))
        res = s.call("get_trace_stats")
        if ("structuredContent" in res) != (want >= "2025-06-18"):
            fail("structuredContent with version %s" % want)
        s.close()
    print("versions: %s answered, unknown ones get %s" % (", ".join(VERSIONS), VERSIONS[-1]))

    s = Server(ift, trace)
    s.init()
    p = s.request("prompts/list")["result"]["prompts"]
    if [x["name"] for x in p] != ["investigate"]:
        fail("prompts/list %r" % p)
    g = s.request("prompts/get", {"name": "investigate",
                                  "arguments": {"question": "why is step 3 slow?"}})["result"]
    text = g["messages"][0]["content"]["text"]
    for word in ["get_trace_stats", "get_causal_chains", "get_slow_calls", "get_stacks",
                 "quote only numbers", "why is step 3 slow?"]:
        if word not in text:
            fail("prompt investigate lacks %r" % word)
    if text.index("get_trace_stats") > text.index("get_causal_chains"):
        fail("investigate: stats must come before chains")
    expect_error(s.request("prompts/get", {"name": "nope"}), -32602, "unknown prompt")
    expect_error(s.request("prompts/get", {"name": "investigate", "arguments": {"x": "1"}}),
                 -32602, "unknown prompt argument")
    expect_error(s.request("nope/nope"), -32601, "unknown method")
    expect_error(s.request("tools/call", {"name": "nope"}), -32602, "unknown tool")
    expect_error(s.request("tools/call", {"arguments": {}}), -32602, "no tool name")
    expect_error(s.request("tools/call", {"name": "run_sql", "arguments": [1]}), -32602,
                 "arguments not an object")
    expect_error(s.request("initialize", {}), -32602, "initialize without a version")
    # bad arguments are the tool's errors, with a message a model can act on
    for name, args, words in [
            ("get_causal_chains", {"limit": 0}, "limit must be from 1"),
            ("get_causal_chains", {"limit": "5"}, "limit must be an integer"),
            ("get_causal_chains", {"limit": 2.5}, "limit must be an integer"),
            ("get_causal_chains", {"limit": 99999999999999999999}, "limit must be"),
            ("get_causal_chains", {"bogus": 1}, "unknown argument 'bogus'"),
            ("get_op_latency", {}, "missing argument op"),
            ("get_op_latency", {"op": "cudaNope"}, "no op 'cudaNope'"),
            ("get_slow_calls", {"op": "x" * 300}, "op must be at most 256"),
            ("get_per_process_breakdown", {"pid": 4000000}, "no process 4000000"),
            ("get_per_process_breakdown", {"pid": -1}, "pid must be from 1"),
            ("get_stacks", {"limit": 21}, "limit must be from 1 to 20"),
            ("get_stacks", {}, "this trace has no stacks: record with --stack"),
            ("get_profile", {"role": "bogus"}, "no role 'bogus'"),
            ("get_profile", {"limit": 11}, "limit must be from 1 to 10"),
            ("get_timeline", {}, "missing argument from_ns"),
            ("get_timeline", {"from_ns": 10 ** 17}, "past the end"),
            ("get_timeline", {"from_ns": 5, "to_ns": 4}, "to_ns must not be before"),
            ("run_sql", {"sql": "DELETE FROM calls"}, "only read-only SQL"),
            ("run_sql", {"sql": "SELECT nope FROM calls"}, "bad SQL"),
            ("run_sql", {"sql": "SELECT 1; SELECT 2"}, "one SQL statement"),
            ("run_sql", {"sql": "x" * 70000}, "sql must be at most 65536")]:
        res = s.call(name, args, error=True)
        if words not in res["content"][0]["text"]:
            fail("%s %r: message %r lacks %r" % (name, str(args)[:60],
                                                  res["content"][0]["text"][:200], words))
    print("errors: -32601, -32602 and isError with messages as expected")

    # framing: malformed lines, an oversized one, a batch, blank lines
    s.send_raw(b"{not json\n")
    expect_error(s.read(), -32700, "malformed JSON")
    s.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing\n')
    expect_error(s.read(), -32700, "trailing bytes")
    s.send_raw(b'{"jsonrpc":"2.0","id":"\xff\xfe","method":"ping"}\n')
    expect_error(s.read(), -32700, "invalid UTF-8")
    s.send_raw(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n')
    expect_error(s.read(), -32600, "a batch")
    s.send_raw(b'{"jsonrpc":"1.0","id":1,"method":"ping"}\n')
    expect_error(s.read(), -32600, "jsonrpc 1.0")
    s.send_raw(b"\n\r\n   \n")
    big = b'{"jsonrpc":"2.0","id":77,"method":"ping","params":{"pad":"' + \
        b"x" * (1024 * 1024) + b'"}}\n'
    t0 = time.monotonic()
    s.send_raw(big)
    r = s.read()
    expect_error(r, -32600, "a line over 1 MiB")
    if "1048576" not in r["error"]["message"]:
        fail("the oversized line's message: %r" % r)
    print("oversized line (%d bytes) refused in %.0f ms" % (len(big), (time.monotonic() - t0) * 1000))
    # just under the limit is read
    pad = 1024 * 1024 - len(b'{"jsonrpc":"2.0","id":78,"method":"ping","params":{"pad":""}}')
    s.send_raw(b'{"jsonrpc":"2.0","id":78,"method":"ping","params":{"pad":"' + b"y" * pad + b'"}}\n')
    r = s.read()
    if r.get("id") != 78 or r.get("result") != {}:
        fail("a line of exactly 1 MiB: %r" % r)
    # a client's response and a notification: no answer
    s.send_raw(b'{"jsonrpc":"2.0","id":5,"result":{}}\n{"jsonrpc":"2.0","method":"x/y"}\n')
    if s.request("ping")["result"] != {}:
        fail("ping after framing errors")
    print("framing: parse errors, batch, blank lines, responses: one answer each, "
          "server still up")
    s.close()

    # a trace that is not there: tools fail, the server does not
    s = Server(ift, "/nonexistent/x.trace")
    s.init()
    res = s.call("get_trace_stats", error=True)
    if "cannot open '/nonexistent/x.trace'" not in res["content"][0]["text"]:
        fail("missing trace: %r" % res["content"][0]["text"])
    s.close()
    # stdin closed at once, and in the middle of a line
    p = subprocess.run([ift, "mcp", "-i", trace], input=b"", capture_output=True, timeout=10)
    if p.returncode != 0 or p.stdout:
        fail("closed stdin: rc %d, stdout %r" % (p.returncode, p.stdout[:100]))
    p = subprocess.run([ift, "mcp", "-i", trace], capture_output=True, timeout=10,
                       input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    if p.returncode != 0 or json.loads(p.stdout)["id"] != 1:
        fail("a last line without newline: rc %d, %r" % (p.returncode, p.stdout[:100]))
    print("closing stdin: exit 0")


SIZES = []


def sql(s, query, limit=1000):
    r = s.call("run_sql", {"sql": query, "limit": limit})
    SIZES.append(("run_sql", json.dumps({"sql": query}), s.last_bytes,
                  len(r["content"][0]["text"]), s.last_ms))
    r = r["structuredContent"]
    return r["columns"], r["rows"]


def tools(ift, trace, report_path):
    rep = json.load(open(report_path))
    s = Server(ift, trace)
    s.init()
    sizes = SIZES

    def call(name, args=None, error=False):
        res = s.call(name, args, error)
        sizes.append((name, json.dumps(args or {}), s.last_bytes,
                      len(res["content"][0]["text"]), s.last_ms))
        return res

    res = call("get_trace_stats")
    st = res["structuredContent"]
    if st["trace"] != rep["trace"]:
        fail("get_trace_stats trace differs from report --json")
    if st["ops"] != rep["ops"]:
        fail("get_trace_stats ops differ from report --json")
    if st["gpu"] != rep["gpu"]:
        fail("get_trace_stats gpu differs from report --json")
    if st["processes"] != len(rep["processes"]) or st["chains"] != len(rep["chains"]):
        fail("get_trace_stats counts")
    text = res["content"][0]["text"]
    for v in [rep["trace"]["events"], rep["trace"]["duration_ns"], rep["ops"][0]["p99_ns"]]:
        if str(v) not in text:
            fail("get_trace_stats text lacks %s" % v)

    res = call("get_causal_chains", {"limit": 20})["structuredContent"]
    if res["chains"] != rep["chains"][:20] or res["chains_total"] != len(rep["chains"]):
        fail("get_causal_chains differ from report --json")
    res = call("get_causal_chains", {"limit": 1})["structuredContent"]
    if len(res["chains"]) != min(1, len(rep["chains"])):
        fail("get_causal_chains limit")

    res = call("get_per_process_breakdown", {"limit": 1000})["structuredContent"]
    if res["processes_total"] != len(rep["processes"]):
        fail("processes_total")
    for got, want in zip(res["processes"], rep["processes"]):
        w = dict(want)
        w["thread_count"] = len(w.pop("threads"))
        del w["ops"]
        if got != w:
            fail("process %d differs from report --json" % want["pid"])
    for want in rep["processes"][:3]:
        res = call("get_per_process_breakdown", {"pid": want["pid"], "limit": 1000})
        res = res["structuredContent"]
        w = dict(want)
        w["thread_count"] = len(w.pop("threads"))
        if res["process"] != w:
            fail("process %d with pid differs" % want["pid"])
        wt = {t["tid"]: dict(t) for t in want["threads"]}
        for t in wt.values():
            del t["ops"]
        if {t["tid"]: t for t in res["threads"]} != wt:
            fail("threads of %d differ" % want["pid"])
        cuda = [t["cuda_ns"] for t in res["threads"]]
        if cuda != sorted(cuda, reverse=True):
            fail("threads not by CUDA time")
    res = call("get_per_process_breakdown", {"pid": rep["processes"][0]["pid"], "limit": 2})
    if len(res["structuredContent"]["threads"]) > 2:
        fail("thread limit")

    for op in rep["ops"]:
        res = call("get_op_latency", {"op": op["op"]})["structuredContent"]
        if res["op"] != op:
            fail("get_op_latency %s differs from report --json" % op["op"])
        h = res["histogram"]
        if sum(b["calls"] for b in h) != op["calls"]:
            fail("histogram of %s sums to %d, not %d" % (op["op"], sum(b["calls"] for b in h),
                                                         op["calls"]))
        if h[0]["calls"] == 0 or h[-1]["calls"] == 0 or \
                not h[0]["from_ns"] <= op["min_ns"] < h[0]["to_ns"] or \
                not h[-1]["from_ns"] <= op["max_ns"] < h[-1]["to_ns"]:
            fail("histogram of %s does not span min..max: %r" % (op["op"], h))
        want = []
        for p in rep["processes"]:
            for o in p["ops"]:
                if o["op"] == op["op"]:
                    want.append((p["pid"], o["calls"], o["p50_ns"], o["p99_ns"], o["max_ns"]))
        got = [(p["pid"], p["calls"], p["p50_ns"], p["p99_ns"], p["max_ns"])
               for p in res["processes"]]
        if got != want:
            fail("get_op_latency %s per process: %r != %r" % (op["op"], got, want))

    for op in rep["ops"][:4]:
        res = call("get_slow_calls", {"op": op["op"], "limit": 5})["structuredContent"]
        sl = res["slowest"]
        if res["calls"] != op["calls"] or sl[0]["dur_ns"] != op["max_ns"]:
            fail("get_slow_calls %s: calls %d max %d" % (op["op"], res["calls"], sl[0]["dur_ns"]))
        _, rows = sql(s, "SELECT dur_ns, tid, on_cpu_ns, runqueue_wait_ns, blocked_ns, "
                         "ts - (SELECT start_ts FROM trace) FROM calls WHERE op = '%s' "
                         "ORDER BY dur_ns DESC, ts LIMIT 5" % op["op"])
        got = [[c["dur_ns"], c["tid"], c["on_cpu_ns"], c["runqueue_wait_ns"], c["blocked_ns"],
                c["t_ns"]] for c in sl]
        if got != rows:
            fail("get_slow_calls %s != the SQL export: %r != %r" % (op["op"], got, rows))

    # a timeline around the top chain's worst occurrence, of its thread
    ch = rep["chains"][0] if rep["chains"] else None
    t0 = ch["timeline"][0]["t_ns"] if ch else 0
    tid = ch["tid"] if ch else None
    args = {"from_ns": t0, "limit": 50}
    if tid:
        args["tid"] = tid
    res = call("get_timeline", args)["structuredContent"]
    ev = res["events"]
    if not ev or len(ev) > 50 or res["returned"] != len(ev):
        fail("get_timeline returned %d" % len(ev))
    ts = [e["t_ns"] for e in ev]
    if ts != sorted(ts) or ts[0] < t0:
        fail("get_timeline out of order or before from_ns")
    if tid and any(tid not in (e.get("tid"), e.get("next_tid"), e.get("waker_tid"),
                               e.get("child_tid")) for e in ev):
        fail("get_timeline: an event not about tid %d" % tid)
    if res["truncated"]:
        nxt = call("get_timeline", dict(args, from_ns=res["next_from_ns"]))["structuredContent"]
        if nxt["events"][0]["t_ns"] < ts[-1]:
            fail("get_timeline paging went back")
    # every CUDA call of a window, as the SQL export has them
    a, b = rep["ops"][0]["max_ns"], rep["trace"]["duration_ns"]
    _, rows = sql(s, "SELECT min(ts) - (SELECT start_ts FROM trace) FROM calls")
    w0 = rows[0][0]
    w1 = w0 + 2 * 10 ** 9
    res = call("get_timeline", {"from_ns": w0, "to_ns": w1, "limit": 1000})["structuredContent"]
    if not res["truncated"]:
        names = {o["op"] for o in rep["ops"]}
        got = sorted((e["t_ns"], e["tid"]) for e in res["events"] if e["event"] in names)
        _, rows = sql(s, "SELECT ts - (SELECT start_ts FROM trace) AS t, tid FROM calls "
                         "WHERE t BETWEEN %d AND %d ORDER BY t, tid" % (w0, w1))
        if got != sorted(tuple(r) for r in rows):
            fail("get_timeline's calls in [%d, %d] differ from the SQL export" % (w0, w1))
    del a, b

    if rep["stacks"]:
        res = call("get_stacks")["structuredContent"]
        if res["sites"] != rep["stacks"]:
            fail("get_stacks differs from report --json's stacks")
    else:
        res = call("get_stacks", error=True)
        if "this trace has no stacks" not in res["content"][0]["text"]:
            fail("get_stacks on a trace without stacks: %r" % res["content"][0]["text"])
    # the profile: report --json's, groups and all (limit 10: every frame it has)
    if "profile" in rep:
        res = call("get_profile", {"limit": 10})["structuredContent"]
        if res != rep["profile"]:
            fail("get_profile differs from report --json's profile")
        for g in rep["profile"]["groups"]:
            res = call("get_profile", {"role": g["role"], "limit": 10})["structuredContent"]
            if res["groups"] != [g]:
                fail("get_profile role %r: %r" % (g["role"], res["groups"]))
    else:
        res = call("get_profile", error=True)
        if "this trace has no profile" not in res["content"][0]["text"]:
            fail("get_profile on a trace without a profile: %r" % res["content"][0]["text"])
    if (st["file"]["stacks"] == 0) != (not rep["stacks"]):
        fail("get_trace_stats file.stacks %d" % st["file"]["stacks"])

    cols, rows = sql(s, "SELECT count(*) AS n FROM calls")
    if cols != ["n"] or rows != [[rep["trace"]["calls"]]]:
        fail("run_sql count(*) %r" % rows)
    _, rows = sql(s, "SELECT count(*) FROM switches")
    want = min(rows[0][0], 100)
    res = call("run_sql", {"sql": "SELECT * FROM switches"})["structuredContent"]
    if res["row_count"] != want or res["truncated"] != (rows[0][0] > 100) or \
            len(res["rows"]) != want:
        fail("run_sql default limit: %d rows of %d, truncated %r"
             % (res["row_count"], rows[0][0], res["truncated"]))
    call("get_timeline", {"from_ns": 0, "limit": 1000})
    t0 = time.monotonic()
    res = call("run_sql", {"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                                  "FROM c) SELECT count(*) FROM c"}, error=True)
    if "ran past 10 s" not in res["content"][0]["text"] or time.monotonic() - t0 > 20:
        fail("run_sql time limit: %r" % res["content"][0]["text"])
    s.close()
    print("%-26s %-44s %9s %9s %8s" % ("tool", "arguments", "bytes", "text", "ms"))
    for name, args, b, t, ms in sizes:
        print("%-26s %-44s %9d %9d %8.1f" % (name, args[:44], b, t, ms))


def stacks(ift, trace, report_path, expect_path, plain):
    """get_stacks against report --json's stacks and against the sites the
    generator computed from its own rows (per pid and tid too)."""
    rep = json.load(open(report_path))
    want = json.load(open(expect_path))
    frames = {x["stack_id"]: x["frames"] for x in rep["stacks"]}

    def expect(pid, limit, op=None):
        ops, sites = [], []
        for o in want[str(pid)]:
            if op and o["op"] != op:
                continue
            ops.append({"op": o["op"], "calls_with_stack": o["calls_with_stack"],
                        "sites": len(o["sites"])})
            sites += o["sites"][:limit]
        return ops, sites

    def same(got, ops, sites, what):
        if got["ops"] != ops:
            fail("get_stacks %s: ops %r != %r" % (what, got["ops"], ops))
        g = [dict(x) for x in got["sites"]]
        for x in g:
            f = x.pop("frames")
            if x["stack_id"] in frames and f != frames[x["stack_id"]]:
                fail("get_stacks %s: frames of site %d differ from report --json"
                     % (what, x["stack_id"]))
            if not f or not f[0].startswith("cuda"):
                fail("get_stacks %s: frames %r" % (what, f))
        if g != sites:
            fail("get_stacks %s:\n got  %r\n want %r" % (what, g, sites))

    s = Server(ift, trace)
    s.init()
    tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
    t = tools.get("get_stacks")
    if not t or "outputSchema" not in t or \
            t["inputSchema"]["properties"]["limit"]["maximum"] != 20 or \
            t["inputSchema"].get("required"):
        fail("tools/list: get_stacks %r" % t)
    n = len(want["0"][0]["sites"]) + len(want["0"][1]["sites"])
    if s.call("get_trace_stats")["structuredContent"]["file"]["stacks"] != n:
        fail("get_trace_stats: file.stacks is not %d" % n)

    res = s.call("get_stacks")
    got = res["structuredContent"]
    # the default is report's: the top 5 per op, all processes
    if got["sites"] != rep["stacks"]:
        fail("get_stacks differs from report --json's stacks")
    same(got, *expect(0, 5), "(no arguments)")
    text = res["content"][0]["text"]
    for w in ["stack_id", "calls_with_stack", "_Z4stepi+0x70 (train)",
              str(got["sites"][0]["total_ns"])]:
        if w not in text:
            fail("get_stacks text lacks %r:\n%s" % (w, text))
    same(s.call("get_stacks", {"limit": 20})["structuredContent"], *expect(0, 20), "limit 20")
    same(s.call("get_stacks", {"limit": 1})["structuredContent"], *expect(0, 1), "limit 1")
    same(s.call("get_stacks", {"op": "cudaLaunchKernel", "limit": 20})["structuredContent"],
         *expect(0, 20, "cudaLaunchKernel"), "op cudaLaunchKernel")
    for pid in [100, 300, 101, 102]:
        same(s.call("get_stacks", {"pid": pid, "limit": 20})["structuredContent"],
             *expect(pid, 20), "pid %d" % pid)
    same(s.call("get_stacks", {"pid": 102, "op": "cudaMemcpy", "limit": 3})["structuredContent"],
         *expect(102, 3, "cudaMemcpy"), "pid 102 op cudaMemcpy limit 3")
    for args, words in [
            ({"op": "cudaNope"}, "no op 'cudaNope' in the trace; its ops: cudaMemcpy, "
                                 "cudaLaunchKernel"),
            ({"limit": 0}, "limit must be from 1 to 20"),
            ({"limit": 21}, "limit must be from 1 to 20"),
            ({"limit": "5"}, "limit must be an integer"),
            ({"pid": 4000000}, "no process 4000000 in the trace; its pids: 100, 300"),
            ({"pid": 999}, "no process 999"),
            ({"op": "x" * 300}, "op must be at most 256"),
            ({"frames": 3}, "unknown argument 'frames'")]:
        res = s.call("get_stacks", args, error=True)
        if words not in res["content"][0]["text"]:
            fail("get_stacks %r: %r lacks %r" % (args, res["content"][0]["text"], words))
    s.close()

    # before 2025-06-18: the same text, no structuredContent nor outputSchema
    s = Server(ift, trace)
    s.init("2025-03-26")
    t = [x for x in s.request("tools/list")["result"]["tools"] if x["name"] == "get_stacks"]
    if not t or "outputSchema" in t[0]:
        fail("get_stacks with 2025-03-26: %r" % t)
    res = s.call("get_stacks")
    if "structuredContent" in res or res["content"][0]["text"] != text:
        fail("get_stacks with 2025-03-26")
    s.close()

    # a trace without stacks: listed all the same, and says how to get them
    s = Server(ift, plain)
    s.init()
    if "get_stacks" not in {x["name"] for x in s.request("tools/list")["result"]["tools"]}:
        fail("get_stacks not listed for a trace without stacks")
    if s.call("get_trace_stats")["structuredContent"]["file"]["stacks"] != 0:
        fail("file.stacks of a trace without stacks")
    for args in [{}, {"op": "cudaMemcpy"}, {"op": "cudaNope", "limit": 3}]:
        res = s.call("get_stacks", args, error=True)
        if "this trace has no stacks: record with --stack" not in res["content"][0]["text"]:
            fail("get_stacks %r without stacks: %r" % (args, res["content"][0]["text"]))
    s.close()
    print("get_stacks: report's stacks by default; limits, op, pid and tid filters as "
          "computed from the rows; errors; a trace without stacks")


def main():
    what = sys.argv[1]
    if what == "protocol":
        protocol(sys.argv[2], sys.argv[3])
    elif what == "tools":
        tools(sys.argv[2], sys.argv[3], sys.argv[4])
    elif what == "stacks":
        stacks(*sys.argv[2:7])
    else:
        fail("usage")


if __name__ == "__main__":
    main()
