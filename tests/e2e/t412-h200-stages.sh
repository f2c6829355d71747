# Start-up against steady state on the real H200 run of direct indexing
# (fixtures/h200/direct.trace: the dataset built after the model's warm-up,
# a 6 s gap before the first batch).  The training loop is found: one
# iteration a batch, ceil(samples / batch) of them as its command line says;
# the start-up gap is a LOW chain of its own; no HIGH or MEDIUM chain owes
# most of its cost to one gap; and the steady state's host-bound gather is
# what it is: the feeding thread builds each batch itself on the CPU.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

trace=$IFT_SRC/fixtures/h200/direct.trace
[ -r "$trace" ] || fail "no $trace"
"$IFT" report --json -i "$trace" >r.json || fail "report failed"
"$IFT" info -i "$trace" >info.txt || fail "info failed"

python3 - r.json info.txt <<'PY' || fail "the report does not separate the start-up (above)"
import json, re, sys
r = json.load(open(sys.argv[1]))
cmd = [l for l in open(sys.argv[2]) if l.startswith("cmdline")][0]
samples = int(re.search(r"--samples (\d+)", cmd).group(1))
batch = int(re.search(r"--batch (\d+)", cmd).group(1))
batches = -(-samples // batch)
bad = []
cuda = [t for p in r["processes"] for t in p["threads"] if t["role"] == "cuda thread"]
if len(cuda) != 1:
    bad.append("cuda threads: %r" % [t["tid"] for t in cuda])
loop = cuda[0]["loop"] if cuda else None
print("loop: %r, the command asks for %d batches" % (loop, batches))
if not loop or loop["iterations"] + loop["warmup"] != batches:
    bad.append("the loop has %r iterations, the run made %d batches" % (loop, batches))
startup = [c for c in r["chains"] if c["stage"] == "startup"]
steady = [c for c in r["chains"] if c["stage"] == "steady"]
for c in r["chains"]:
    print("%-6s %-8s %-20s %8.1f ms  worst gap %8.1f ms" % (
        c["severity"], c["stage"], c["cause"], c["cost_ns"] / 1e6,
        c["evidence"].get("worst_gap_ns", 0) / 1e6))
    if c["stage"] != "steady" and c["severity"] != "LOW":
        bad.append("a %s chain ranks %s" % (c["stage"], c["severity"]))
    if c["severity"] != "LOW" and 2 * c["evidence"].get("worst_gap_ns", 0) > c["cost_ns"]:
        bad.append("%s chain owes most of its cost to one gap: %s" % (c["severity"], c["summary"]))
# the 6 s before the first batch: start-up, on CPU building the dataset
big = max((c["evidence"].get("worst_gap_ns", 0) for c in startup), default=0)
if big < 5e9 or loop and big > loop["from_ns"]:
    bad.append("no start-up chain holds the gap before the loop: %r" % [c["summary"] for c in startup])
top = r["chains"][0] if r["chains"] else None
if not top or top["stage"] != "steady" or top["cause"] != "data_starvation" or \
        "built its input itself" not in top["summary"] or top["severity"] == "LOW":
    bad.append("the first chain is not the steady state's feeding thread building its "
               "batches: %r" % (top and top["summary"]))
elif not any("num_workers" in x for x in top["recommendations"]):
    bad.append("no loader with workers among the fixes: %r" % top["recommendations"])
for b in bad:
    print(b)
raise SystemExit(1 if bad else 0)
PY
exit 0
