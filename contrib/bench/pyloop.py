"""pyloop.py N LIB [DEPTH]: calls cudaSetDevice of LIB (contrib/bench's
probe-tiny, or any library exporting it) N times through ctypes, from
DEPTH nested Python functions (default 8), and prints the wall ns per call
(the loop's time over N, Python's own cost included) on stdout: the
workload of contrib/bench/pystack.sh."""
import ctypes
import sys
import time


def nest(depth, fn):
    if depth:
        return nest(depth - 1, fn)
    return fn()


def main():
    n, lib = int(sys.argv[1]), ctypes.CDLL(sys.argv[2])
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    call = lib.cudaSetDevice
    call.argtypes = [ctypes.c_int]

    def loop():
        t0 = time.monotonic_ns()
        for _ in range(n):
            call(0)
        return time.monotonic_ns() - t0

    print("%.1f" % (nest(depth, loop) / n))


if __name__ == "__main__":
    main()
