# discover -p PID finds a CUDA library a running process dlopen()ed, which no
# DT_NEEDED leads to; a process that is gone is an error.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/discover-lib.sh"
unset LD_LIBRARY_PATH

fake_cudart "$PWD/plugins" 1
cat >loader.c <<'SRC'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	void *h = argc > 2 ? dlopen(argv[1], RTLD_NOW) : NULL;
	FILE *f;

	if (!h)
		return 1;
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fclose(f);
	sleep(60);
	return 0;
}
SRC
cc -o loader loader.c -ldl || fail "cannot build loader"
./loader "$PWD/plugins/libcudart.so.12" ready &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for _ in $(seq 100); do [ -e ready ] && break; sleep 0.05; done
[ -e ready ] || fail "loader did not start"

discover -p "$pid"
expect_lib plugins/libcudart.so.12 proc-maps 5

# not found by the command's closure: only the running process has it
discover -- ./loader
expect_no_lib plugins/libcudart.so.12

kill $pid
wait $pid 2>/dev/null
err=$(expect_one_line_error "$IFT" discover -p "$pid")
exit 0
