#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The read half's outputs on every fixture trace, for the golden test (t030).

  gen.py [--full] [--reports] IFT FIXTURES OUTDIR
  gen.py --pretty FILE              an MCP transcript made readable (for diffs)

Runs, for each trace under FIXTURES/examples, FIXTURES/h200 and FIXTURES/arm64: info, report
(text, --json, --per-process --threads, --html), dump --json, export --format
sqlite (the rows of every table and view, sorted, not the database file) and
--format perfetto, and a scripted MCP session that calls every tool; and
report --diff on two pairs.  Everything goes into OUTDIR, which must not
exist: an output of at most LIMIT bytes as a file, a larger one as a line of
OUTDIR/SHA256SUMS ("HASH  NAME", the sha256 of what the file would hold), so
that the goldens stay small; --full writes every output as a file (to read
one that the sums only name); --reports only info's and report's (text,
--json, --per-process --threads, --html, --diff), a subset of the goldens
that an emulated build can make in seconds (t031).

The commands run in a scratch directory where `fixtures' links to FIXTURES
and outputs are written by relative name: the paths the outputs carry (the
trace's, as given; export.trace in SQLite; the HTML's title) are then
fixtures/... wherever the tree is, and no output needs a mask for a path.
Nothing else run to run varies in these outputs (gen.py twice gives the same
bytes), so nothing is masked.

A command that fails, or writes to stderr, stops the generation: a golden of
an error is not what the test is for.  Exit 0, or 1 with a message."""
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

LIMIT = 100 * 1024      # bytes: an output above it is kept as its sha256

# every trace under fixtures/ (tests read them all; a new one is a new golden)
TRACE_DIRS = ["examples", "h200", "arm64"]
# report -i A --diff B: the README's example, and the H200 pair
DIFFS = [("examples/dataloader-starvation", "examples/direct-indexing"),
         ("h200/loaderN", "h200/direct")]


def die(msg):
    print("gen.py: " + msg, file=sys.stderr)
    sys.exit(1)


class Out:
    """OUTDIR: small outputs as files, large ones as sums."""

    def __init__(self, root, full):
        self.root, self.full = root, full
        self.sums = {}

    def sink(self, name):
        return Sink(self, name)

    def write(self, name, data):
        with self.sink(name) as s:
            s.write(data)

    def finish(self):
        if self.sums:
            with open(os.path.join(self.root, "SHA256SUMS"), "w") as f:
                for name in sorted(self.sums):
                    f.write("%s  %s\n" % (self.sums[name], name))


class Sink:
    """One output: kept in memory up to LIMIT, then only hashed (or, with
    --full, written out as it comes)."""

    def __init__(self, out, name):
        self.out, self.name = out, name
        self.path = os.path.join(out.root, name)
        self.h = hashlib.sha256()
        self.buf, self.size, self.f = [], 0, None

    def write(self, data):
        if isinstance(data, str):
            # surrogateescape: a name's bytes that are not UTF-8, as they were
            data = data.encode("utf-8", "surrogateescape")
        self.h.update(data)
        self.size += len(data)
        if self.f:
            self.f.write(data)
        elif self.size <= LIMIT or self.out.full:
            self.buf.append(data)
            if self.size > LIMIT:
                self._open()
        else:
            self.buf = None

    def _open(self):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.f = open(self.path, "wb")
        self.f.write(b"".join(self.buf))
        self.buf = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0]:
            if self.f:
                self.f.close()
            return False
        if self.f:
            self.f.close()
        elif self.buf is not None and 0 < self.size <= LIMIT:
            # an empty output (a command that prints nothing) leaves no file
            self._open()
            self.f.close()
        if self.size > LIMIT:
            self.out.sums[self.name] = self.h.hexdigest()
        return False


def run(ift, args, out):
    """IFT ARGS in the scratch directory, its stdout streamed into OUT (a
    Sink); its stderr, which must stay empty, to a file (a pipe could fill
    while stdout is read)."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([ift] + args, stdout=subprocess.PIPE, stderr=err,
                             stdin=subprocess.DEVNULL)
        while True:
            b = p.stdout.read(1 << 20)
            if not b:
                break
            out.write(b)
        rc = p.wait()
        err.seek(0)
        msg = err.read()
    if rc != 0 or msg:
        die("ingero-ftrace %s: exit %d, stderr: %s" % (" ".join(args), rc,
                                                      msg.decode(errors="replace")[-500:]))


# ---- SQLite ---------------------------------------------------------

def sql_value(v):
    if v is None:
        return "NULL"
    if isinstance(v, bytes):
        return "X'" + v.hex() + "'"
    if isinstance(v, float):
        return repr(v)          # the shortest text that reads back the same double
    if isinstance(v, int):
        return str(v)
    return json.dumps(v, ensure_ascii=False)


def sqlite_rows(db, out, prefix):
    """The export as text: the schema, then each table's and view's rows in
    a file of its own, sorted by every column (by SQLite, which sorts on
    disk: a table of millions of rows needs no memory here).  The order the
    export inserted them in is no part of what it promises."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    # a task names itself: its bytes need not be UTF-8
    con.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
    objs = con.execute("SELECT type, name, sql FROM sqlite_master "
                       "WHERE sql IS NOT NULL ORDER BY type, name").fetchall()
    out.write(prefix + "schema.sql", "".join("%s;\n" % sql for _, _, sql in objs))
    for typ, name, _ in objs:
        if typ not in ("table", "view"):
            continue
        # events is a view that reads every table again: its rows are the
        # tables' rows, its SQL is in schema.sql
        if name == "events":
            continue
        cols = [r[1] for r in con.execute('PRAGMA table_info("%s")' % name)]
        order = ", ".join(str(i + 1) for i in range(len(cols)))
        with out.sink("%s%s.txt" % (prefix, name)) as s:
            s.write("\t".join(cols) + "\n")
            cur = con.execute('SELECT * FROM "%s" ORDER BY %s' % (name, order))
            while True:
                rows = cur.fetchmany(10000)
                if not rows:
                    break
                s.write("".join("\t".join(sql_value(v) for v in r) + "\n" for r in rows))
    con.close()


# ---- MCP ------------------------------------------------------------

class Mcp:
    """`ingero-ftrace mcp -i TRACE`, one request at a time; each request and
    its answer, as sent and as received, become one output of two lines."""

    def __init__(self, ift, trace, out, prefix):
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen([ift, "mcp", "-i", trace], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err)
        self.out, self.prefix, self.next_id, self.seq = out, prefix, 1, 0

    def send(self, msg):
        line = json.dumps(msg).encode() + b"\n"
        self.p.stdin.write(line)
        self.p.stdin.flush()
        return line

    def request(self, label, method, params=None, keep=True):
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.next_id += 1
        req = self.send(msg)
        ans = self.p.stdout.readline()
        if not ans.endswith(b"\n"):
            die("mcp %s: no answer (stderr: %s)" % (label, self.stderr()[-500:]))
        r = json.loads(ans)
        if r.get("id") != msg["id"]:
            die("mcp %s: answer to id %r, asked %r" % (label, r.get("id"), msg["id"]))
        self.seq += 1
        if keep:
            self.out.write("%smcp-%02d-%s.jsonl" % (self.prefix, self.seq, label), req + ans)
        return r

    def call(self, label, tool, args):
        r = self.request(label, "tools/call", {"name": tool, "arguments": args})
        if "result" not in r:
            die("mcp %s: protocol error %r" % (label, r.get("error")))
        return r["result"]

    def stderr(self):
        self.err.seek(0)
        return self.err.read()

    def close(self):
        self.p.stdin.close()
        rest = self.p.stdout.read()
        rc = self.p.wait()
        err = self.stderr()
        if rc != 0 or rest or err:
            die("mcp: exit %d, stdout after the last answer %r, stderr %r" %
                (rc, rest[:200], err[-500:]))


def mcp_session(ift, trace, out, prefix, protocol):
    """Every tool, with arguments that make it work: its defaults, its
    options (limits, a pid, a window, a thread), and an error it explains.
    PROTOCOL: keep the answers that do not depend on the trace too (the
    first trace's session only: they would be the same in every one)."""
    m = Mcp(ift, trace, out, prefix)
    m.request("initialize", "initialize",
              {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "golden", "version": "1"}}, protocol)
    m.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if protocol:
        m.request("tools-list", "tools/list")
        m.request("prompts-list", "prompts/list")
        m.request("prompts-get", "prompts/get",
                  {"name": "investigate", "arguments": {"question": "why is step 3 slow?"}})

    stats = m.call("get_trace_stats", "get_trace_stats", {})["structuredContent"]
    ops = [o["op"] for o in stats["ops"]]
    dur = stats["trace"]["duration_ns"]
    m.call("get_causal_chains", "get_causal_chains", {"limit": 20})
    m.call("get_causal_chains-limit1", "get_causal_chains", {"limit": 1})

    procs = m.call("get_per_process_breakdown", "get_per_process_breakdown",
                   {"limit": 1000})["structuredContent"]["processes"]
    pid = procs[0]["pid"]
    m.call("get_per_process_breakdown-pid", "get_per_process_breakdown",
           {"pid": pid, "limit": 1000})
    m.call("get_per_process_breakdown-pid-limit2", "get_per_process_breakdown",
           {"pid": pid, "limit": 2})
    m.call("get_per_process_breakdown-nopid", "get_per_process_breakdown", {"pid": 4194304})

    for op in ops:
        m.call("get_op_latency-" + op, "get_op_latency", {"op": op})
    m.call("get_op_latency-noop", "get_op_latency", {"op": "cudaNoSuchCall"})

    # the op with the most time (the first listed), then any with calls
    slow = m.call("get_slow_calls", "get_slow_calls", {"op": ops[0]})
    m.call("get_slow_calls-pid", "get_slow_calls", {"op": ops[0], "limit": 3, "pid": pid})
    m.call("get_slow_calls-last", "get_slow_calls", {"op": ops[-1], "limit": 100})

    m.call("get_stacks", "get_stacks", {})

    m.call("get_timeline", "get_timeline", {"from_ns": 0, "limit": 40, "samples": True})
    # around the slowest call: its thread's events, its process's, anyone's.
    # get_timeline filtered by a task stops after 10 s of wall time
    # (SCAN_LIMIT_NS), whatever it has found: the windows are short so that
    # a loaded machine never gets there
    worst = slow["structuredContent"]["slowest"][0]
    at = max(worst["t_ns"] - 1000000, 0)
    window = {"from_ns": at, "to_ns": worst["t_ns"] + worst["dur_ns"] + 1000000}
    m.call("get_timeline-tid", "get_timeline", dict(window, tid=worst["tid"], limit=20))
    m.call("get_timeline-pid", "get_timeline", dict(window, pid=worst["pid"], limit=20))
    m.call("get_timeline-all", "get_timeline", dict(window, limit=20))
    m.call("get_timeline-past-end", "get_timeline", {"from_ns": dur + 1})

    # each query reads an index or a small table: run_sql stops a query
    # after 10 s, and a loaded machine must not make that happen
    m.call("run_sql-op_summary", "run_sql",
           {"sql": "SELECT * FROM op_summary ORDER BY op"})
    m.call("run_sql-chains", "run_sql",
           {"sql": "SELECT rank, severity, cause, phase, op, pid, tid, cost_ns, summary "
                   "FROM chains ORDER BY rank"})
    m.call("run_sql-trace", "run_sql", {"sql": "SELECT * FROM trace"})
    m.call("run_sql-switches", "run_sql",
           {"sql": "SELECT * FROM switches ORDER BY ts, cpu", "limit": 20})
    m.call("run_sql-write", "run_sql", {"sql": "DELETE FROM calls"})
    m.call("run_sql-bad", "run_sql", {"sql": "SELECT nosuchcolumn FROM calls"})
    m.close()


# ---- the outputs ----------------------------------------------------

def traces(fixtures):
    for d in TRACE_DIRS:
        for f in sorted(os.listdir(os.path.join(fixtures, d))):
            if f.endswith(".trace"):
                yield "%s/%s" % (d, f[:-len(".trace")])


def generate(ift, fixtures, root, full, reports_only=False):
    out = Out(root, full)
    os.makedirs(root)
    scratch = tempfile.mkdtemp(prefix="ift-golden.")
    try:
        os.symlink(os.path.abspath(fixtures), os.path.join(scratch, "fixtures"))
        os.chdir(scratch)
        first = next(traces(fixtures))
        for name in traces(fixtures):
            t = "fixtures/%s.trace" % name
            p = name + "/"
            print("gen.py: " + name, file=sys.stderr, flush=True)
            with out.sink(p + "info.txt") as s:
                run(ift, ["info", "-i", t], s)
            with out.sink(p + "report.txt") as s:
                run(ift, ["report", "-i", t], s)
            with out.sink(p + "report.json") as s:
                run(ift, ["report", "--json", "-i", t], s)
            with out.sink(p + "report-per-process-threads.txt") as s:
                run(ift, ["report", "-i", t, "--per-process", "--threads"], s)
            with out.sink(p + "report.html.stdout") as s:
                run(ift, ["report", "-i", t, "--html", "report.html"], s)
            with open("report.html", "rb") as f:
                out.write(p + "report.html", f.read())
            os.unlink("report.html")
            if reports_only:
                continue
            with out.sink(p + "dump.jsonl") as s:
                run(ift, ["dump", "--json", "-i", t], s)
            with out.sink(p + "perfetto.json") as s:
                run(ift, ["export", "-i", t, "--format", "perfetto"], s)
            with out.sink(p + "export-sqlite.stdout") as s:
                run(ift, ["export", "-i", t, "--format", "sqlite", "-o", "export.db"], s)
            sqlite_rows("export.db", out, p + "sqlite/")
            os.unlink("export.db")
            mcp_session(ift, t, out, p + "mcp/", name == first)
        for a, b in DIFFS:
            with out.sink("diff/%s--%s.txt" % (a.replace("/", "-"), os.path.basename(b))) as s:
                run(ift, ["report", "-i", "fixtures/%s.trace" % a,
                          "--diff", "fixtures/%s.trace" % b], s)
        out.finish()
    finally:
        os.chdir("/")
        shutil.rmtree(scratch)


# ---- --pretty -------------------------------------------------------

class Raw(str):
    """A number as the server wrote it: 1.50 stays 1.50."""


def pretty(v, ind, lines, key=""):
    pad = "  " * ind
    if isinstance(v, dict):
        lines.append(pad + key + "{")
        for k, x in v.items():
            pretty(x, ind + 1, lines, json.dumps(k) + ": ")
        lines.append(pad + "}")
    elif isinstance(v, list):
        lines.append(pad + key + "[")
        for x in v:
            pretty(x, ind + 1, lines)
        lines.append(pad + "]")
    elif isinstance(v, Raw):
        lines.append(pad + key + v)
    elif isinstance(v, str) and "\n" in v:
        # a text content: its lines, as a reader sees them
        lines.append(pad + key + "|")
        lines.extend(pad + "  | " + x for x in v.split("\n"))
    else:
        lines.append(pad + key + json.dumps(v, ensure_ascii=False))


def pretty_file(path):
    """Each line of an MCP transcript, indented, numbers as written, text
    contents line by line."""
    with open(path, "rb") as f:
        for n, line in enumerate(f):
            lines = []
            pretty(json.loads(line, parse_float=Raw, parse_int=Raw), 0, lines,
                   "> " if n == 0 else "< ")
            print("\n".join(lines))


def main():
    args = sys.argv[1:]
    if args[:1] == ["--pretty"] and len(args) == 2:
        pretty_file(args[1])
        return
    full = "--full" in args[:2]
    reports = "--reports" in args[:2]
    args = [a for a in args if a not in ("--full", "--reports")]
    if len(args) != 3:
        die("usage: gen.py [--full] [--reports] IFT FIXTURES OUTDIR | gen.py --pretty FILE")
    ift, fixtures, root = (os.path.abspath(a) for a in args)
    if os.path.exists(root):
        die("'%s' exists" % root)
    generate(ift, fixtures, root, full, reports)


if __name__ == "__main__":
    main()
