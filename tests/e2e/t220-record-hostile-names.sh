#!/usr/bin/env bash
# A traced program chooses its own names, and another user reads its trace.
# Recorded: a program that names itself "\e]0;pwn\a" and a byte that is no
# UTF-8, names a thread with a CSI, C1 CSI and a right-to-left override,
# takes such an argument, and loads the CUDA runtime from a directory named
# with a screen-clearing escape.  Every output keeps to its rule
# (docs/security.md, "Untrusted strings"):
# - terminals (info, report, dump, query's table, an error naming a path)
#   and folded stacks: no control byte but newline, no C1, no override,
#   only UTF-8; the names shown with \xNN escapes (and a folded frame's ';');
# - JSON (report, dump, query, MCP), Perfetto, SQLite, HTML: strict UTF-8,
#   the names with U+FFFD for the bytes that are none.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
need_root
need_debian_python
need_simcuda

libdir=$'lib\e[2J\xff'
mkdir "$libdir" && cp "$sim" "$libdir/" || fail "cannot copy the runtime"
cat >hostile.py <<'PY'
import ctypes, os, sys, threading, time
sys.path.insert(0, sys.argv[2])
import simrt
libc = ctypes.CDLL(None)
# PR_SET_NAME: the process's own name, 15 bytes at most
libc.prctl(15, b"\x1b]0;pwn\x07\xff", 0, 0, 0)
rt = simrt.runtime(os.fsencode(sys.argv[1]))

def spin():
    """CPU for the profile to sample under the name"""
    t0 = time.thread_time()
    while time.thread_time() - t0 < 0.1:
        pass

def named():
    with open("/proc/self/task/%d/comm" % threading.get_native_id(), "wb") as f:
        f.write(b"\x1b[2J\xc2\x9b\xe2\x80\xaeX")
    spin()
    n = ctypes.c_int()
    rt.cudaGetDeviceCount(ctypes.byref(n))

spin()
t = threading.Thread(target=named)
t.start()
t.join()
p = ctypes.c_void_p()
rt.cudaMalloc(ctypes.byref(p), 1 << 20)
rt.cudaFree(p)
PY
arg=$'\e]2;title\a\x9b\xff'
"$IFT" record -q --cuda-lib "$PWD/$libdir/libcudart.so.12" -o h.trace -- \
	$py hostile.py "$PWD/$libdir/libcudart.so.12" "$IFT_SRC/tests/workloads" "$arg" \
	>rec.out 2>rec.err &
rp=$!
wait $rp || fail "record failed: $(tail -3 rec.err)"
assert_no_leftover_of $rp

# every output, each in a file of its own
"$IFT" info -i h.trace >info.txt || fail "info failed"
"$IFT" report -i h.trace >report.txt || fail "report failed"
"$IFT" report --per-process --threads -i h.trace >report-pp.txt || fail "report --per-process failed"
"$IFT" dump -i h.trace >dump.txt || fail "dump failed"
"$IFT" query -i h.trace "SELECT pid, tid, comm FROM thread_names" >query.txt || fail "query failed"
"$IFT" query --csv -i h.trace "SELECT pid, tid, comm FROM thread_names" >query.csv || fail "query --csv failed"
"$IFT" report --json -i h.trace >report.json || fail "report --json failed"
"$IFT" dump --json -i h.trace >dump.json || fail "dump --json failed"
"$IFT" query --json -i h.trace "SELECT * FROM thread_names" >query.json || fail "query --json failed"
"$IFT" export --format perfetto -i h.trace -o h.perfetto.json || fail "export perfetto failed"
"$IFT" export --format sqlite -i h.trace -o h.db || fail "export sqlite failed"
"$IFT" export --format folded -i h.trace -o h.folded || fail "export folded failed"
"$IFT" report --html h.html -i h.trace || fail "report --html failed"
# an error that names a path with an escape in it
"$IFT" report -i $'no\e[2Jsuch.trace' >/dev/null 2>err.txt && fail "a missing trace was read"
[ "$(wc -l <err.txt)" = 1 ] || fail "the error is not one line: $(cat -v err.txt)"
# MCP: the server's tools on this trace, every answer
tools=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | "$IFT" mcp -i h.trace) ||
	fail "mcp failed"
python3 - "$tools" >mcp.in <<'PY' || fail "no tools listed"
import json, sys
lines = [json.loads(l) for l in sys.argv[1].splitlines()]
tools = [t["name"] for l in lines if l.get("id") == 2 for t in l["result"]["tools"]]
if not tools:
    sys.exit("tools/list: %s" % lines)
print(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
print(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
for i, t in enumerate(tools):
    args = {"sql": "SELECT * FROM thread_names"} if t == "run_sql" else {}
    print(json.dumps({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                      "params": {"name": t, "arguments": args}}))
# a request that is no UTF-8 (an overlong '/'), and an id with a lone surrogate
sys.stdout.flush()
sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":"\xc0\xaf","method":"ping"}\n')
print('{"jsonrpc":"2.0","id":"\\ud800x","method":"ping"}')
PY
"$IFT" mcp -i h.trace <mcp.in >mcp.out || fail "mcp failed"

python3 - "$IFT_SRC" <<'PY' || fail "an output broke its rule (above)"
import json, re, sqlite3, sys
errs = []
# what the program chose, as bytes, and what each rule makes of them
COMM = b"\x1b]0;pwn\x07\xff"
THREAD = b"\x1b[2J\xc2\x9b\xe2\x80\xaeX"
def term(b):
    out = ""
    for ch in b.decode("utf-8", "surrogateescape"):
        c = ord(ch)
        if 0xdc80 <= c <= 0xdcff:
            out += "\\x%02x" % (c - 0xdc00)
        elif c < 0x20 or c == 0x7f or 0x80 <= c <= 0x9f or 0x202a <= c <= 0x202e:
            out += "".join("\\x%02x" % x for x in ch.encode())
        else:
            out += ch
    return out
def utf8(b):
    return b.decode("utf-8", "replace")

def terminal(path, must=()):
    data = open(path, "rb").read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        errs.append("%s: not UTF-8: %s" % (path, e))
        return
    bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or ord(c) == 0x7f or
           0x80 <= ord(c) <= 0x9f or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]
    if bad:
        errs.append("%s: a terminal would act on %r" % (path, sorted(set(bad))))
    for m in must:
        if m not in text:
            errs.append("%s: %r not shown" % (path, m))

def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)

def machine(path, data, want):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        errs.append("%s: not UTF-8: %s" % (path, e))
        return None
    return text

def has(path, ss, want):
    for w in want:
        if not any(w in s for s in ss):
            errs.append("%s: no string holds %r" % (path, w))

c_term, t_term = term(COMM), term(THREAD)
terminal("info.txt", [term(b"\x1b[2J\xff"), term(b"\x1b]2;title\x07\x9b\xff")])
terminal("report.txt", [c_term[:10]])
terminal("report-pp.txt", [c_term[:10], t_term[:10]])
terminal("dump.txt", [c_term, t_term])
terminal("err.txt", ["no\\x1b[2Jsuch.trace"])
# folded stacks: a name's ';' would be a frame of its own
terminal("h.folded", [c_term.replace(";", "\\x3b"), t_term])
c_utf, t_utf = utf8(COMM), utf8(THREAD)
# query reads the SQLite export, where the byte that is no UTF-8 is U+FFFD
terminal("query.txt", [term(c_utf.encode()), t_term])
for p in ("report.json", "query.json", "h.perfetto.json"):
    text = machine(p, open(p, "rb").read(), ())
    if text is not None:
        has(p, list(strings(json.loads(text))), [c_utf] + ([t_utf] if p != "report.json" else []))
text = machine("dump.json", open("dump.json", "rb").read(), ())
if text is not None:
    has("dump.json", [s for l in text.splitlines() for s in strings(json.loads(l))], [c_utf, t_utf])
text = machine("query.csv", open("query.csv", "rb").read(), ())
if text is not None and c_utf not in text:
    errs.append("query.csv: %r not in it" % c_utf)
html = machine("h.html", open("h.html", "rb").read(), ())
if html is not None:
    bad = sorted({c for c in html if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f or
                  0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069})
    if bad:
        errs.append("h.html: controls or overrides %r" % bad)
    if c_utf.replace("\x1b", "\ufffd").replace("\x07", "\ufffd") not in html:
        errs.append("h.html: the process's name not shown")
# SQLite: every TEXT value of every table decodes as UTF-8 (Python's
# sqlite3 raises where one does not)
db = sqlite3.connect("h.db")
seen = []
for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
    try:
        for row in db.execute('SELECT * FROM "%s"' % name):
            seen += [v for v in row if isinstance(v, str)]
    except sqlite3.OperationalError as e:
        errs.append("h.db: table %s: %s" % (name, e))
has("h.db", seen, [c_utf, t_utf, utf8(b"lib\x1b[2J\xff")])
# MCP: each answer one line of strict UTF-8 JSON; the bad request refused
# with -32700, the lone surrogate's id echoed as valid UTF-8
answers = []
for n, raw in enumerate(open("mcp.out", "rb").read().splitlines()):
    text = machine("mcp.out line %d" % (n + 1), raw, ())
    if text is not None:
        answers.append(json.loads(text))
codes = [a.get("error", {}).get("code") for a in answers if a.get("id") is None]
if -32700 not in codes:
    errs.append("mcp: the request that is no UTF-8 was not refused with -32700: %s" % codes)
calls = [a for a in answers if isinstance(a.get("id"), int) and a["id"] >= 10]
if len(calls) < 5:
    errs.append("mcp: %d tool answers" % len(calls))
has("mcp.out", [s for a in calls for s in strings(a)], [c_utf])
if not any(a.get("id") == "\ufffd\ufffd\ufffdx" or (isinstance(a.get("id"), str) and a["id"].endswith("x"))
           for a in answers):
    errs.append("mcp: the ping with a lone surrogate in its id got no answer")
print("outputs checked: 6 for terminals, 9 machine-readable; %d MCP answers" % len(answers))
if errs:
    print("\n".join(errs[:20]))
    sys.exit(1)
PY
assert_no_leftovers
exit 0
