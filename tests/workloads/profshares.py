"""Input workers whose CPU is spent in known shares, feeding a stand-in GPU:
the truth of record --profile (tests/e2e/t703-profile-shares.sh).

WORKERS processes build batches for the CUDA thread through a
multiprocessing queue, more work than the CPUs keep up with, so the CUDA
thread waits for them (their role: input worker).  A batch costs a worker
three parts, each timed by the worker with time.thread_time() around it:
heavy() and light(), pure-Python loops of 3 and 1 units, and pack(),
zlib.compress of a buffer (its time in libz: the native frame the profile
must name).  The CUDA thread sends each batch with cudaMemcpy,
cudaLaunchKernel and cudaStreamSynchronize through the runtime at
--cudart (contrib/simcuda), by ctypes.  No torch: it runs everywhere.

It prints one JSON line per worker, at its end: its pid, its thread CPU in
each part, and its process's CPU in all (time.process_time(): every thread
of the worker, the queue's feeder thread too).
"""
import argparse
import ctypes
import json
import multiprocessing as mp
import os
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simrt  # noqa: E402


def heavy(units):
    s = 0
    for i in range(units * 3):
        s += i * i % 7
    return s


def light(units):
    s = 0
    for i in range(units):
        s += i * i % 7
    return s


def pack(buf, rounds):
    n = 0
    for _ in range(rounds):
        n += len(zlib.compress(buf, 9))
    return n


def worker(k, args, out, truth):
    spent = {"heavy": 0.0, "light": 0.0, "pack": 0.0}
    # compressible but not trivially: zlib works through all of it
    buf = bytes((i * 2654435761 >> 13) & 0x3f for i in range(1 << 16))
    for b in range(k, args.batches, args.workers):
        t = time.thread_time(); heavy(args.units); spent["heavy"] += time.thread_time() - t  # noqa: E702,E501
        t = time.thread_time(); light(args.units); spent["light"] += time.thread_time() - t  # noqa: E702,E501
        t = time.thread_time(); pack(buf, args.packs); spent["pack"] += time.thread_time() - t  # noqa: E702,E501
        out.put((b, bytes(4096)))
    out.close()
    out.join_thread()
    truth.put({"pid": os.getpid(), "cpu_s": time.process_time(), **spent})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cudart", required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--units", type=int, default=100000, help="light()'s loop, per batch")
    ap.add_argument("--packs", type=int, default=12, help="zlib.compress calls per batch")
    args = ap.parse_args()

    rt = simrt.runtime(args.cudart)
    dev = ctypes.c_void_p()
    if rt.cudaMalloc(ctypes.byref(dev), 4096):
        sys.exit("cudaMalloc failed")
    kernel = simrt.Kernel(200, main)
    ctx = mp.get_context("fork")
    out, truth = ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(k, args, out, truth))
             for k in range(args.workers)]
    for p in procs:
        p.start()
    host = ctypes.create_string_buffer(4096)
    for _ in range(args.batches):
        _, data = out.get()
        ctypes.memmove(host, data, len(data))
        ret = rt.cudaMemcpy(dev, host, len(data), simrt.H2D)
        ret |= rt.cudaLaunchKernel(kernel.func, kernel.grid, kernel.block, None, 0, None)
        ret |= rt.cudaStreamSynchronize(None)
        if ret:
            sys.exit("a CUDA call failed")
    for _ in procs:
        print(json.dumps(truth.get()), flush=True)
    for p in procs:
        p.join()
    rt.cudaFree(dev)


if __name__ == "__main__":
    main()
