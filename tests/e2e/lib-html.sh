# Helpers for the tests of `report --html` (t52x).  Sourced after lib.sh.
# htmlcheck.py holds the checks of a page (or the DOM a browser made of it)
# against `report --json` of the same trace.

# html_check PAGE REPORT.json [--samples]: the checks of htmlcheck.py.
html_check() {
	PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$IFT_SRC/tests/e2e${PYTHONPATH:+:$PYTHONPATH}" \
		python3 -m htmlcheck "$@"
}

# need_chromium: Debian's chromium (contrib/install-deps.sh test installs
# it).  Without it the test skips, except in CI, where the browser check
# must run.
need_chromium() {
	CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
	if [ -z "$CHROMIUM" ]; then
		if [ "${CI:-}" = true ]; then
			fail "needs chromium (contrib/install-deps.sh test), and CI must not skip it"
		fi
		skip "needs chromium (contrib/install-deps.sh test)"
	fi
}

# chromium_run NAME ARGS...: headless Chromium with a fresh profile and
# nothing that reaches the network, its stderr (the page's console
# included) into NAME.chromium.err.  Returns its status.
chromium_run() {
	local name=$1 rc
	shift
	rm -rf "$PWD/$name.profile"
	mkdir -p "$PWD/$name.home"
	# its own HOME: nothing of the user's is read or written.  No zygote and
	# the network service in the browser: under emulation (make
	# check-kernels) a child that takes over 15 s to connect is killed, and
	# a zygote that died took the renderers with it.  The timeout only
	# stops a hang: an emulated CPU took over 120 s for one screenshot
	HOME="$PWD/$name.home" timeout 600 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--no-zygote --enable-features=NetworkServiceInProcess2 \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$PWD/$name.profile" --enable-logging=stderr --v=0 \
		"$@" 2>"$name.chromium.err"
	rc=$?
	[ $rc = 124 ] && echo "chromium: stopped after 600 s" >>"$name.chromium.err"
	rm -rf "$PWD/$name.profile" "$PWD/$name.home"
	return $rc
}

# html_browse NAME PAGE REPORT.json [--samples]: renders PAGE in Chromium,
# saves the screenshot NAME.png (1280x4000) here, checks the DOM Chromium
# made of it and that the page logged nothing to the console (an error, a
# blocked load).
html_browse() {
	local name=$1 page=$2 json=$3 url
	shift 3
	url="file://$(realpath "$page")"
	chromium_run "$name.dom" --dump-dom "$url" >"$name.dom.html" ||
		fail "chromium --dump-dom of $page failed: $(tail -5 "$name.dom.chromium.err")"
	grep -q '<svg' "$name.dom.html" || fail "chromium made no DOM of $page: $(head -c 300 "$name.dom.html")"
	html_check "$name.dom.html" "$json" --name "$name (DOM)" "$@" ||
		fail "the DOM chromium made of $page is not the report (above)"
	# Chromium logs every console message, whatever its level, as CONSOLE;
	# its own pages' (source: chrome://..., such as "Slow network is
	# detected" in an emulated guest) are not the page's
	if grep -a 'CONSOLE' "$name.dom.chromium.err" | grep -av 'source: chrome://'; then
		fail "$page: messages on the console (above)"
	fi
	chromium_run "$name.shot" --window-size=1280,4000 --hide-scrollbars \
		--screenshot="$PWD/$name.png" "$url" >/dev/null ||
		fail "chromium --screenshot of $page failed: $(tail -5 "$name.shot.chromium.err")"
	if grep -a 'CONSOLE' "$name.shot.chromium.err" | grep -av 'source: chrome://'; then
		fail "$page: messages on the console (above)"
	fi
	python3 - "$name.png" <<'PY' || fail "the screenshot of $page is not a drawn 1280x4000 page"
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n" and d[12:16] == b"IHDR", "not a PNG"
w, h = struct.unpack(">II", d[16:24])
assert (w, h) == (1280, 4000), (w, h)
# a blank page compresses to a few KiB; text and charts do not
assert len(d) > 60000, "%d bytes: blank?" % len(d)
PY
	echo "screenshot: $PWD/$name.png"
	if [ -n "${IFT_TEST_OUT:-}" ]; then
		mkdir -p "$IFT_TEST_OUT" && cp "$name.png" "$IFT_TEST_OUT/" ||
			fail "cannot copy the screenshot to $IFT_TEST_OUT"
	fi
}
