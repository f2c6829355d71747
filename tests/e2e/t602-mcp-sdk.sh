#!/usr/bin/env bash
# Interoperability: the official TypeScript SDK (@modelcontextprotocol/sdk,
# npm) connects to `ingero-ftrace mcp` through StdioClientTransport, lists
# and calls every tool (validating structuredContent against outputSchema),
# get_stacks on a trace with call sites too, and gets the prompt
# (mcp_sdk_check.js).  The SDK is installed by this test into
# $IFT_BUILD/npm (never by make); without node, npm or the network the test
# skips, except under CI=true, where it fails.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

missing() {
	if [ "${CI:-}" = true ]; then
		fail "$* (CI must run the SDK test: contrib/install-deps.sh test installs nodejs and npm)"
	fi
	skip "$*"
}

command -v node >/dev/null || missing "needs node (contrib/install-deps.sh test)"
command -v python3 >/dev/null || missing "needs python3 to build a trace with stacks"
npm_dir=${IFT_BUILD:-$IFT_SRC/build}/npm
sdk=$npm_dir/node_modules/@modelcontextprotocol/sdk
if [ ! -f "$sdk/package.json" ]; then
	command -v npm >/dev/null || missing "needs npm to install @modelcontextprotocol/sdk"
	mkdir -p "$npm_dir" || fail "cannot make $npm_dir"
	# a private prefix: nothing outside the build directory changes
	if ! timeout 300 npm install --prefix "$npm_dir" --no-audit --no-fund --no-save \
		@modelcontextprotocol/sdk >npm.log 2>&1; then
		tail -5 npm.log
		missing "cannot install @modelcontextprotocol/sdk from npm (offline?)"
	fi
fi
# a trace with call sites, for get_stacks (t603)
python3 "$IFT_SRC/tests/e2e/sites-tsv.py" sites.tsv expect.json || fail "sites-tsv.py failed"
"$IFT_TOOLS/tsv2trace" -o sites.trace <sites.tsv >/dev/null || fail "tsv2trace failed"
timeout 120 node "$IFT_SRC/tests/e2e/mcp_sdk_check.js" "$npm_dir" "$IFT" \
	"$IFT_FIXTURES/h200/direct.trace" sites.trace || fail "the SDK client (above)"
exit 0
