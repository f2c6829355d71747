# A snapshot (record --keep-last) is a window of the recording written as a
# trace of its own (ift_trace_copy(), here through tests/tools/cutwindow).
# Its report must find what report finds in the same window of the whole
# trace: the same chains (cause, severity, phase, op, thread) in the same
# order, every op's calls, every event; and it must open alone, its tasks
# named.  On the recorded examples (starvation, a noisy neighbour, a
# page-allocation storm) and a generated trace, the middle half of each.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 >/dev/null || skip "needs python3 to compare JSON"

"$IFT_TOOLS/gentrace" -n 200000 -o gen.trace >/dev/null || fail "gentrace failed"
for tr in "$IFT_FIXTURES"/examples/dataloader-starvation.trace \
	  "$IFT_FIXTURES"/examples/noisy-neighbour.trace \
	  "$IFT_FIXTURES"/examples/page-alloc-storm.trace gen.trace; do
	name=$(basename "$tr" .trace)
	"$IFT" report --json -i "$tr" >"$name.json" || fail "report on $name failed"
	d=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["trace"]["duration_ns"])' \
		"$name.json")
	from=$((d / 4)) to=$((d * 3 / 4))
	"$IFT_TOOLS/cutwindow" "$tr" "$name.cut.trace" $from $to >/dev/null || fail "cutwindow $name failed"
	"$IFT" info --verify -i "$name.cut.trace" >"$name.info" 2>&1 || fail "$name's window does not open: $(cat "$name.info")"
	"$IFT" report --json --from ${from}ns --to ${to}ns -i "$tr" >"$name.whole.json" ||
		fail "report --from --to on $name failed"
	"$IFT" report --json -i "$name.cut.trace" >"$name.cut.json" || fail "report on $name's window failed"
	python3 - "$name" "$name.whole.json" "$name.cut.json" <<'PY' || fail "$name: the window's report differs (above)"
import json, sys
name, whole, cut = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
key = lambda r: [(c["cause"], c["severity"], c["phase"], c["op"], c["pid"], c["tid"])
                 for c in r["chains"]]
calls = lambda r: {o["op"]: o["calls"] for o in r["ops"]}
errs = []
if key(whole) != key(cut):
    errs.append("chains %s, in the whole trace's window %s" % (key(cut), key(whole)))
if calls(whole) != calls(cut):
    errs.append("calls %s, in the whole trace's window %s" % (calls(cut), calls(whole)))
if whole["trace"]["events"] != cut["trace"]["events"]:
    errs.append("%d events, %d in the whole trace's window" %
                (cut["trace"]["events"], whole["trace"]["events"]))
# every thread of the window is named: the tasks alive at its start came along
nameless = [t["tid"] for p in cut["processes"] for t in p["threads"] if not t.get("comm")]
if nameless:
    errs.append("threads without a name: %s" % nameless[:5])
print("  %s: %d chains, first %s" % (name, len(key(cut)), key(cut)[:1]))
if errs:
    sys.exit("\n".join("FAIL %s: %s" % (name, e) for e in errs))
PY
done
