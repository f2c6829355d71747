#!/usr/bin/env bash
# report --html of a recorded scenario: simtrain's DataLoader starvation on
# simcuda (as t400) is recorded, and its page holds what report --json says
# (the checks of t520: samples and calls drawn, a histogram per op holding
# every call, the data starvation chain's summary verbatim with its timeline,
# a bar per process); headless Chromium renders it without a console message
# and a screenshot is saved here (and in IFT_TEST_OUT when set).  In CI a
# missing chromium fails the test.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-sim.sh"
. "$IFT_SRC/tests/e2e/lib-html.sh"
need_root
need_sim

sim_record loader loader --workers 4 --steps 300
assert_no_leftovers

"$IFT" report -i loader.trace --html loader.html 2>err.txt || fail "report --html failed: $(cat err.txt)"
html_check loader.html loader.json --name loader --samples || fail "the page is not the report (above)"
python3 - loader.json <<'PY' || fail "the recording has no chain to show (above)"
import json, sys
r = json.load(open(sys.argv[1]))
if not any(c["cause"] == "data_starvation" and c["timeline"] for c in r["chains"]):
    print("no data_starvation chain with a timeline: %r" % [c["cause"] for c in r["chains"]])
    sys.exit(1)
PY
echo "loader.html: $(wc -c <loader.html) bytes"

need_chromium
html_browse loader loader.html loader.json --samples
exit 0
