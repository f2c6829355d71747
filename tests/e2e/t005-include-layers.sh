#!/usr/bin/env bash
# The halves meet only in the trace file (docs/architecture.md, "Which
# header each may include"): over every #include "..." line of src/ and
# include/, a file of the read half includes no header of the record half
# (arch, probe, ring, decode, record, discover, stack, sample, pystack) and the record half
# none of the read half's; in the read half the model (analyze) includes no
# renderer's (render, export, mcp); the shared layer (trace, util, and the
# headers ift-trace.h, ift-error.h, ift-words.h, ift-version.h) includes
# none of them; a folder's private header is included from that folder
# only.  The commands (src/*.c) may include anything.
# IFT_INCLUDE_ROOT=DIR checks another tree (the test's own failure case).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 >/dev/null || skip "needs python3"

check() {
	python3 - "$1" <<'PY'
import os, re, sys
root = sys.argv[1]
RECORD = {"arch", "probe", "ring", "decode", "record", "discover", "stack", "sample", "pystack",
          "gpu"}
MODEL = {"analyze"}
RENDER = {"render", "export", "mcp"}
SHARED = {"trace", "util"}
HEADERS = {
    "ift-arch.h": "record", "ift-probe.h": "record", "ift-ring.h": "record", "ift-ringq.h": "record", "ift-perfring.h": "record", "ift-decode.h": "record",
    "ift-record.h": "record", "ift-discover.h": "record", "ift-stack.h": "record",
    "ift-sample.h": "record", "ift-pystack.h": "record", "ift-gpu.h": "record",
    "ift-analyze.h": "model", "ift-chains.h": "model", "ift-job.h": "model",
    "ift-render.h": "render",
    "ift-export.h": "render", "ift-mcp.h": "render",
    "ift-trace.h": "shared", "ift-error.h": "shared", "ift-words.h": "shared",
    "ift-version.h": "shared",
}
MAY = {"shared": {"shared"}, "record": {"shared", "record"}, "model": {"shared", "model"},
       "render": {"shared", "model", "render"}, "cli": {"shared", "record", "model", "render"}}

def layer_of_dir(d):
    return ("record" if d in RECORD else "model" if d in MODEL else "render" if d in RENDER
            else "shared" if d in SHARED else None)

bad, n = [], 0
files = []
for d, _, names in os.walk(os.path.join(root, "src")):
    files += [os.path.join(d, f) for f in names if f.endswith((".c", ".h"))]
files += [os.path.join(root, "include", f) for f in os.listdir(os.path.join(root, "include"))
          if f.endswith(".h")]
for path in sorted(files):
    rel = os.path.relpath(path, root)
    parts = rel.split(os.sep)
    if parts[0] == "include":
        me, mydir = HEADERS.get(parts[1]), None
        if me is None:
            bad.append("%s: a public header no layer claims (add it to t005)" % rel)
            continue
    elif len(parts) == 2:
        me, mydir = "cli", ""
    else:
        mydir = parts[1]
        me = layer_of_dir(mydir)
        if me is None:
            bad.append("%s: a folder no layer claims (add it to t005)" % rel)
            continue
    for ln, line in enumerate(open(path, errors="replace"), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not m:
            continue
        n += 1
        inc = m.group(1)
        where = "%s:%d: #include \"%s\"" % (rel, ln, inc)
        if inc.startswith("../"):
            bad.append(where + ": a path out of its folder (-Isrc: \"util/x.h\")")
            continue
        if inc in HEADERS:
            them = HEADERS[inc]
        elif "/" in inc:
            them = layer_of_dir(inc.split("/")[0])
            if them is None:
                bad.append(where + ": not a folder of src/")
                continue
        else:
            # a private header: only its own folder's files
            if mydir is None or not os.path.exists(os.path.join(root, "src", mydir, inc)):
                bad.append(where + ": another folder's private header")
            continue
        if them not in MAY[me]:
            bad.append(where + ": the %s layer includes the %s layer's header" % (me, them))
for b in bad:
    print(b)
print("%d #include lines in %d files, %d against the layers" % (n, len(files), len(bad)))
sys.exit(1 if bad else 0)
PY
}

root=${IFT_INCLUDE_ROOT:-$IFT_SRC}
check "$root" >layers.txt || fail "backwards includes: $(cat layers.txt)"
grep -q '^[1-9][0-9]* #include lines' layers.txt || fail "no #include line read: $(cat layers.txt)"

# the check itself: a copy of the tree with one backwards edge fails it
mkdir -p bad/src/analyze bad/include
cp "$root"/include/*.h bad/include/
printf '#include "ift-probe.h"\n' >bad/src/analyze/x.c
if check "$PWD/bad" >bad.txt; then
	fail "a read-half file including ift-probe.h passed: $(cat bad.txt)"
fi
grep -q 'the model layer includes the record layer' bad.txt || fail "wrong reason: $(cat bad.txt)"

# A thread's role evidence (az_thread.roles, src/analyze/roles.h) is roles.c's
# alone: the scheduler's state and the roles are read one without the
# other.  Any other file of src/ that reaches into it fails; so does a copy
# of chains.c that does (the check itself).
owned() {
	grep -nE '(->|\.)roles\.[a-z_]+' "$@" | grep -v '^[^:]*roles\.c:' || true
}
files=$(cd "$root" && ls src/*/*.c)
out=$(cd "$root" && owned $files)
[ -z "$out" ] || fail "outside roles.c, a thread's role evidence is touched: $out"
{ cat "$root/src/analyze/chains.c"; printf 'int x(struct az_thread *th) { return th->roles.nfeeds; }\n'; } >chains.c
[ -n "$(owned chains.c)" ] || fail "a chains.c reading th->roles.nfeeds passed the ownership check"

# Chains are found and phrased on the public model: chains.c, chains-gpu.c
# and chains-text.c reach no private header of the analyzer (analyze.h,
# roles.h) through any chain of includes; only the pass side
# (chains-pass.c, chains-tally.c) reads the pass's own state.
private_reach() {
	python3 - "$root" "$@" <<'PY'
import os, re, sys
root, files = sys.argv[1], sys.argv[2:]
dirs = [os.path.join(root, "src", "analyze"), os.path.join(root, "src"), os.path.join(root, "include")]
for f in files:
    seen, todo = set(), [f]
    while todo:
        text = open(todo.pop()).read()
        for name in re.findall(r'^#include "([^"]+)"', text, re.M):
            for d in dirs:
                path = os.path.join(d, name)
                if os.path.exists(path) and path not in seen:
                    seen.add(path)
                    todo.append(path)
                    break
    bad = sorted(os.path.basename(p) for p in seen
                 if os.path.basename(p) in ("analyze.h", "roles.h"))
    if bad:
        print("%s reaches %s" % (os.path.basename(f), ", ".join(bad)))
PY
}
out=$(private_reach "$root/src/analyze/chains.c" "$root/src/analyze/chains-gpu.c" \
	"$root/src/analyze/chains-text.c")
[ -z "$out" ] || fail "chains built on the analyzer's private state: $out"
{ printf '#include "analyze.h"\n'; cat "$root/src/analyze/chains-text.c"; } >chains-text.c
[ -n "$(private_reach "$PWD/chains-text.c")" ] ||
	fail "a chains-text.c including analyze.h passed the check"
exit 0
