"""A real PyTorch DataLoader feeding a (stand-in) GPU.

An in-memory tensor of N x 100 float32 samples is consumed in batches, each
"sent to the device" through the CUDA runtime named by --cudart (the
stand-in, contrib/simcuda, via ctypes): cudaMemcpy host to device, a kernel
whose modelled time is --kernel-us, cudaStreamSynchronize.  The batches come
from one of two feeders (--mode):

  loader  torch.utils.data.DataLoader(TensorDataset(x), batch_size=B,
          shuffle=True, num_workers=--workers): per-sample __getitem__ and
          collate in forked worker processes named pt_data_worker, the
          main thread waiting for them
  direct  a pre-shuffled index, contiguous slices gathered into one reused
          buffer: torch.index_select(x, 0, idx[i:i+B], out=buf)

Prints its own truth as one JSON line on stdout: per-batch waits for data
(time.monotonic() around next()), per-call durations as seen from Python,
the wall time of the loop, and getrusage of the process.

    python3 torch-loader.py --cudart build/simcuda/libcudart.so.12 --mode loader
"""
import argparse
import ctypes
import json
import os
import resource
import sys
import time

T_START = time.monotonic_ns()  # the script's first moment: its span in the truth

import simrt
from simrt import Kernel, run_delay_ns, runtime, send, stats

FEATURES = 100


def name_worker(_):
    """Newer torch names its workers pt_data_worker itself; 1.13 does not."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(15, b"pt_data_worker", 0, 0, 0)  # PR_SET_NAME


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cudart", required=True)
    ap.add_argument("--mode", choices=("loader", "direct"), default="loader")
    ap.add_argument("--samples", type=int, default=400000)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--kernel-us", type=int, default=4000)
    ap.add_argument("--frames-log", metavar="FILE",
                    help="log each call's Python frames there (simrt.FRAMES)")
    args = ap.parse_args()
    if args.frames_log:
        simrt.FRAMES = []

    import torch
    from torch.utils.data import DataLoader, TensorDataset

    rt = runtime(args.cudart)
    kernel = Kernel(args.kernel_us, main)

    torch.manual_seed(0)
    x = torch.rand(args.samples, FEATURES, dtype=torch.float32)
    nbytes = args.batch * FEATURES * 4
    dev = ctypes.c_void_p()
    if rt.cudaMalloc(ctypes.byref(dev), nbytes) != 0:
        print("torch-loader: cudaMalloc failed", file=sys.stderr)
        return 1

    if args.mode == "loader":
        loader = DataLoader(TensorDataset(x), batch_size=args.batch, shuffle=True,
                            num_workers=args.workers, worker_init_fn=name_worker,
                            multiprocessing_context="fork")
        batches = (b[0] for b in loader)
    else:
        idx = torch.randperm(args.samples)
        buf = torch.empty(args.batch, FEATURES, dtype=torch.float32)

        def gather():
            for i in range(0, args.samples, args.batch):
                j = idx[i:i + args.batch]
                yield torch.index_select(x, 0, j, out=buf[:len(j)])
        batches = gather()

    waits, copies, launches, syncs, sync_iv = [], [], [], [], []
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    t_loop = time.monotonic_ns()
    it = iter(batches)
    while True:
        t0 = time.monotonic_ns()
        try:
            xb = next(it)
        except StopIteration:
            break
        t1 = time.monotonic_ns()
        ts = send(rt, dev, xb, kernel)
        if not ts:
            print("torch-loader: a CUDA call failed", file=sys.stderr)
            return 1
        t2, t3, t4, t5 = ts
        waits.append(t1 - t0)
        copies.append(t3 - t2)
        launches.append(t4 - t3)
        syncs.append(t5 - t4)
        sync_iv.append((t4, t5))
    wall = time.monotonic_ns() - t_loop
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "mode": args.mode, "pid": os.getpid(), "tid": os.getpid(),
        "samples": args.samples, "batch": args.batch, "batches": len(waits),
        "workers": args.workers if args.mode == "loader" else 0,
        "wall_ns": wall, "wait": stats(waits), "waits_ns": waits,
        "cudaMemcpy": stats(copies), "cudaLaunchKernel": stats(launches),
        "cudaStreamSynchronize": stats(syncs), "sync_iv": sync_iv,
        "nvcsw": ru.ru_nvcsw - ru0.ru_nvcsw, "nivcsw": ru.ru_nivcsw - ru0.ru_nivcsw,
        "torch": torch.__version__,
        "run_delay_ns": run_delay_ns(),
        "script_ns": time.monotonic_ns() - T_START,
    }), flush=True)
    if args.frames_log:
        with open(args.frames_log, "w") as f:
            json.dump(simrt.FRAMES, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
