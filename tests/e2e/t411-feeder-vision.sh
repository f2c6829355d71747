# An image pipeline as torchvision's ImageFolder runs one: a DataLoader
# with 4 workers on 2 CPUs, each sample a JPEG decoded by PIL and
# transformed by torchvision (Debian's python3-torchvision and
# python3-pil): the steady state must be data starvation woken by exactly
# the 4 worker processes (input worker), with no rule of its own; the
# healthy twin has no HIGH or MEDIUM chain.
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

feeder_pair vision
feeder_done
