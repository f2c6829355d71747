# discover follows DT_RPATH with $ORIGIN as ld.so does: relative to the
# object's directory, inherited by the libraries the program loads, and
# searched before LD_LIBRARY_PATH.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/discover-lib.sh"
unset LD_LIBRARY_PATH

app_src app.c
mkdir -p pkg/bin
fake_cudart "$PWD/pkg/lib" 1
fake_cudart "$PWD/other" 2
cc -o pkg/bin/app app.c -L"$PWD/pkg/lib" -l:libcudart.so.12 \
	-Wl,--disable-new-dtags,-rpath,'$ORIGIN/../lib' || fail "cannot link app"
readelf -d pkg/bin/app | grep -q '(RPATH).*\$ORIGIN/../lib' || fail "test setup: no \$ORIGIN RPATH"
readelf -d pkg/bin/app | grep -q RUNPATH && fail "test setup: app has a RUNPATH"

discover -- ./pkg/bin/app
expect_as_ldso ./pkg/bin/app pkg/lib

# $ORIGIN is the program's directory, not the current one
cd pkg
"$IFT" discover -- bin/app >../discover.out || fail "discover from pkg/"
cd ..
expect_lib pkg/lib/libcudart.so.12 DT_NEEDED 5

# found on PATH, and through a symlink to the program: $ORIGIN is where the file is
ln -s "$PWD/pkg/bin/app" linked-app
PATH="$PWD/pkg/bin:$PATH" discover -- app
expect_lib pkg/lib/libcudart.so.12 DT_NEEDED 5
discover -- ./linked-app
expect_as_ldso ./linked-app pkg/lib

# RPATH comes before LD_LIBRARY_PATH
LD_LIBRARY_PATH="$PWD/other" discover -- ./pkg/bin/app
LD_LIBRARY_PATH="$PWD/other" expect_as_ldso ./pkg/bin/app pkg/lib
expect_no_lib other/libcudart.so.12

# the program's RPATH serves its libraries too: libmid (no run path of its
# own) needs libcudart, found through the program's ${ORIGIN}/../lib2
mkdir -p pkg2/bin
fake_cudart "$PWD/pkg2/lib2" 3
echo 'int cudaMalloc(void **p, unsigned long n); int mid(void) { void *p; return cudaMalloc(&p, 2); }' >mid.c
cc -shared -fPIC -o pkg2/lib2/libmid.so mid.c -L"$PWD/pkg2/lib2" -l:libcudart.so.12 ||
	fail "cannot build libmid"
echo 'int mid(void); int main(void) { return mid(); }' >app2.c
cc -o pkg2/bin/app2 app2.c -L"$PWD/pkg2/lib2" -lmid \
	-Wl,--disable-new-dtags,-rpath,'${ORIGIN}/../lib2' || fail "cannot link app2"
discover -- ./pkg2/bin/app2
expect_as_ldso ./pkg2/bin/app2 pkg2/lib2

# ... unless the library has a RUNPATH of its own: then no RPATH applies to
# its dependencies, not even the program's
mkdir -p pkg3/bin pkg3/lib
fake_cudart "$PWD/pkg3/lib-runpath" 4
cp pkg2/lib2/libcudart.so.12 pkg3/lib/
cc -shared -fPIC -o pkg3/lib/libmid.so mid.c -L"$PWD/pkg3/lib" -l:libcudart.so.12 \
	-Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib-runpath' || fail "cannot build libmid"
cc -o pkg3/bin/app3 app2.c -L"$PWD/pkg3/lib" -lmid \
	-Wl,--disable-new-dtags,-rpath,'$ORIGIN/../lib' || fail "cannot link app3"
discover -- ./pkg3/bin/app3
expect_as_ldso ./pkg3/bin/app3 pkg3/lib-runpath
expect_no_lib pkg3/lib/libcudart.so.12

# $LIB and $PLATFORM, where ld.so puts them (lib/x86_64-linux-gnu on Debian,
# lib64 elsewhere; $PLATFORM is AT_PLATFORM, or on Intel CPUs haswell or
# xeon_phi by the CPU's features): what this ld.so makes of them is read
# from its search path for a probe program, copies go in every candidate,
# and the one ld.so takes must be ours
echo 'int main(void) { return 0; }' >probe.c
cc -o probe probe.c -Wl,--disable-new-dtags,-rpath,"$PWD"'/probe-dir/$LIB/$PLATFORM' ||
	fail "cannot link the probe program"
# the last directory of the list is the run path itself, the others its
# hwcaps subdirectories
expanded=$(LD_DEBUG=libs ./probe 2>&1 >/dev/null |
	awk '/search path=.*\(RPATH from file .\/probe\)/ { sub(/.*search path=/, ""); sub(/[ \t]*\(RPATH.*/, ""); n = split($0, d, ":"); print d[n]; exit }')
expanded=${expanded#"$PWD/probe-dir/"}
[ -n "$expanded" ] || fail "test setup: no RPATH search path in ld.so's debug output"
echo "ld.so expands \$LIB/\$PLATFORM to $expanded"
for lib in lib/x86_64-linux-gnu lib64 "${expanded%/*}"; do
	for plat in x86_64 haswell xeon_phi "${expanded##*/}"; do
		[ -e "pkg4/$lib/$plat/libcudart.so.12" ] && continue
		fake_cudart "$PWD/pkg4/$lib/$plat" 5
	done
done
mkdir -p pkg4/bin
cc -o pkg4/bin/app app.c -L"$PWD/pkg4/lib64/x86_64" -l:libcudart.so.12 \
	-Wl,--disable-new-dtags,-rpath,'$ORIGIN/../$LIB/${PLATFORM}' || fail "cannot link pkg4 app"
used=$(ldso_path ./pkg4/bin/app libcudart.so.12)
[ "$used" = "$(realpath "pkg4/$expanded/libcudart.so.12")" ] ||
	fail "test setup: ld.so loads $used for pkg4/bin/app, not the copy in $expanded"
discover -- ./pkg4/bin/app
expect_lib "$used" DT_NEEDED 5
exit 0
