# An image pipeline as torchvision's ImageFolder runs one: a DataLoader
# with 4 workers on 2 CPUs, each sample a PNG decoded by PIL and
# transformed by torchvision (Debian's python3-torchvision and
# python3-pil), for 2 epochs, a new loader's 4 workers each: the steady
# state must be data starvation woken by exactly the worker processes
# (input worker), with no rule of its own; the profile must put PIL's
# decoder first under the dataset's __getitem__, and the fix speak of
# decoding and of the 4 workers of a loader, not 8 (feedercheck.py
# decoding); the healthy twin has no HIGH or MEDIUM chain.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
. "$IFT_SRC/tests/e2e/lib-record.sh"
. "$IFT_SRC/tests/e2e/lib-feeders.sh"
need_torch
"$FEEDER_PY" -c 'import torchvision, PIL' 2>/dev/null || {
	[ "${CI:-}" = true ] &&
		fail "needs torchvision and PIL (contrib/install-deps.sh test), and CI must not skip it"
	skip "needs torchvision and PIL (apt-get install python3-torchvision python3-pil)"
}

feeder_record starved vision --epochs 2
feeder_record healthy vision --healthy
feeder_check starved starved || FEEDER_BAD=1
feeder_check decoding starved || FEEDER_BAD=1
feeder_check healthy healthy || FEEDER_BAD=1
feeder_done
