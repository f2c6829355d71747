#!/usr/bin/env python3
"""The DataLoader starvation benchmark: in-memory MLP inference on a GPU.

N x 100 float32 samples live in host memory; each batch is copied to the
device, run through Linear(100,512)-ReLU-Linear(512,512)-ReLU-Linear(512,10)
under torch.no_grad(), and torch.cuda.synchronize() ends the step.  The
batches come from one of four feeders (--mode):

  slice    the original investigation's fast path, x[i:i+B].cuda(): a
           contiguous slice of the tensor in memory (a view, no gather, no
           shuffle), copied as it is
  direct   a pre-shuffled index (torch.randperm) cut in contiguous slices,
           one vectorized gather per batch: x[idx[i:i+B]]
  loader0  DataLoader(TensorDataset(x), batch_size=B, shuffle=True,
           num_workers=0): per-sample indexing and collation in this thread
  loaderN  the same with num_workers=--workers (persistent_workers=False,
           pin_memory=False): worker processes (pt_data_worker) index and
           collate, this thread waits for them

At the end it prints its own measurements as one JSON line on stdout (and
nothing else there); progress goes to stderr.  Times are time.monotonic():
"wait" is next(iterator) alone, "step" the copy to the device, the forward
pass and the synchronize.

    python3 dataloader_bench.py --mode loaderN --samples 7000000
    python3 dataloader_bench.py --mode slice --samples 7000000
    python3 dataloader_bench.py --device cpu --samples 100000 --batch 10000
"""
import argparse
import json
import os
import platform
import resource
import signal
import sys
import time

FEATURES = 100


class Interrupted(Exception):
    """SIGTERM (a timeout): stop the loop, still print what was measured."""


MAIN_PID = os.getpid()
_terms = []


def on_sigterm(signum, frame):
    if os.getpid() != MAIN_PID:  # a forked loader worker: just go
        os._exit(128 + signum)
    _terms.append(signum)
    if len(_terms) == 1:
        # The workers got the signal too (a timeout signals the whole process
        # group): their deaths must not turn into DataLoader errors here.
        signal.signal(signal.SIGCHLD, lambda *_: None)
        raise Interrupted()


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def stats(values):
    """Sum, nearest-rank p50, max and count of a list of seconds."""
    if not values:
        return {"n": 0, "sum_s": 0.0, "p50_s": 0.0, "max_s": 0.0}
    s = sorted(values)
    rank = max(1, -(-len(s) // 2))  # ceil(n / 2), nearest rank
    return {
        "n": len(s),
        "sum_s": round(sum(s), 6),
        "p50_s": round(s[rank - 1], 6),
        "max_s": round(s[-1], 6),
    }


def usage_now(who):
    ru = resource.getrusage(who)
    return {
        "nvcsw": ru.ru_nvcsw,
        "nivcsw": ru.ru_nivcsw,
        "minflt": ru.ru_minflt,
        "majflt": ru.ru_majflt,
        "utime_s": round(ru.ru_utime, 3),
        "stime_s": round(ru.ru_stime, 3),
    }


def usage_delta(after, before):
    return {k: round(after[k] - before[k], 3) for k in after}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("slice", "direct", "loader0", "loaderN"),
                    default="direct")
    ap.add_argument("--samples", type=int, default=7000000)
    ap.add_argument("--batch", type=int, default=1048576)
    ap.add_argument("--workers", type=int, default=4,
                    help="loaderN's num_workers (default 4)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.samples < 1 or args.batch < 1 or args.epochs < 1 or args.workers < 1:
        ap.error("--samples, --batch, --epochs and --workers must be positive")
    return args


def direct_batches(x, batch, generator):
    """Contiguous slices of a shuffled index; one gather per batch."""
    import torch

    idx = torch.randperm(x.shape[0], generator=generator)
    for i in range(0, x.shape[0], batch):
        yield x[idx[i:i + batch]]


def slice_batches(x, batch):
    """Contiguous slices of the tensor itself: views, nothing gathered."""
    for i in range(0, x.shape[0], batch):
        yield x[i:i + batch]


def run_epochs(args, make_iter, model, device, cuda, waits, steps, copies,
               iter_starts, counts):
    """The measured loop; appends to the lists and counts as it goes."""
    import torch

    t_loop = time.monotonic()
    with torch.no_grad():
        for epoch in range(args.epochs):
            t0 = time.monotonic()
            it = make_iter()
            iter_starts.append(time.monotonic() - t0)
            while True:
                t0 = time.monotonic()
                try:
                    xb = next(it)
                except StopIteration:
                    break
                t1 = time.monotonic()
                if isinstance(xb, (list, tuple)):
                    xb = xb[0]
                xd = xb.to(device, non_blocking=False)
                t2 = time.monotonic()
                out = model(xd)
                if cuda:
                    torch.cuda.synchronize()
                t3 = time.monotonic()
                waits.append(t1 - t0)
                copies.append(t2 - t1)
                steps.append(t3 - t1)
                counts["batches"] += 1
                counts["rows"] += xb.shape[0]
                if counts["batches"] == 1:
                    counts["checksum"] = float(out[0, 0])
                del xb, xd, out
            del it
            log("epoch %d: %d batches, %.2f s so far"
                % (epoch, counts["batches"], time.monotonic() - t_loop))


def main(argv=None):
    args = parse_args(argv)
    t_start = time.monotonic()

    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    t_import = time.monotonic()
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    if cuda and not torch.cuda.is_available():
        print("bench: error: CUDA is not available to torch %s (built for CUDA %s);"
              " use --device cpu for a CPU run" % (torch.__version__, torch.version.cuda),
              file=sys.stderr)
        return 2

    torch.manual_seed(args.seed)
    model = nn.Sequential(
        nn.Linear(FEATURES, 512), nn.ReLU(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 10),
    ).to(device).eval()

    # CUDA context, cuBLAS handles and kernels before anything is timed.
    with torch.no_grad():
        model(torch.zeros(1024, FEATURES, device=device))
    if cuda:
        torch.cuda.synchronize()
    t_warm = time.monotonic()

    log("%s: %d x %d float32 samples (%.2f GiB), batch %d, %s"
        % (args.mode, args.samples, FEATURES, args.samples * FEATURES * 4 / 2**30,
           args.batch, device))
    x = torch.rand(args.samples, FEATURES, dtype=torch.float32)
    t_data = time.monotonic()

    generator = torch.Generator()
    generator.manual_seed(args.seed)
    workers = 0
    if args.mode == "slice":
        # the copy in the loop, .to(device), is x[i:i+B].cuda() on cuda
        def make_iter():
            return slice_batches(x, args.batch)
    elif args.mode == "direct":
        def make_iter():
            return direct_batches(x, args.batch, generator)
    else:
        workers = args.workers if args.mode == "loaderN" else 0
        kw = {}
        if workers:
            # fork, as the default on Linux before Python 3.14: the workers
            # share x copy-on-write instead of receiving it pickled.
            kw["multiprocessing_context"] = "fork"
        loader = DataLoader(TensorDataset(x), batch_size=args.batch, shuffle=True,
                            num_workers=workers, persistent_workers=False,
                            pin_memory=False, generator=generator, **kw)

        def make_iter():
            return iter(loader)

    waits, steps, copies, iter_starts = [], [], [], []
    counts = {"batches": 0, "rows": 0, "checksum": 0.0}
    ru0 = usage_now(resource.RUSAGE_SELF)
    ruc0 = usage_now(resource.RUSAGE_CHILDREN)
    t_loop = time.monotonic()
    interrupted = False
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        run_epochs(args, make_iter, model, device, cuda, waits, steps, copies,
                   iter_starts, counts)
    except (Interrupted, RuntimeError):
        if not _terms:
            raise
        interrupted = True
        log("SIGTERM: stopped after %d batches" % counts["batches"])
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    t_end = time.monotonic()
    ru1 = usage_now(resource.RUSAGE_SELF)
    ruc1 = usage_now(resource.RUSAGE_CHILDREN)

    wall = t_end - t_loop
    wait_sum = sum(waits)
    result = {
        "mode": args.mode,
        "device": str(device),
        "samples": args.samples,
        "batch": args.batch,
        "epochs": args.epochs,
        "workers": workers,
        "batches": counts["batches"],
        "rows": counts["rows"],
        "wall_s": round(wall, 6),
        "wait": stats(waits),
        "first_wait_s": round(waits[0], 6) if waits else 0.0,
        "step": stats(steps),
        "h2d": stats(copies),
        "iter_start": stats(iter_starts),
        "wait_share": round(wait_sum / wall, 4) if wall > 0 else 0.0,
        "samples_per_s": round(counts["rows"] / wall, 1) if wall > 0 else 0.0,
        "setup_s": {
            "import": round(t_import - t_start, 3),
            "model_warmup": round(t_warm - t_import, 3),
            "data": round(t_data - t_warm, 3),
        },
        "rusage": ru1,
        "rusage_loop": usage_delta(ru1, ru0),
        "rusage_children_loop": usage_delta(ruc1, ruc0),
        "checksum": counts["checksum"],
        "interrupted": interrupted,
        "pid": os.getpid(),
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
    }
    # The one line on stdout.
    print(json.dumps(result, sort_keys=True), flush=True)
    log("%s: %d batches in %.2f s, waiting for data %.2f s (%.0f%%), GPU steps %.2f s"
        % (args.mode, counts["batches"], wall, wait_sum, 100.0 * result["wait_share"],
           result["step"]["sum_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
