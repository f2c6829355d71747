# discover finds a library only LD_LIBRARY_PATH leads to, in ld.so's order:
# LD_LIBRARY_PATH before the program's RUNPATH, and not at all without it.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/discover-lib.sh"
unset LD_LIBRARY_PATH

app_src app.c
fake_cudart "$PWD/build" 1
fake_cudart "$PWD/ldp" 2
fake_cudart "$PWD/ldp2" 3
cc -o app app.c -L"$PWD/build" -l:libcudart.so.12 || fail "cannot link app"
readelf -d app | grep -qE 'RPATH|RUNPATH' && fail "test setup: app has a run path"

# without LD_LIBRARY_PATH nothing leads there
discover -- ./app
expect_no_lib ldp/libcudart.so.12
expect_no_lib build/libcudart.so.12

# with it; an empty element and a missing directory are passed over
export LD_LIBRARY_PATH="$PWD/missing::$PWD/ldp:$PWD/ldp2"
discover -- ./app
expect_as_ldso ./app ldp
expect_no_lib ldp2/libcudart.so.12

# a relative element is relative to the current directory
cd ldp2
LD_LIBRARY_PATH=. discover -- ../app
cd ..
mv ldp2/discover.out .
expect_lib ldp2/libcudart.so.12 DT_NEEDED 5

# before the program's RUNPATH, as ld.so takes it
cc -o app-runpath app.c -L"$PWD/build" -l:libcudart.so.12 \
	-Wl,--enable-new-dtags,-rpath,"$PWD/build" || fail "cannot link app-runpath"
LD_LIBRARY_PATH="$PWD/ldp" discover -- ./app-runpath
LD_LIBRARY_PATH="$PWD/ldp" expect_as_ldso ./app-runpath ldp
expect_no_lib build/libcudart.so.12
exit 0
