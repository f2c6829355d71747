#!/usr/bin/env bash
# Regenerates the goldens of t030 (fixtures/golden) with the binary built
# here, and shows what changed.  A change to the goldens must be deliberate:
# run this only for a change in an output that is meant (a new figure, a
# fixed bug, a re-recorded fixture), read `git diff fixtures/golden`, and
# commit the goldens with the change that made them, saying why.
#   tests/golden/update.sh [IFT]     IFT: the binary (default ./ingero-ftrace)
set -eu
cd "$(dirname "$0")/../.."
ift=${1:-./ingero-ftrace}
[ -x "$ift" ] || { echo "update.sh: no binary '$ift' (make first)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/ift-golden.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
python3 tests/golden/gen.py "$ift" fixtures "$tmp/new"
cp fixtures/golden/README.md "$tmp/new/"
rm -rf fixtures/golden
mv "$tmp/new" fixtures/golden
git status --short fixtures/golden
