"""Calls the stand-in CUDA runtime (contrib/simcuda) through ctypes from
known Python lines, functions and threads, and logs at each call the truth
that record --py-stack must give back: the thread's native id, the op, the
call's start and end on CLOCK_MONOTONIC (the trace clock) and the calling
thread's Python frames as sys._getframe() sees them at the call (file,
qualified name, line; innermost first).

  pysites.py LIBCUDART OUT.json [ROUNDS]

Each thread runs its own mix of paths: a synchronize after a kernel of a
known length (long: 300 us to 2 ms, so the call is in progress for longer
than a read takes, here and in an emulated guest; short: a few
microseconds, often over before its frames can be read), reached through functions of different depths, a method and
a lambda.  The frames are taken on the very line of the call (the
statements share it), so the innermost frame's line is the call's.
"""
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simrt  # noqa: E402

LOG = []
LOG_LOCK = threading.Lock()


def log(op, t0, t1, frames):
    with LOG_LOCK:
        LOG.append({"tid": threading.get_native_id(), "op": op, "start": t0,
                    "end": t1, "frames": frames})


def kernel(rt, us):
    k = simrt.Kernel(us, "k%d" % us)
    rt.cudaLaunchKernel(k.func, k.grid, k.block, None, 0, None)


def sync_long(rt):
    kernel(rt, 400)
    t0 = time.monotonic_ns(); rt.cudaStreamSynchronize(None); fr = simrt.frame_chain(sys._getframe())  # noqa: E702
    log("cudaStreamSynchronize", t0, time.monotonic_ns(), fr)


def sync_short(rt):
    t0 = time.monotonic_ns(); rt.cudaStreamSynchronize(None); fr = simrt.frame_chain(sys._getframe())  # noqa: E702
    log("cudaStreamSynchronize", t0, time.monotonic_ns(), fr)


def deeper(rt, depth):
    if depth:
        return deeper(rt, depth - 1)
    kernel(rt, 300)
    t0 = time.monotonic_ns(); rt.cudaStreamSynchronize(None); fr = simrt.frame_chain(sys._getframe())  # noqa: E702
    log("cudaStreamSynchronize", t0, time.monotonic_ns(), fr)


class Step:
    def __init__(self, rt):
        self.rt = rt

    def run(self):
        kernel(self.rt, 2000)
        t0 = time.monotonic_ns(); self.rt.cudaStreamSynchronize(None); fr = simrt.frame_chain(sys._getframe())  # noqa: E702
        log("cudaStreamSynchronize", t0, time.monotonic_ns(), fr)


def via_lambda(rt):
    kernel(rt, 1500)
    f = lambda: (time.monotonic_ns(), rt.cudaStreamSynchronize(None), simrt.frame_chain(sys._getframe()))  # noqa: E731
    t0, _, fr = f()
    log("cudaStreamSynchronize", t0, time.monotonic_ns(), fr)


def worker(rt, rounds, which):
    step = Step(rt)
    for i in range(rounds):
        if which == 0:
            sync_long(rt)
            sync_short(rt)
        elif which == 1:
            deeper(rt, 1 + i % 3)
            step.run()
        else:
            via_lambda(rt)
            sync_short(rt)


def main():
    rt = simrt.runtime(sys.argv[1])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    threads = [threading.Thread(target=worker, args=(rt, rounds, w), name="sites%d" % w)
               for w in (1, 2)]
    for t in threads:
        t.start()
    worker(rt, rounds, 0)
    for t in threads:
        t.join()
    with open(sys.argv[2], "w") as f:
        json.dump(LOG, f)


if __name__ == "__main__":
    main()
