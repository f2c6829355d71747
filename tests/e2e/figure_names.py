#!/usr/bin/env python3
"""figure_names.py NAMES_MD OUTPUT...: one name for one figure in every output.

NAMES_MD is docs/report.md; its "## Names" table lists each figure once:
its names (backquoted), its unit, what it is, and the names it had in 0.1
that outputs still carry until 0.2 (paired with the names in order; all
of them the one name's, in a row of one).  Each OUTPUT is LABEL=FILE, of a kind
told by the label's start:
  json-*      a report --json document, or an MCP session's replies (one a
              line: each tool result's JSON text is read);
  sqlite-*    a database of export --format sqlite: every column of every
              table and view that holds numbers, and chain_evidence's keys;
  perfetto-*  a Perfetto JSON trace: the events' args (evidence.X is X;
              arg.X, a probe's argument, is the catalog's, not a figure).
Fails (exit 1, a line a problem) when a figure of an output has a name the
table does not list, when a 0.1 name appears without the name that replaced
it beside it (in the same object, table or event), when a name is listed
twice, or when a listed name is in no output.  Exit 2 when it cannot run.
"""
import json
import re
import sqlite3
import sys


def read_names(path):
    """{name: {canonical, ...}} for every name and 0.1 name of the Names
    table (a 0.1 name may have given way to more than one)."""
    names, rows, inside = {}, 0, False
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            inside = line.strip() == "## Names"
            continue
        if not inside or not line.startswith("|") or line.startswith("|--") \
                or line.startswith("| name"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4:
            sys.exit("figure_names: a Names row of %d cells, not 4: %s" % (len(cells), line))
        now = re.findall(r"`([^`]+)`", cells[0])
        old = re.findall(r"`([^`]+)`", cells[3])
        if not now or (old and len(now) > 1 and len(old) != len(now)):
            sys.exit("figure_names: a Names row whose 0.1 names do not pair with its names: "
                     + line)
        rows += 1
        for n in now:
            if n in names:
                print("'%s' is listed twice in the Names table" % n)
                bad.append(n)
            names[n] = {n}
        for o, n in zip(old, now if len(now) > 1 else now * len(old)):
            if o in names and o in names[o]:
                print("'%s' is both a name and a 0.1 name in the Names table" % o)
                bad.append(o)
            names.setdefault(o, set()).add(n)
    if not rows:
        sys.exit("figure_names: no '## Names' table in %s" % path)
    return names


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def walk_json(o, label, where, seen):
    """Each object's numeric members, as one group."""
    if isinstance(o, dict):
        keys = {k for k, v in o.items() if is_num(v)}
        if keys:
            seen.append((label, where or "(top)", keys))
        for k, v in o.items():
            walk_json(v, label, where + "." + k, seen)
    elif isinstance(o, list):
        for v in o:
            walk_json(v, label, where + "[]", seen)


def read_json(label, path, seen):
    text = open(path, encoding="utf-8").read()
    try:
        walk_json(json.loads(text), label, "", seen)
        return
    except ValueError:
        pass
    for line in text.splitlines():  # an MCP session: a reply a line
        reply = json.loads(line)
        result = reply.get("result") or {}
        tool = "id %s" % reply.get("id")
        for c in result.get("content") or []:
            try:
                walk_json(json.loads(c.get("text", "")), label, tool, seen)
            except ValueError:
                pass  # a tool's text answer
        if "structuredContent" in result:
            walk_json(result["structuredContent"], label, tool, seen)


def read_sqlite(label, path, seen):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    for (args,) in db.execute("SELECT args FROM ops"):
        arg_names.update(a for a in (args or "").split(",") if a)
    for t, kind in db.execute("SELECT name, type FROM sqlite_master"
                              " WHERE type IN ('table', 'view')"):
        num = set()
        for r in db.execute("PRAGMA table_info(\"%s\")" % t):
            c, decl = r[1], r[2]
            if kind == "view":
                # a view's columns have no declared type: what they hold tells
                decl = " ".join(x for (x,) in db.execute(
                    "SELECT DISTINCT typeof(\"%s\") FROM \"%s\" LIMIT 100" % (c, t)))
            if re.search(r"integer|real", decl, re.I):
                num.add(c)
        if num:
            seen.append((label, t, num))
    keys = {k for (k,) in db.execute("SELECT DISTINCT key FROM chain_evidence")}
    if keys:
        seen.append((label, "chain_evidence.key", keys))


def read_perfetto(label, path, seen):
    doc = json.load(open(path, encoding="utf-8"))
    for i, e in enumerate(doc["traceEvents"] if isinstance(doc, dict) else doc):
        keys = set()
        for k, v in (e.get("args") or {}).items():
            if k.startswith("arg."):
                continue
            if k.startswith("evidence."):
                k = k[len("evidence."):]
            if is_num(v):
                keys.add(k)
        if keys:
            seen.append((label, "%s event %s" % (e.get("ph"), e.get("name")), keys))


bad = []
arg_names = set()  # the probes' argument names, of the exported ops


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    names = read_names(sys.argv[1])
    seen = []
    for arg in sys.argv[2:]:
        label, _, path = arg.partition("=")
        kind = label.split("-")[0]
        {"json": read_json, "sqlite": read_sqlite, "perfetto": read_perfetto}[kind](
            label, path, seen)
    used, told = set(), set()
    for label, where, keys in seen:
        for k in sorted(keys):
            canon = names.get(k)
            if canon is None and label.startswith("json") and \
                    (k in arg_names or (k.startswith("arg_") and k[4:] in arg_names)):
                continue  # an event's arguments (get_timeline, dump --json)
            if canon is None:
                if (k, label) not in told:
                    print("%s %s: '%s' is no name of the Names table (docs/report.md)"
                          % (label, where, k))
                    told.add((k, label))
                bad.append(k)
                continue
            used.add(k)
            if k not in canon and not canon & keys:
                print("%s %s: the 0.1 name '%s' without '%s' beside it"
                      % (label, where, k, "' or '".join(sorted(canon))))
                bad.append(k)
    listed = {n for k, c in names.items() if k in c for n in c}
    for n in sorted(listed - used):
        print("'%s' of the Names table is in no output" % n)
        bad.append(n)
    print("figure_names: %d names (%d of 0.1) in %d groups of %d outputs, %d problems"
          % (len(listed), len(names) - len(listed), len(seen),
             len(sys.argv) - 2, len(bad)))
    sys.exit(1 if bad else 0)


main()
