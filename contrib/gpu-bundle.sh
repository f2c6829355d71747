#!/usr/bin/env bash
# Builds a self-contained copy of ingero-ftrace for a machine that has glibc but
# none of our libraries (libtracefs, libtraceevent, json-c, ...):
#
#   DIR/ingero-ftrace   linked with DT_RPATH=$ORIGIN/lib
#   DIR/lib/            the shared libraries it needs, except glibc's own
#
# DT_RPATH (not DT_RUNPATH: --disable-new-dtags) also covers the libraries'
# own dependencies, and nothing is put in LD_LIBRARY_PATH, so the traced
# command (python3 ...) never inherits our copies.
#
# usage: contrib/gpu-bundle.sh [DIR]     (default DIR: .gpu-bundle at the repo root)
# The object files go to build-gpu/; ./ingero-ftrace is left alone.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
dir=${1:-.gpu-bundle}
obj=build-gpu
max_mib=30

die() { echo "gpu-bundle: $*" >&2; exit 1; }

# 1. The binary.  '\$$ORIGIN': make turns $$ into $, the recipe's shell drops the \.
rm -f "$obj/ingero-ftrace"
make --no-print-directory O="$obj" \
	LDFLAGS="-Wl,--disable-new-dtags -Wl,-rpath,\\\$\$ORIGIN/lib" \
	"$obj/ingero-ftrace" >&2 || die "build failed"

rpath=$(readelf -d "$obj/ingero-ftrace" | sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p')
# shellcheck disable=SC2016  # a literal $ORIGIN
[ "$rpath" = '$ORIGIN/lib' ] || die "expected DT_RPATH \$ORIGIN/lib, found '${rpath:-none}'"

rm -rf "$dir"
mkdir -p "$dir/lib"
cp "$obj/ingero-ftrace" "$dir/ingero-ftrace"

# 2. The libraries: ldd's closure, less glibc and libgcc_s (every target has them).
is_system() {
	case $1 in
	linux-vdso.so.* | libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | \
		librt.so.* | ld-linux*.so.* | libgcc_s.so.* | libresolv.so.* | \
		libutil.so.* | libmvec.so.*) return 0 ;;
	esac
	return 1
}

n=0
while read -r name arrow path _; do
	[ "$arrow" = "=>" ] || continue
	is_system "$name" && continue
	[ -f "$path" ] || die "ldd: $name resolves to '$path', not a file"
	cp -L "$path" "$dir/lib/$name"
	n=$((n + 1))
done < <(ldd "$dir/ingero-ftrace")
[ "$n" -gt 0 ] || die "ldd found no library to bundle"

# 3. Every bundled name must now resolve from DIR/lib, and nothing be missing.
abs=$(cd "$dir" && pwd)
bad=0
while read -r name arrow path _; do
	[ "$arrow" = "=>" ] || continue
	if [ "$path" = "not" ]; then
		echo "gpu-bundle: $name not found" >&2
		bad=1
	elif ! is_system "$name" && [ "$path" != "$abs/lib/$name" ]; then
		echo "gpu-bundle: $name resolves to $path, not $abs/lib/$name" >&2
		bad=1
	fi
done < <(env -u LD_LIBRARY_PATH ldd "$dir/ingero-ftrace")
[ "$bad" = 0 ] || die "the bundle does not resolve from $dir/lib"
"$dir/ingero-ftrace" --version >/dev/null || die "$dir/ingero-ftrace does not run"

kib=$(du -skL "$dir" | cut -f1)
[ "$kib" -lt $((max_mib * 1024)) ] || die "bundle is $kib KiB, over $max_mib MiB"

env -u LD_LIBRARY_PATH ldd "$dir/ingero-ftrace"
echo "gpu-bundle: $dir: ingero-ftrace + $n libraries, $kib KiB ($("$dir/ingero-ftrace" --version))"
