# SPDX-License-Identifier: MIT
"""Checks of `report --html` against `report --json` of the same trace.

Imported by the t52x tests (PYTHONPATH=tests/e2e).  Works on the file as
written and on the DOM a browser serialises (chromium --dump-dom): both are
parsed with html.parser into a small tree, so the checks are the same.

    python3 -m htmlcheck PAGE.html REPORT.json [--samples] [--name NAME]

The call sites (record --stack) are checked both ways: per op against
`stacks', per chain against its `sites', and none on a page whose report
has none.

exits 1 with one line per problem.
"""
import json
import re
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "param", "source", "track", "wbr"}
MAX_BARS = 100      # processes drawn as bars (src/render/html.c)


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.parts = [], []

    def text(self):
        out = []
        for p in self.parts:
            out.append(p.text() if isinstance(p, Node) else p)
        return "".join(out)

    def cls(self):
        return self.attrs.get("class", "").split()

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def find(self, tag=None, cls=None, id=None):
        return [n for n in self.walk() if (tag is None or n.tag == tag) and
                (cls is None or cls in n.cls()) and (id is None or n.attrs.get("id") == id)]

    def one(self, tag=None, cls=None, id=None):
        v = self.find(tag, cls, id)
        return v[0] if len(v) == 1 else None


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root
        self.doctype = None

    def handle_decl(self, decl):
        self.doctype = decl

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        self.cur.parts.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        self.cur.parts.append(n)

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.parts.append(data)


def parse(path):
    t = Tree()
    with open(path, encoding="utf-8") as f:
        t.feed(f.read())
    t.close()
    return t


REMOTE = re.compile(r"^\s*(https?:|ftp:|//|data:|javascript:)", re.I)


def check_self_contained(t, bad):
    """No fetch of anything: no script, no external link, no remote url()."""
    for n in t.root.walk():
        if n.tag in ("script", "link", "img", "iframe", "object", "embed", "audio",
                     "video", "source", "base", "frame"):
            bad.append("element <%s> %r: the page must load nothing" % (n.tag, n.attrs))
        for k, v in n.attrs.items():
            v = v or ""
            # links within the page only; nothing that loads (src) at all
            if k in ("src", "srcset") or (k in ("href", "xlink:href", "action", "poster", "data")
                                          and (REMOTE.search(v) or not v.startswith("#"))):
                bad.append("<%s %s=%r>: a reference out of the page" % (n.tag, k, v))
            if k.startswith("on"):
                bad.append("<%s %s=...>: an event handler (script)" % (n.tag, k))
            if "url(" in v.replace(" ", "") or "@import" in v:
                bad.append("<%s %s=%r>: url() or @import" % (n.tag, k, v))
        if n.tag == "style" and ("url(" in n.text().replace(" ", "") or "@import" in n.text()):
            bad.append("<style> has url() or @import")
    csp = [n for n in t.root.find("meta") if n.attrs.get("http-equiv", "").lower() ==
           "content-security-policy"]
    if not csp or "default-src 'none'" not in csp[0].attrs.get("content", ""):
        bad.append("no Content-Security-Policy with default-src 'none'")


def points(polyline):
    return [p for p in (polyline.attrs.get("points") or "").split() if p]


def frames_of(tr):
    """The frames of a call-site row, innermost first, as the JSON writes them."""
    return [c.text() for c in tr.find("code", cls="frame")]


def check(page, r, samples=False, name="page"):
    """Problems of PAGE (a path) against report R (the parsed JSON), one string each."""
    bad = []
    t = parse(page)
    if not t.doctype or t.doctype.lower() != "doctype html":
        bad.append("no <!DOCTYPE html>")
    check_self_contained(t, bad)
    root = t.root
    ops, procs, chains = r["ops"], r["processes"], r["chains"]

    # the timeline: CPU utilisation, run queue, every counted call
    tl = root.one("svg", id="timeline")
    if tl is None or "chart" not in tl.cls():
        bad.append("no <svg class=chart id=timeline>")
    else:
        for sid in ("cpu-busy", "runqueue"):
            g = tl.one("g", id=sid)
            if g is None:
                bad.append("timeline: no series %s" % sid)
                continue
            n = int(g.attrs.get("data-n", "-1"))
            pts = sum(len(points(p)) for p in g.find("polyline"))
            if samples and n <= 0:
                bad.append("timeline %s: no samples (data-n %d), the trace has them" % (sid, n))
            if n > 0 and not 0 < pts <= n:
                bad.append("timeline %s: %d points for %d samples" % (sid, pts, n))
            if pts and not all(re.match(r"^-?[\d.]+,-?[\d.]+$", p) for p in points(g.find("polyline")[0])):
                bad.append("timeline %s: malformed points" % sid)
        # the GPUs NVML measured, a line each counted one; or why not
        gpu = r.get("gpu") or {}
        for x in (gpu.get("gpus") or []) if gpu.get("measured") else []:
            g = tl.one("g", id="gpu-busy-%d" % x["gpu"])
            if (g is None) == x["counted"]:
                bad.append("timeline: GPU %d %s" % (x["gpu"], "has no line" if x["counted"]
                                                    else "has a line, not counted"))
            if g is None:
                continue
            n = int(g.attrs.get("data-n", "-1"))
            pts = sum(len(points(p)) for p in g.find("polyline"))
            if x["window"]["covered_ns"] and not 0 < pts <= n:
                bad.append("timeline GPU %d: %d points for %d samples" % (x["gpu"], pts, n))
        if gpu and not gpu.get("measured") and "GPU not measured: " not in tl.text():
            bad.append("timeline: the GPU not measured, and not said so")
        g = tl.one("g", id="latency")
        calls = sum(o["calls"] for o in ops)
        if g is None:
            bad.append("timeline: no latency series")
        else:
            n = int(g.attrs.get("data-n", "-1"))
            dots = len(g.find("circle"))
            if n != calls:
                bad.append("latency: data-n %d, the op table counts %d calls" % (n, calls))
            if calls and not 0 < dots <= calls:
                bad.append("latency: %d points for %d calls" % (dots, calls))
            if dots < calls and "calls drawn as" not in tl.text():
                bad.append("latency: %d of %d calls drawn without saying so" % (dots, calls))
            if calls <= 4000 and dots != calls:
                bad.append("latency: %d calls should each be drawn, %d are" % (calls, dots))
        bands = tl.find("g", cls="chain-band")
        if len(bands) != sum(1 for c in chains if c["timeline"]):
            bad.append("timeline: %d chain bands for %d chains" % (len(bands), len(chains)))

    # a histogram per op, in the op order, every call in a bar
    hs = root.find("svg", cls="histogram")
    if [h.attrs.get("data-op") for h in hs] != [o["op"] for o in ops]:
        bad.append("histograms %r, ops %r" % ([h.attrs.get("data-op") for h in hs][:8],
                                               [o["op"] for o in ops][:8]))
    for h, o in zip(hs, ops):
        bars = h.find("rect", cls="bar")
        total = sum(int(b.attrs["data-n"]) for b in bars)
        if not bars or total != o["calls"] or int(h.attrs.get("data-calls", -1)) != o["calls"]:
            bad.append("histogram %s: %d bars holding %d calls, the op has %d" %
                       (o["op"], len(bars), total, o["calls"]))
        for b in bars:
            lo, hi = int(b.attrs["data-lo-ns"]), int(b.attrs["data-hi-ns"])
            if not lo < hi or int(b.attrs["data-n"]) <= 0:
                bad.append("histogram %s: bar %d..%d holds %s" % (o["op"], lo, hi, b.attrs["data-n"]))
        if bars and not (int(bars[0].attrs["data-lo-ns"]) <= max(o["min_ns"], 1) and
                         o["max_ns"] < int(bars[-1].attrs["data-hi-ns"])):
            bad.append("histogram %s: bars do not span min %d .. max %d" %
                       (o["op"], o["min_ns"], o["max_ns"]))
        if not h.find("line", cls="p50") or not h.find("line", cls="p99"):
            bad.append("histogram %s: no p50 or p99 mark" % o["op"])

    # the chains, their summaries verbatim, their timelines and tasks
    arts = root.find("article", cls="chain")
    if len(arts) != len(chains):
        bad.append("%d chains on the page, %d in the report" % (len(arts), len(chains)))
    if not chains and root.one("p", id="no-chain") is None:
        bad.append("no chain and no 'no host cause' line")
    for i, (a, c) in enumerate(zip(arts, chains)):
        s = a.find("p", cls="summary")
        if len(s) != 1 or s[0].text() != c["summary"]:
            bad.append("chain %d: summary %r, the report says %r" %
                       (i + 1, s[0].text() if s else None, c["summary"]))
        if (a.attrs.get("data-severity"), a.attrs.get("data-cause"), a.attrs.get("data-phase")) != \
                (c["severity"], c["cause"], c["phase"]):
            bad.append("chain %d: %r" % (i + 1, a.attrs))
        if c["timeline"]:
            svg = a.one("svg", cls="chain-timeline")
            if svg is None or len(svg.find("circle")) != len(c["timeline"]):
                bad.append("chain %d: timeline of %s markers, %d steps" %
                           (i + 1, len(svg.find("circle")) if svg else "no", len(c["timeline"])))
            rows = [tr.find("td")[3].text() for tr in a.one("table", cls="steps").find("tr")[1:]] \
                if a.one("table", cls="steps") else []
            if rows != [x["text"] for x in c["timeline"]]:
                bad.append("chain %d: steps %r" % (i + 1, rows[:3]))
        tasks = a.one("table", cls="tasks")
        ntasks = len(tasks.find("tr")) - 1 if tasks else 0
        if ntasks != len(c["evidence"]["tasks"]):
            bad.append("chain %d: %d task rows, %d in the evidence" %
                       (i + 1, ntasks, len(c["evidence"]["tasks"])))
        recs = [li.text() for li in a.find("li")]
        if recs != c["recommendations"]:
            bad.append("chain %d: fixes %r" % (i + 1, recs))
        # where its time was lost from (record --stack): the chain's sites
        st = a.find("table", cls="chain-sites")
        if not c["sites"] and st:
            bad.append("chain %d: a table of call sites, the report has none" % (i + 1))
        if c["sites"]:
            rows = st[0].find("tr", cls="site") if len(st) == 1 else []
            got = [(int(tr.attrs["data-stack"]), int(tr.attrs["data-calls"]),
                    int(tr.attrs["data-cost-ns"]), int(tr.attrs["data-share-permille"]),
                    frames_of(tr)) for tr in rows]
            want = [(x["stack_id"], x["calls"], x["cost_ns"], x["share_permille"], x["frames"])
                    for x in c["sites"]]
            if got != want:
                bad.append("chain %d: call sites %r, the report's %r" % (i + 1, got[:2], want[:2]))

    # the lines of Python under each chain (record --py-stack), as its py_sites say
    for i, c in enumerate(chains):
        a = arts[i] if i < len(arts) else None
        if a is None:
            continue
        st = a.find("table", cls="chain-py-sites")
        if not c.get("py_sites") and st:
            bad.append("chain %d: a table of Python call sites, the report has none" % (i + 1))
        if c.get("py_sites"):
            rows = st[0].find("tr", cls="py-site") if len(st) == 1 else []
            got = [(int(tr.attrs["data-stack"]), int(tr.attrs["data-line"]),
                    int(tr.attrs["data-calls"]), int(tr.attrs["data-cost-ns"]),
                    int(tr.attrs["data-share-permille"]), frames_of(tr)) for tr in rows]
            want = [(x["stack_id"], x["line"] or 0, x["calls"], x["cost_ns"],
                     x["share_permille"], [x["frame"]]) for x in c["py_sites"]]
            if got != want:
                bad.append("chain %d: Python call sites %r, the report's %r"
                           % (i + 1, got[:2], want[:2]))

    # the lines of Python of each op (record --py-stack), as `py_sites' says;
    # no table for a trace without Python frames
    pt = root.find("table", id="py-site-table")
    if "py_sites" not in r and (pt or root.find("tr", cls="py-site")):
        bad.append("Python call sites on the page of a trace without Python frames")
    if "py_sites" in r:
        ot = root.find("table", id="py-op-table")
        rows = ot[0].find("tr", cls="py-op") if len(ot) == 1 else []
        got = [(tr.attrs["data-op"], int(tr.attrs["data-calls"]),
                int(tr.attrs["data-in-flight"]), int(tr.attrs["data-late"])) for tr in rows]
        want = [(o["op"], o["calls"], o["in_flight"], o["late"]) for o in r["py_sites"]]
        if got != want:
            bad.append("Python ops %r, the report's %r" % (got[:2], want[:2]))
        rows = pt[0].find("tr", cls="py-site") if len(pt) == 1 else []
        got = [(tr.attrs["data-op"], int(tr.attrs["data-stack"]), int(tr.attrs["data-line"]),
                int(tr.attrs["data-calls"]), int(tr.attrs["data-total-ns"]),
                int(tr.attrs["data-tail-calls"]), frames_of(tr)) for tr in rows]
        want = [(o["op"], x["stack_id"], x["line"] or 0, x["calls"], x["total_ns"],
                 x["tail_calls"], [x["frame"]] + x["callers"])
                for o in r["py_sites"] for x in o["sites"]]
        if got != want:
            bad.append("Python call sites %r, the report's %r" % (got[:2], want[:2]))

    # the call sites of each op (record --stack), as `stacks' says; no table without
    st = root.find("table", id="site-table")
    if not r["stacks"] and (st or root.find("tr", cls="site")):
        bad.append("call sites on the page of a trace without stacks")
    if r["stacks"]:
        rows = st[0].find("tr", cls="site") if len(st) == 1 else []
        got = [(tr.attrs["data-op"], int(tr.attrs["data-stack"]), int(tr.attrs["data-calls"]),
                int(tr.attrs["data-total-ns"]), int(tr.attrs["data-tail-calls"]),
                int(tr.attrs["data-tail-ns"]), frames_of(tr)) for tr in rows]
        want = [(x["op"], x["stack_id"], x["calls"], x["total_ns"], x["tail_calls"],
                 x["tail_ns"], x["frames"]) for x in r["stacks"]]
        if got != want:
            bad.append("call sites %r, the report's stacks %r" % (got[:2], want[:2]))

    # per-process bars, in the report's order, with its figures
    svg = root.one("svg", id="processes")
    want = procs[:MAX_BARS]
    gs = svg.find("g", cls="proc") if svg is not None else []
    if procs and (svg is None or "chart" not in svg.cls()):
        bad.append("no <svg class=chart id=processes>")
    if [int(g.attrs["data-pid"]) for g in gs] != [p["pid"] for p in want]:
        bad.append("process bars %r, processes %r" %
                   ([g.attrs["data-pid"] for g in gs][:10], [p["pid"] for p in want][:10]))
    for g, p in zip(gs, want):
        got = tuple(int(g.attrs[k]) for k in ("data-on-cpu-ns", "data-runqueue-wait-ns",
                                              "data-blocked-ns"))
        if got != (p["on_cpu_ns"], p["runqueue_wait_ns"], p["blocked_ns"]):
            bad.append("process %d: bars %r, report %r" % (p["pid"], got, (
                p["on_cpu_ns"], p["runqueue_wait_ns"], p["blocked_ns"])))
        rects = {k: g.find("rect", cls=k) for k in ("on-cpu", "rq-wait", "blocked")}
        if any(len(v) != 1 for v in rects.values()):
            bad.append("process %d: not one rect per state" % p["pid"])

    # the tables of the text report
    ot = root.one("table", id="ops")
    names = [tr.attrs.get("data-op") for tr in ot.find("tr", cls="op")] if ot else []
    if sorted(names) != sorted(o["op"] for o in ops):
        bad.append("op table %r, ops %r" % (names, [o["op"] for o in ops]))
    pt = root.one("table", id="process-table")
    rows = [int(tr.attrs["data-pid"]) for tr in pt.find("tr") if "data-pid" in tr.attrs] if pt else []
    if rows != [p["pid"] for p in procs]:
        bad.append("process table: %d rows, %d processes" % (len(rows), len(procs)))
    # each row's counts are its process's, cell by cell (the pages cell once
    # showed the CUDA calls: its buffer was the calls cell's, formatted in
    # whatever order the compiler evaluated the arguments)
    by_pid = {p["pid"]: p for p in procs}
    for tr in pt.find("tr") if pt else []:
        p = by_pid.get(int(tr.attrs.get("data-pid", -1)))
        if p is None:
            continue
        td = [c.text() for c in tr.find("td")]
        want = {3: "{:,}".format(p["cuda_calls"]), 9: "{:,}".format(p["voluntary_switches"]),
                12: "{:,}".format(p["wakeups"])}
        for i, w in want.items():
            if len(td) <= i or td[i] != w:
                bad.append("process %d: cell %d is %r, not %r" % (p["pid"], i, td[i:i + 1], w))
        if len(td) < 14 or not td[13].startswith("{:,} (".format(p["page_allocs"])):
            bad.append("process %d: pages cell %r, not %d page allocations"
                       % (p["pid"], td[13:14], p["page_allocs"]))
    summ = root.one("table", id="summary")
    ev = "{:,}".format(r["trace"]["events"])
    if summ is None or ev not in summ.text():
        bad.append("summary: no %s events" % ev)
    cmd = r["trace"]["command"]
    if cmd and cmd not in summ.text():
        bad.append("summary: no command %r" % cmd)
    return ["%s: %s" % (name, b) for b in bad]


def main(argv):
    samples = "--samples" in argv
    name = argv[argv.index("--name") + 1] if "--name" in argv else argv[1]
    bad = check(argv[1], json.load(open(argv[2])), samples, name)
    for b in bad[:30]:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
