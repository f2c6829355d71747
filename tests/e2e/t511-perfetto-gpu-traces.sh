#!/usr/bin/env bash
# export --format perfetto on traces recorded on an H200 (PyTorch DataLoader,
# direct and with N workers): format rules and exactly-once as in t510, and
# the chains of the report as instants with the report's own summaries.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || skip "needs python3 to parse JSON"
dir=$IFT_FIXTURES/h200
[ -r "$dir/direct.trace" ] && [ -r "$dir/loaderN.trace" ] || fail "no GPU traces in $dir"

for name in direct loaderN; do
	"$IFT" export -i "$dir/$name.trace" --format perfetto -o "$name.json" 2>err ||
		fail "export of $name failed: $(cat err)"
	python3 "$IFT_SRC/tests/e2e/perfetto_check.py" "$IFT" "$dir/$name.trace" "$name.json" ||
		fail "the export of $name breaks the format or loses events (above)"
	# nested driver calls are on the same thread, inside their runtime call
	grep -q '"cat":"cuda.driver","args":{"dur_ns":[0-9]*,"ret":[-0-9]*,"depth":1' "$name.json" ||
		fail "$name: no nested driver call"
	grep -q '"ph":"i","name":"HIGH data_starvation' "$name.json" ||
		fail "$name: the data starvation chain is not an instant"
done
exit 0
