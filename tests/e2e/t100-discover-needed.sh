# discover follows an executable's DT_NEEDED closure as ld.so does, through
# DT_RUNPATH: the program's own, and a library's for its own dependencies
# (a RUNPATH does not reach the dependencies of dependencies).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/discover-lib.sh"
unset LD_LIBRARY_PATH

app_src app.c
fake_cudart "$PWD/lib" 1

# the program's RUNPATH
cc -o app app.c -L"$PWD/lib" -l:libcudart.so.12 -Wl,--enable-new-dtags,-rpath,"$PWD/lib" ||
	fail "cannot link app"
readelf -d app | grep -q RUNPATH || fail "test setup: app has no DT_RUNPATH"
readelf -d app | grep -q '(RPATH)' && fail "test setup: app has a DT_RPATH"
discover -v -- ./app
expect_as_ldso ./app lib
# the offsets are there with -v: one line per function after the library
awk -F'\t' '$1 == "" && $2 == "cudaMalloc" && $3 ~ /^0x[0-9a-f]+$/' discover.out | grep -q . ||
	fail "no offset for cudaMalloc in: $(cat discover.out)"

# the same program found on PATH
PATH="$PWD:$PATH" discover -- app
expect_as_ldso ./app lib

# through a library: app2 -> libmid.so (app2's RUNPATH) -> libcudart.so.12 (libmid's RUNPATH)
fake_cudart "$PWD/lib2" 2
mkdir -p mid
echo 'int cudaMalloc(void **p, unsigned long n); int mid(void) { void *p; return cudaMalloc(&p, 2); }' >mid.c
cc -shared -fPIC -o mid/libmid.so mid.c -L"$PWD/lib2" -l:libcudart.so.12 \
	-Wl,--enable-new-dtags,-rpath,"$PWD/lib2" || fail "cannot build libmid"
echo 'int mid(void); int main(void) { return mid(); }' >app2.c
cc -o app2 app2.c -L"$PWD/mid" -lmid -Wl,--enable-new-dtags,-rpath,"$PWD/mid" || fail "cannot link app2"
discover -- ./app2
expect_as_ldso ./app2 lib2
expect_no_lib lib/libcudart.so.12

# a RUNPATH is the loading object's only: libmid3 has none, so the program's
# RUNPATH does not find its libcudart, and neither does ld.so
mkdir -p mid3
cc -shared -fPIC -o mid3/libmid.so mid.c -L"$PWD/lib" -l:libcudart.so.12 || fail "cannot build libmid3"
cc -o app3 app2.c -L"$PWD/mid3" -lmid -Wl,--enable-new-dtags,-rpath,"$PWD/mid3:$PWD/lib" ||
	fail "cannot link app3"
[ "$(ldso_path ./app3 libcudart.so.12)" = "not found" ] ||
	fail "test setup: ld.so finds libcudart.so.12 for app3 at $(ldso_path ./app3 libcudart.so.12)"
discover -- ./app3
expect_no_lib lib/libcudart.so.12

# a command that does not exist: one line on stderr, status 1
err=$(expect_one_line_error "$IFT" discover -- ./no-such-program)
case $err in *"no-such-program"*) ;; *) fail "unexpected error: $err" ;; esac
exit 0
