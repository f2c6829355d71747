"""A data-parallel job of N ranks, one process each, as torchrun starts
them: each rank computes a step on the stand-in CUDA runtime (a kernel of
--kernel-us, cudaStreamSynchronize) and then all-reduces its gradients
through the stand-in NCCL (contrib/simcuda/simnccl.c), whose collectives
return on no rank before every rank entered them.  Rank --slow gets its
batches from a worker process that starts each when asked and takes
--prep-ms of CPU for it (a starved input pipeline); the others' batches
are ready at once.  So the slow rank enters each all-reduce late and every
other rank waits for it there.

  ranks.py --cudart LIBCUDART --nccl LIBNCCL [--ranks 4] [--steps 30]
           [--slow 2] [--prep-ms 40] [--kernel-us 2000] [--id HEX --only R,...]
  ranks.py --nccl LIBNCCL --make-id

The launcher (no --rank) makes the communicator's id (or takes --id, one
that --make-id printed), starts the ranks (or those of --only: a node of a
job whose other ranks another launcher starts) and prints one JSON object
of their truth on stdout: per rank its pid,
thread id and rank, the all-reduce's count and datatype, and per step the
wait for its batch, its run-queue wait from the step's start to the
all-reduce (the scheduler's own count, /proc/thread-self/schedstat; -1
where the kernel keeps none), the same wait taken from the worker's post
of the batch to the rank's clock read after it (woke_ns: the kernel's
count misses a wait that a preempting wake-up ends), the all-reduce's entry and return on
CLOCK_MONOTONIC (the trace clock) and, between those two, its CPU time and
run-queue wait (at most what it spent around the call, outside the
probes: the ctypes call's way in and out, a preemption there).

A batch costs 40 ms of CPU by default and is made on demand, not ahead:
in an emulated guest a rank's own step takes tens of milliseconds, and a
worker preparing the next batch meanwhile had it ready (with 8 ms batches,
and in a 6.1 guest beside another with 40 ms ones): the slow rank was not
starved there.
"""
import argparse
import ctypes
import json
import os
import subprocess
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simrt  # noqa: E402

NCCL_FLOAT32, NCCL_SUM = 7, 0
COUNT = 1 << 20


class UniqueId(ctypes.Structure):
    """ncclUniqueId: 128 bytes, passed by value (in memory, per the ABI)."""
    _fields_ = [("internal", ctypes.c_char * 128)]


def nccl(path):
    lib = ctypes.CDLL(path)
    lib.ncclGetUniqueId.argtypes = [ctypes.c_void_p]
    lib.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                                     UniqueId, ctypes.c_int]
    lib.ncclAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                  ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                  ctypes.c_void_p]
    lib.ncclCommDestroy.argtypes = [ctypes.c_void_p]
    return lib


def burn(ms):
    """MS of this process's CPU time."""
    end = time.process_time() + ms / 1000
    x = 0
    while time.process_time() < end:
        x += 1
    return x


def feeder(conn, steps, prep_ms):
    """The slow rank's input worker: each batch PREP_MS of CPU, begun when
    the rank asks for it."""
    for _ in range(steps):
        conn.recv_bytes()
        burn(prep_ms)
        # when it posted, for the rank's own account of its wake-up
        conn.send_bytes(struct.pack("<q", time.monotonic_ns()))
    conn.close()


def rank_main(a):
    import multiprocessing as mp
    rt = simrt.runtime(a.cudart)
    nc = nccl(a.nccl)
    kernel = simrt.Kernel(a.kernel_us, "step")
    comm = ctypes.c_void_p()
    uid = UniqueId.from_buffer_copy(bytes.fromhex(a.id))
    if nc.ncclCommInitRank(ctypes.byref(comm), a.ranks, uid, a.rank):
        sys.exit("rank %d: ncclCommInitRank failed" % a.rank)
    slow = a.rank == a.slow
    if slow:
        conn, theirs = mp.get_context("fork").Pipe()
        worker = mp.get_context("fork").Process(target=feeder, args=(theirs, a.steps, a.prep_ms))
        worker.start()
        theirs.close()
    steps = []
    for _ in range(a.steps):
        d0 = simrt.run_delay_ns()
        t0 = time.monotonic_ns()
        posted = None
        if slow:
            conn.send_bytes(b"next")
            posted, = struct.unpack("<q", conn.recv_bytes())
        t1 = time.monotonic_ns()
        d1 = simrt.run_delay_ns()
        rt.cudaLaunchKernel(kernel.func, kernel.grid, kernel.block, None, 0, None)
        rt.cudaStreamSynchronize(None)
        d2 = simrt.run_delay_ns()
        c2 = time.thread_time_ns()
        t2 = time.monotonic_ns()
        ret = nc.ncclAllReduce(None, None, COUNT, NCCL_FLOAT32, NCCL_SUM, comm, None)
        t3 = time.monotonic_ns()
        c3 = time.thread_time_ns()
        d3 = simrt.run_delay_ns()
        if ret:
            sys.exit("rank %d: ncclAllReduce returned %d" % (a.rank, ret))
        # its time from the batch's post to its own clock read after it (on
        # the run queue, or on its way back from the read), and the kernel's
        # run-queue wait after that to the collective: what the scheduler
        # may have kept it from, where the kernel's count is short
        woke = (t1 - posted) + (d2 - d1 if d1 >= 0 else 0) if posted else 0
        steps.append({"data_wait_ns": t1 - t0, "run_delay_ns": d2 - d0 if d0 >= 0 else -1,
                      "woke_ns": woke,
                      "enter": t2, "exit": t3, "call_cpu_ns": c3 - c2,
                      "call_run_delay_ns": d3 - d2 if d2 >= 0 else -1})
    if slow:
        worker.join()
    nc.ncclCommDestroy(comm)
    print(json.dumps({"rank": a.rank, "pid": os.getpid(), "tid": os.getpid(),
                      "count": COUNT, "datatype": NCCL_FLOAT32, "op": NCCL_SUM,
                      "slow": slow, "steps": steps}), flush=True)


def make_id(a):
    nc = nccl(a.nccl)
    uid = UniqueId()
    if nc.ncclGetUniqueId(ctypes.byref(uid)):
        sys.exit("ncclGetUniqueId failed")
    return bytes(uid).hex()


def launch(a):
    uid = a.id or make_id(a)
    only = [int(r) for r in a.only.split(",")] if a.only else range(a.ranks)
    cmd = [sys.executable, os.path.abspath(__file__), "--cudart", a.cudart, "--nccl", a.nccl,
           "--ranks", str(a.ranks), "--steps", str(a.steps), "--slow", str(a.slow),
           "--prep-ms", str(a.prep_ms), "--kernel-us", str(a.kernel_us), "--id", uid]
    procs = [subprocess.Popen(cmd + ["--rank", str(r)], stdout=subprocess.PIPE)
             for r in only]
    ranks = []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode:
            sys.exit("a rank exited %d" % p.returncode)
        ranks.append(json.loads(out))
    print(json.dumps({"ranks": ranks, "slow": a.slow, "world": a.ranks}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cudart")
    ap.add_argument("--nccl", required=True)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--slow", type=int, default=2)
    ap.add_argument("--prep-ms", type=int, default=40)
    ap.add_argument("--kernel-us", type=int, default=2000)
    ap.add_argument("--rank", type=int)
    ap.add_argument("--id")
    ap.add_argument("--only", metavar="R,...")
    ap.add_argument("--make-id", action="store_true")
    a = ap.parse_args()
    if a.make_id:
        print(make_id(a))
    elif not a.cudart:
        ap.error("--cudart is required")
    elif a.rank is None:
        launch(a)
    else:
        rank_main(a)


if __name__ == "__main__":
    main()
