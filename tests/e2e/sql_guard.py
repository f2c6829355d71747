#!/usr/bin/env python3
"""What a hostile SQL author or MCP client can make query and mcp do.

  sql_guard.py SECTION IFT TRACE DB

query-functions, query-memory, query-tmpdir: `query`'s allowed functions,
its memory bound, a TMPDIR with URI characters; mcp-functions, mcp-memory:
the same through run_sql; mcp-ids: request ids as sent; mcp-init: requests
before initialize.

Common queries are compared with Python's own sqlite3 module on the same
database (DB, exported from TRACE), so what still works is judged against
an independent reader, not against numbers taken from a run.
"""
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile

# Memory asked for by the hostile queries, and the most the process may
# reach while refusing them: far below what was asked.
HUGE = 900000000
RSS_BOUND_MB = 300


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


# ---- queries that must still work (compared with Python's sqlite3) -------

COMMON = [
    "SELECT count(*) AS n, sum(dur_ns) AS s, min(ts) AS a, max(ts) AS b FROM calls",
    "SELECT op, count(*) AS n, avg(dur_ns) AS m, total(dur_ns) AS t FROM calls "
    "GROUP BY op ORDER BY n DESC, op",
    "SELECT group_concat(DISTINCT op) AS ops FROM (SELECT op FROM calls ORDER BY op)",
    "SELECT abs(-5) AS a, round(2.567, 1) AS r, lower('AbC') AS l, upper('x') AS u, "
    "substr('hello', 2, 3) AS s, length('héllo') AS n, coalesce(NULL, 7) AS c, "
    "ifnull(NULL, 'd') AS i, iif(1, 'y', 'n') AS f, typeof(1.5) AS t, hex('ab') AS h, "
    "printf('%05d|%s', 42, 'x') AS p, replace('aXb', 'X', '-') AS rp, trim('  t ') AS tr, "
    "instr('abc', 'c') AS ins, nullif(1, 1) AS nu, quote('it''s') AS q, char(65) AS ch, "
    "unicode('A') AS un",
    "SELECT sqrt(16) AS q, floor(2.5) AS f, ceil(2.1) AS c, pow(2, 10) AS p, "
    "log10(1000) AS l, pi() > 3 AS pi",
    "SELECT date('2026-12-01') AS d, strftime('%Y', '2026-12-01') AS y, "
    "julianday('2000-01-01') AS j, datetime(0, 'unixepoch') AS e",
    "SELECT json_object('a', 1, 'b', json_array(1, 2)) AS j, "
    "json_extract('{\"x\": 3}', '$.x') AS x, '{\"y\": 4}' ->> '$.y' AS y",
    "SELECT tid, ts, row_number() OVER (PARTITION BY tid ORDER BY ts, id) AS k, "
    "lag(ts) OVER (PARTITION BY tid ORDER BY ts, id) AS prev "
    "FROM calls ORDER BY tid, ts, id LIMIT 50",
    "SELECT * FROM op_summary ORDER BY 1",
    "SELECT typeof(zeroblob(16)) AS t, length(randomblob(8)) AS n",
]

# Functions that must be refused: fts3_tokenizer leaks an address and, with
# two arguments, replaces a function pointer; load_extension runs code; the
# others are not on the list of what a read-only question needs.
REFUSED = [
    ("SELECT fts3_tokenizer('simple')", "fts3_tokenizer"),
    ("SELECT hex(fts3_tokenizer('simple'))", "fts3_tokenizer"),
    ("SELECT fts3_tokenizer('evil', x'4141414141414141')", "fts3_tokenizer"),
    ("SELECT FTS3_Tokenizer('simple')", "fts3_tokenizer"),
    ("SELECT load_extension('/nonexistent/x.so')", "load_extension"),
    ("SELECT sqlite_compileoption_get(0)", "sqlite_compileoption_get"),
    ("SELECT 1 WHERE sqlite_compileoption_used('DEBUG') = 0", "sqlite_compileoption_used"),
    ("SELECT op FROM calls WHERE fts3_tokenizer('simple') IS NOT NULL", "fts3_tokenizer"),
]

# Values far beyond any bound: each must fail cleanly, in little memory.
BIG = [
    "SELECT zeroblob(%d)" % HUGE,
    "SELECT length(zeroblob(%d))" % HUGE,
    "SELECT randomblob(%d)" % (HUGE // 2),
    "SELECT group_concat(hex(zeroblob(1000000))) FROM calls",
    "SELECT replace(hex(zeroblob(20000000)), '0', '00000000')",
]


def truth(db, sql):
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    cur = c.execute(sql)
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    c.close()
    return cols, rows


def norm(v):
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, float):
        return round(v, 6)
    return v


def run_measured(argv, env=None, stdin=None):
    """Runs ARGV, stdout thrown away; (status, stderr, peak RSS in MiB)."""
    err = tempfile.TemporaryFile()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env,
                         stdin=stdin)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    return p.returncode, err.read().decode(errors="replace"), ru.ru_maxrss / 1024


def query_json(ift, src, sql, env=None):
    p = subprocess.run([ift, "query", "-i", src, "--json", sql], capture_output=True,
                       env=env, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def check_common(got_rows, db, sql, what):
    cols, rows = truth(db, sql)
    if sql.startswith("SELECT typeof(zeroblob"):
        rows = [(r[0], r[1]) for r in rows]
    want = [[norm(v) for v in r] for r in rows]
    got = [[norm(v) for v in r] for r in got_rows]
    if got != want:
        fail("%s: %s\n  got  %r\n  want %r" % (what, sql[:70], got[:3], want[:3]))


def query_functions(ift, trace, db):
    for sql in COMMON:
        for src in (db, trace):
            rc, out, err = query_json(ift, src, sql)
            if rc != 0:
                fail("query on %s: %s: exit %d: %s" % (src, sql[:60], rc, err.strip()))
            objs = json.loads(out)
            cols, _ = truth(db, sql)
            check_common([[o[c] for c in cols] for o in objs], db, sql, "query " + src)
    print("query: %d common queries (aggregates, string, math, date, json, window, "
          "views) equal Python's sqlite3" % len(COMMON))

    for sql, name in REFUSED:
        for src in (db, trace):
            p = subprocess.run([ift, "query", "-i", src, sql], capture_output=True, timeout=120)
            err = p.stderr.decode().strip()
            if p.returncode != 1 or p.stdout or "\n" in err:
                fail("query %r on %s: exit %d, stdout %r, stderr %r" %
                     (sql, src, p.returncode, p.stdout[:80], err))
            want = "function '%s' is not allowed" % name
            if want not in err:
                fail("query %r: %r lacks %r" % (sql, err, want))
    print("query: fts3_tokenizer, load_extension and functions off the list refused")


def query_memory(ift, trace, db):
    for sql in BIG:
        for fmt in ([], ["--csv"], ["--json"]):
            rc, err, rss = run_measured([ift, "query", "-i", db] + fmt + [sql])
            if rc != 1 or "too big" not in err or err.count("\n") != 1:
                fail("query %s %r: exit %d, stderr %r" % (fmt, sql, rc, err[:300]))
            if rss > RSS_BOUND_MB:
                fail("query %s %r: peak RSS %.0f MiB (bound %d)" % (fmt, sql, rss, RSS_BOUND_MB))
    # many rows of a bounded size: the table (which must see every row
    # before it prints) stops at its cap; --csv streams them all
    many = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
            "WHERE i < 40000) SELECT i, zeroblob(8000) FROM n")
    rc, err, rss = run_measured([ift, "query", "-i", db, many])
    if rc != 1 or "too big" not in err or rss > RSS_BOUND_MB:
        fail("a table of 640 MB: exit %d, %.0f MiB, stderr %r" % (rc, rss, err[:300]))
    # (1.3 GB of hex takes longer than query's default 10 s on a busy host)
    rc, err, rss = run_measured([ift, "query", "-i", db, "--timeout", "0", "--csv", many])
    if rc != 0 or rss > RSS_BOUND_MB:
        fail("640 MB as CSV: exit %d, %.0f MiB, stderr %r" % (rc, rss, err[:300]))
    print("query: values of %d bytes refused (peak RSS under %d MiB); a table over its "
          "cap refused, the same rows streamed as CSV" % (HUGE, RSS_BOUND_MB))


def query_tmpdir(ift, trace, db):
    sql = "SELECT count(*) AS n FROM calls"
    want = truth(db, sql)[1][0][0]
    for name in ["a%41b", "q?x=1", "h#frag", "all%2F?#"]:
        tmp = tempfile.mkdtemp(prefix="ift-tmp-")
        d = os.path.join(tmp, name)
        os.mkdir(d)
        env = dict(os.environ, TMPDIR=d)
        rc, out, err = query_json(ift, trace, sql, env)
        if rc != 0:
            fail("TMPDIR=%r: exit %d: %s" % (d, rc, err.strip()))
        if json.loads(out)[0]["n"] != want:
            fail("TMPDIR=%r: %s, want %d" % (d, out, want))
        left = os.listdir(d) + [x for x in os.listdir(tmp) if x != name]
        if left:
            fail("TMPDIR=%r: left %r" % (d, left))
        shutil.rmtree(tmp)
    print("query: TMPDIR holding %, ? or # works and is left empty")


# ---- mcp ----------------------------------------------------------------

class Server:
    def __init__(self, ift, trace):
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen([ift, "mcp", "-i", trace], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err)
        self.next_id = 1

    def raw(self, line):
        self.p.stdin.write(line + b"\n")
        self.p.stdin.flush()
        out = self.p.stdout.readline()
        if not out:
            self.err.seek(0)
            fail("the server closed stdout (stderr: %r)" % self.err.read()[-500:])
        return out

    def request(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        r = json.loads(self.raw(json.dumps(msg).encode()))
        if r.get("id") != rid:
            fail("answer id %r for %r" % (r.get("id"), rid))
        return r

    def init(self):
        r = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "sql_guard", "version": "1"}})
        if "result" not in r:
            fail("initialize: %r" % r)
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def sql(self, sql, limit=1000):
        r = self.request("tools/call", {"name": "run_sql",
                                        "arguments": {"sql": sql, "limit": limit}})
        if "result" not in r:
            fail("run_sql %r: protocol error %r" % (sql, r))
        return r["result"]

    def close(self):
        """Closes stdin, waits; the peak RSS in MiB."""
        self.p.stdin.close()
        _, status, ru = os.wait4(self.p.pid, 0)
        self.p.returncode = os.waitstatus_to_exitcode(status)
        if self.p.returncode != 0:
            fail("the server exited %d" % self.p.returncode)
        return ru.ru_maxrss / 1024


def mcp_functions(ift, trace, db):
    s = Server(ift, trace)
    s.init()
    for sql in COMMON:
        res = s.sql(sql)
        if res.get("isError"):
            fail("run_sql %s: %s" % (sql[:60], res["content"][0]["text"][:300]))
        check_common(res["structuredContent"]["rows"], db, sql, "run_sql")
    print("run_sql: %d common queries equal Python's sqlite3" % len(COMMON))
    for sql, name in REFUSED:
        res = s.sql(sql)
        text = res["content"][0]["text"]
        if not res.get("isError") or "function '%s' is not allowed" % name not in text:
            fail("run_sql %r: isError %r: %r" % (sql, res.get("isError"), text[:300]))
    print("run_sql: fts3_tokenizer, load_extension and functions off the list refused")
    s.close()


def mcp_memory(ift, trace, db):
    s = Server(ift, trace)
    s.init()
    for sql in BIG:
        res = s.sql(sql)
        text = res["content"][0]["text"]
        if not res.get("isError") or "too big" not in text:
            fail("run_sql %r: isError %r: %r" % (sql, res.get("isError"), text[:300]))
    if s.request("ping").get("result") != {}:
        fail("ping after the big values")
    rss = s.close()
    if rss > RSS_BOUND_MB:
        fail("run_sql of big values: peak RSS %.0f MiB (bound %d)" % (rss, RSS_BOUND_MB))
    print("run_sql: values of %d bytes refused, peak RSS %.0f MiB (bound %d)" %
          (HUGE, rss, RSS_BOUND_MB))

def mcp_ids(ift, trace, db):
    """Ids come back as they were sent, whatever their size."""
    s = Server(ift, trace)
    ids = [b"18446744073709551615", b"9223372036854775808", b"-9223372036854775809",
           b"123456789012345678901234567890123456789", b"0", b"-1",
           b'"18446744073709551615"', b'"id-\\u00e9\\n"', b'""']
    for rid in ids:
        out = s.raw(b'{"jsonrpc":"2.0","id":' + rid + b',"method":"ping"}')
        r = json.loads(out)
        if r.get("id") != json.loads(rid) or type(r.get("id")) is not type(json.loads(rid)):
            fail("id %s came back as %r (%r)" % (rid.decode(), r.get("id"), out[:120]))
        if r.get("result") != {}:
            fail("ping with id %s: %r" % (rid.decode(), r))
    # the id is the top-level member, whatever its spelling or place
    for line, want in [
            (b'{"jsonrpc":"2.0","params":{"id":5},"id":18446744073709551616,"method":"ping"}',
             18446744073709551616),
            (b'{"jsonrpc":"2.0","\\u0069d" : 99999999999999999999999 ,"method":"ping"}',
             99999999999999999999999),
            (b'{ "id": [1], "jsonrpc":"2.0","method":"ping", "id":\t-42 }', -42)]:
        r = json.loads(s.raw(line))
        if r.get("id") != want or r.get("result") != {}:
            fail("%s: %r, want id %d" % (line.decode(), r, want))
    for rid in [b"1.5", b"1e3", b"-0.0", b"null", b"true", b"[1]", b"{}"]:
        r = json.loads(s.raw(b'{"jsonrpc":"2.0","id":' + rid + b',"method":"ping"}'))
        if r.get("error", {}).get("code") != -32600:
            fail("id %s: %r, want -32600" % (rid.decode(), r))
    print("ids: %d integers and strings (above int64 too) came back unchanged; "
          "fractions, null, booleans refused" % len(ids))
    s.close()


def mcp_init(ift, trace, db):
    """Nothing but initialize and ping before initialize."""
    s = Server(ift, trace)
    for method, params in [("tools/call", {"name": "run_sql",
                                            "arguments": {"sql": "SELECT 1"}}),
                           ("tools/call", {"name": "get_trace_stats"}),
                           ("tools/list", None), ("prompts/list", None),
                           ("prompts/get", {"name": "investigate"})]:
        r = s.request(method, params)
        e = r.get("error") or {}
        if e.get("code") != -32600 or "initialize" not in e.get("message", ""):
            fail("%s before initialize: %r" % (method, r))
    if s.request("ping").get("result") != {}:
        fail("ping before initialize")
    s.init()
    if s.sql("SELECT 1 AS one")["structuredContent"]["rows"] != [[1]]:
        fail("run_sql after initialize")
    s.close()
    print("before initialize: tools/*, prompts/* refused with -32600; ping answered; "
          "after it, tools work")


SECTIONS = {
    "query-functions": query_functions, "query-memory": query_memory,
    "query-tmpdir": query_tmpdir, "mcp-functions": mcp_functions,
    "mcp-memory": mcp_memory, "mcp-ids": mcp_ids, "mcp-init": mcp_init,
}


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in SECTIONS:
        fail("usage: sql_guard.py %s IFT TRACE DB" % "|".join(SECTIONS))
    SECTIONS[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
