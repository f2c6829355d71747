"""Real input pipelines feeding a (stand-in) GPU, each with its own truth.

A training-like program: start-up (import torch, pick the device, allocate
device memory, build the dataset), then a steady loop that takes one batch
from a feeder (--feeder KIND) and sends it to the device through the CUDA
runtime named by --cudart (the stand-in, contrib/simcuda, via ctypes):
cudaMemcpy host to device, cudaLaunchKernel (modelled time --kernel-us),
cudaStreamSynchronize, the same three calls for every batch; then a tail
(the feeder shut down, cudaDeviceSynchronize, cudaFree).  A batch is
--batch samples; each sample costs --reps rounds of small torch ops on one
CPU (per-sample __getitem__ work), and the samples are collated with
torch.stack.  torch runs one intra-op thread in every process
(torch.set_num_threads(1)), so no OpenMP pool wakes anyone.

The feeders, and the conclusion a report must reach on the starved run
(the healthy twin, --healthy, has cheaper batches, fewer workers than CPUs
and a longer kernel: the feeder keeps up, no HIGH or MEDIUM chain):

  loader      torch.utils.data.DataLoader, num_workers=4 (on 2 CPUs), workers
              forked and left named python3 (--name-workers: renamed
              pt_data_worker, as PyTorch 2 does).  Data starvation in the
              steady state, the CUDA thread woken by the 4 worker processes
              (role `input worker`: their threads, the mp.Queue feeder and
              the resource sharer, write the pipe and pass the fds).
  loader0     DataLoader with num_workers=0: the CUDA thread builds every
              batch itself.  Data starvation as on-CPU time in the gaps, no
              worker, nobody feeding it.
  pin         DataLoader, num_workers=4, pin_memory=True: the real
              torch.utils.data._utils.pin_memory._pin_memory_loop thread
              takes each batch from the workers and hands it on.  Data
              starvation, woke by the 4 workers, relayed by the pin thread
              (role `pin-memory thread`: it makes the host-memory CUDA calls).
  persistent  DataLoader, num_workers=4, persistent_workers=True, 2 epochs:
              the same 4 worker processes (not 8) feed both epochs.
  pool        multiprocessing.Pool(4).imap(build_batch, ...): the results
              reach the CUDA thread through Pool's result-handler thread in
              its own process.  Data starvation, woke by the 4 pool worker
              processes (`input worker`), relayed by the handler (`relay`).
  threads     concurrent.futures.ThreadPoolExecutor(4) in the same process,
              2 batches per thread in flight (GIL contention).  Data
              starvation, woke by the executor threads (`input thread`).
  queue       one threading.Thread prefetching into a queue.Queue(maxsize=2):
              it reads each batch's rows from a file (written at start-up)
              and builds the batch from them.  Data starvation, woke by the
              prefetch thread (`input thread`).
  iterable    an IterableDataset sharded by worker (get_worker_info: worker
              k yields every 4th batch's samples), DataLoader num_workers=4.
              Data starvation, woke by the 4 worker processes (`input
              worker`).
  vision      DataLoader, num_workers=4, over an image folder: __getitem__
              opens a PNG with PIL (Debian's python3-pil) and runs a
              torchvision transform (Resize, RandomHorizontalFlip, ToTensor,
              Normalize), as an ImageFolder pipeline does; the images (REPS
              pixels a side) are written at start-up.  Data starvation, woke
              by the 4 worker processes (`input worker`); with --epochs 2, a
              new loader's 4 each epoch (8 in all, 4 at once).
  tokens      DataLoader, num_workers=4, whose __getitem__ tokenizes text in
              pure Python (split, a vocabulary dict, padding; no torch op
              until torch.tensor of the ids).  Data starvation, woke by the 4
              worker processes (`input worker`).

CPU PyTorch 1.13 turns pinning off when torch.cuda.is_available() is False
(_BaseDataLoaderIter: `loader.pin_memory and torch.cuda.is_available()`).  For
`pin`, and for it only, three things of torch.cuda and one of the DataLoader
are patched, so that the real pin-memory thread runs and does on the stand-in
what torch's caching host allocator does on a GPU:

  torch.cuda.is_available   returns True (read once, when the iterator is made)
  torch.cuda.current_device cudaGetDevice of the stand-in (the iterator passes
                            it to the pin thread)
  torch.cuda.set_device     cudaSetDevice of the stand-in (the pin thread's
                            first call)
  torch.utils.data._utils.pin_memory.pin_memory
                            copies the batch into host memory from the
                            stand-in's cudaHostAlloc, called from the pin
                            thread: a ring of prefetch_factor * workers + 2
                            buffers, each allocated on its first use (at most
                            that many batches are in flight, so a buffer is
                            never reused while the CUDA thread still reads it)

Prints its own truth as one JSON line on stdout: the CUDA thread's pid and
tid, the feeders (worker pids, thread native ids), the relay thread's tid,
the wait per batch (time.monotonic_ns() around the next() that yields it;
an epoch's first batch also counts its iter()), the first batch apart, the
gaps between one batch's synchronize and the next one's copy as Python saw
them, per-call durations, the wall time of the loop, start-up and tail, and
getrusage.

    python3 feeders.py --cudart build/simcuda/libcudart.so.12 --feeder loader
"""
import argparse
import collections
import concurrent.futures
import ctypes
import json
import multiprocessing as mp
import os
import queue
import resource
import sys
import tempfile
import threading
import time

from simrt import Kernel, run_delay_ns, runtime, send, stats

FEATURES = 256
KINDS = ("loader", "loader0", "pin", "persistent", "pool", "threads", "queue", "iterable",
         "vision", "tokens")
# the kinds whose batches come from a DataLoader, and of them those with workers
LOADERS = ("loader", "loader0", "pin", "persistent", "iterable", "vision", "tokens")
WORKER_LOADERS = ("loader", "pin", "persistent", "iterable", "vision", "tokens")
IMAGES = 64  # the vision kind's folder

# per kind, starved and healthy: workers, samples per batch, rounds of
# torch ops per sample (~8 us each here), modelled kernel (us), batches per
# epoch.  A starved batch costs a worker ~8 ms of CPU against a 2 ms kernel:
# 4 workers on 2 CPUs cannot keep up.  A healthy one costs ~1 ms, with one
# worker (fewer than CPUs), against a kernel long enough that what every
# batch costs the CUDA thread anyway is small beside it: on torch 1.13 a
# DataLoader batch reaches the parent through ~12 round trips with the
# worker's threads (the pipe, then the fd of its shared memory through the
# worker's resource sharer, an authenticated connection each), 1-3 ms here
# however early the batch was ready, hence 120 ms kernels for those.
DEFAULTS = {
    # kind:        (starved,               healthy)
    "loader":     ((4, 32, 30, 2000, 100), (1, 32, 4, 120000, 12)),
    "loader0":    ((0, 32, 30, 2000, 80), (0, 32, 0, 20000, 50)),
    "pin":        ((4, 32, 30, 2000, 100), (1, 32, 4, 120000, 12)),
    "persistent": ((4, 32, 30, 2000, 50), (1, 32, 4, 120000, 6)),
    "pool":       ((4, 32, 30, 2000, 100), (1, 32, 4, 20000, 50)),
    "threads":    ((4, 32, 30, 2000, 80), (1, 32, 4, 20000, 50)),
    "queue":      ((1, 32, 30, 2000, 80), (1, 32, 4, 20000, 50)),
    "iterable":   ((4, 32, 30, 2000, 100), (1, 32, 4, 120000, 12)),
    # vision: REPS is the images' side in pixels
    "vision":     ((4, 32, 160, 2000, 100), (1, 32, 32, 120000, 12)),
    # tokens: REPS is words per sample / 8
    "tokens":     ((4, 32, 100, 2000, 100), (1, 32, 10, 120000, 12)),
}


# State a forked worker inherits: the dataset's base rows and the cost.
BASE = None
REPS = 1
# Who built batches: shared memory written once per worker at its start,
# so reporting costs no wake-up of the CUDA thread.
SEEN = None


def record_worker(slot=None):
    """Records this worker process's pid in SEEN (at `slot`, or the next free
    one: a later epoch's loader has workers of the same ids)."""
    with SEEN.get_lock():
        if slot is None or SEEN[slot]:
            slot = next(i for i, p in enumerate(SEEN) if p == 0)
        SEEN[slot] = os.getpid()


def sample(i):
    """Per-sample work, as a Dataset's __getitem__ decoding and augmenting does."""
    import torch
    v = BASE[i % len(BASE)]
    for _ in range(REPS):
        v = torch.tanh(v * 1.0001 + 0.001)
    return v


def build_batch(b, size):
    import torch
    return torch.stack([sample(b * size + j) for j in range(size)])


def pool_batch(arg):
    """A pool task: one batch, sent back by value (a numpy array)."""
    return build_batch(*arg).numpy()


def pool_init():
    import torch
    torch.set_num_threads(1)
    record_worker()


class Samples:
    """A map-style Dataset: per-sample work in __getitem__."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return sample(i)


def sharded_samples(nbatch, bsz):
    """An IterableDataset sharded by worker: worker K of N yields the samples
    of batches K, K + N, ... in turn, so that batches arrive in order as the
    DataLoader polls its workers round robin.  (Made here: torch is imported
    after the arguments are read.)"""
    from torch.utils.data import IterableDataset, get_worker_info

    class ShardedSamples(IterableDataset):
        def __iter__(self):
            w = get_worker_info()
            k, n = (w.id, w.num_workers) if w else (0, 1)
            for b in range(k, nbatch, n):
                for j in range(bsz):
                    yield sample(b * bsz + j)

    return ShardedSamples()


WORDS = ("the", "a", "gpu", "waits", "for", "its", "input", "while", "host", "threads",
         "build", "each", "batch", "of", "tokens", "from", "text", "and", "pad", "it")
VOCAB = {w: i + 2 for i, w in enumerate(WORDS)}


class Texts:
    """A map-style Dataset of text, tokenized in pure Python in __getitem__:
    the words split, each looked up in a dict, the ids padded to a fixed
    length; torch only wraps the list at the end."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import torch
        text = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(8 * REPS))
        ids = [VOCAB.get(w.lower().strip(".,"), 1) for w in text.split()]
        ids = (ids + [0] * FEATURES)[:FEATURES]
        return torch.tensor(ids, dtype=torch.float32)


class Images:
    """A map-style Dataset over a folder of PNGs, as torchvision's
    ImageFolder reads one: PIL decodes, a transform makes the tensor (one
    channel of a 16x16 resize: FEATURES values, so every kind sends the
    same bytes).  Each worker adds the CPU time its thread spent decoding
    (opening the file and PIL's convert, which runs the decoder) and in the
    transform to TIMES, shared with the main process: the truth of what the
    workers' CPU went to."""

    def __init__(self, folder, n):
        import torchvision.transforms as T
        self.folder, self.n = folder, n
        self.times = mp.get_context("fork").Array("d", 2)  # decode, transform
        self.tf = T.Compose([T.Resize((16, 16)), T.RandomHorizontalFlip(), T.ToTensor(),
                             T.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))])

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        from PIL import Image
        t0 = time.thread_time()
        with Image.open(os.path.join(self.folder, "%d.png" % (i % IMAGES))) as im:
            rgb = im.convert("RGB")
        t1 = time.thread_time()
        x = self.tf(rgb)
        t2 = time.thread_time()
        with self.times.get_lock():
            self.times[0] += t1 - t0
            self.times[1] += t2 - t1
        return x[0].flatten()


def write_images(side):
    """IMAGES PNGs of SIDE x SIDE pixels from the dataset's rows, with a
    photograph's grain (seeded noise: a PNG of repeated rows inflates in no
    time, and the transforms would take most of the workers' CPU, where
    decoding takes most of an image pipeline's), in a fresh directory
    (removed by the caller)."""
    import torch
    from PIL import Image
    d = tempfile.mkdtemp(prefix="feeders-")
    grain = torch.Generator().manual_seed(7)
    for k in range(IMAGES):
        row = BASE[k % len(BASE)]
        px = ((row.repeat(3 * side * side // FEATURES + 1)[:3 * side * side] + 1) * 127)
        px = px + torch.randint(-24, 25, px.shape, generator=grain)
        arr = px.clamp(0, 255).to(torch.uint8).view(side, side, 3).numpy()
        Image.fromarray(arr, "RGB").save(os.path.join(d, "%d.png" % k))
    return d


def write_batches(nbatch, bsz):
    """The rows each batch is built from, one file per batch, in a fresh
    directory (removed by the caller)."""
    import torch
    d = tempfile.mkdtemp(prefix="feeders-")
    for b in range(nbatch):
        rows = torch.stack([BASE[(b * bsz + j) % len(BASE)] for j in range(bsz)])
        with open(os.path.join(d, "%d.bin" % b), "wb") as f:
            f.write(rows.numpy().tobytes())
    return d


def prefetch(d, nbatch, bsz, q, tids):
    """The prefetch thread: reads each batch's file, builds the batch from
    its rows (the per-sample work), puts it in Q; None when done."""
    import torch
    tids.add(threading.get_native_id())
    for b in range(nbatch):
        with open(os.path.join(d, "%d.bin" % b), "rb") as f:
            raw = bytearray(f.read())
        rows = torch.frombuffer(raw, dtype=torch.float32).view(bsz, FEATURES)
        out = []
        for v in rows:
            for _ in range(REPS):
                v = torch.tanh(v * 1.0001 + 0.001)
            out.append(v)
        q.put(torch.stack(out))
    q.put(None)


def name_worker(wid, named):
    record_worker(wid)
    if named:  # newer torch names its workers pt_data_worker itself; 1.13 does not
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, b"pt_data_worker", 0, 0, 0)  # PR_SET_NAME


class WorkerInit:
    """worker_init_fn: picklable, so it would serve a spawn context too."""

    def __init__(self, named):
        self.named = named

    def __call__(self, wid):
        name_worker(wid, self.named)


class HostRing:
    """Pinned host buffers from the runtime's cudaHostAlloc, as torch's
    caching host allocator makes them: allocated on first use, by the
    thread that pins."""

    def __init__(self, rt, slots):
        self.rt, self.slots, self.bufs, self.next = rt, slots, [], 0
        self.allocs, self.tids = 0, set()

    def pin(self, data, device=None):
        import torch
        self.tids.add(threading.get_native_id())
        if not isinstance(data, torch.Tensor):  # a batch is one tensor here
            raise TypeError("cannot pin %r" % type(data))
        n = data.numel() * data.element_size()
        k = self.next % self.slots
        self.next += 1
        if k == len(self.bufs):
            p = ctypes.c_void_p()
            if self.rt.cudaHostAlloc(ctypes.byref(p), n, 0) != 0:
                raise RuntimeError("cudaHostAlloc failed")
            self.allocs += 1
            self.bufs.append((p.value, n))
        ptr, cap = self.bufs[k]
        if n > cap:
            raise RuntimeError("batch of %d bytes in a %d-byte pinned buffer" % (n, cap))
        raw = (ctypes.c_char * n).from_address(ptr)
        t = torch.frombuffer(raw, dtype=data.dtype, count=data.numel()).view(data.shape)
        t.copy_(data)
        return t


def patch_for_pinning(rt, ring):
    """The patches the module docstring lists: the real pin-memory thread on
    CPU torch, pinning through the stand-in runtime."""
    import torch
    import torch.utils.data._utils.pin_memory as pm

    def current_device():
        d = ctypes.c_int()
        if rt.cudaGetDevice(ctypes.byref(d)) != 0:
            raise RuntimeError("cudaGetDevice failed")
        return d.value

    def set_device(device):
        if rt.cudaSetDevice(int(device)) != 0:
            raise RuntimeError("cudaSetDevice failed")

    torch.cuda.is_available = lambda: True
    torch.cuda.current_device = current_device
    torch.cuda.set_device = set_device
    pm.pin_memory = ring.pin


def main():
    global BASE, REPS, SEEN
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cudart", required=True)
    ap.add_argument("--feeder", choices=KINDS, required=True)
    ap.add_argument("--healthy", action="store_true")
    ap.add_argument("--name-workers", action="store_true",
                    help="rename DataLoader workers pt_data_worker")
    ap.add_argument("--workers", type=int)
    ap.add_argument("--batch", type=int)
    ap.add_argument("--reps", type=int)
    ap.add_argument("--kernel-us", type=int)
    ap.add_argument("--batches", type=int, help="batches per epoch")
    ap.add_argument("--epochs", type=int,
                    help="epochs, a new loader's workers each but with persistent")
    args = ap.parse_args()
    d = DEFAULTS[args.feeder][1 if args.healthy else 0]
    workers = d[0] if args.workers is None else args.workers
    bsz = args.batch or d[1]
    REPS = d[2] if args.reps is None else args.reps
    kernel_us = args.kernel_us or d[3]
    nbatch = args.batches or d[4]
    epochs = args.epochs or (2 if args.feeder == "persistent" else 1)
    if args.feeder == "loader0":
        workers = 0

    import torch
    from torch.utils.data import DataLoader
    torch.set_num_threads(1)

    rt = runtime(args.cudart)
    kernel = Kernel(kernel_us, main)

    # start-up: the device, its memory, the dataset
    t_start = time.monotonic_ns()
    ndev = ctypes.c_int()
    dev = ctypes.c_void_p()
    nbytes = bsz * FEATURES * 4
    if (rt.cudaGetDeviceCount(ctypes.byref(ndev)) or rt.cudaSetDevice(0) or
            rt.cudaMalloc(ctypes.byref(dev), nbytes)):
        print("feeders: the CUDA start-up failed", file=sys.stderr)
        return 1
    torch.manual_seed(0)
    raw = torch.rand(4096, FEATURES, dtype=torch.float32)
    BASE = torch.stack([torch.tanh(r * 1.0001 + 0.001) for r in raw])  # ~40 ms
    SEEN = mp.get_context("fork").Array("i", max(workers, 1) * epochs)
    nsamples = nbatch * bsz

    ring, pool, executor, relay, feeder_tids, other = None, None, None, None, set(), {}
    built = {}  # executor thread -> batches it built
    files = None  # the folder of the kinds that read files
    if args.feeder in LOADERS:
        if args.feeder == "pin":
            ring = HostRing(rt, 2 * workers + 2)  # prefetch_factor 2
            patch_for_pinning(rt, ring)
        if args.feeder == "vision":
            files = write_images(REPS)
        data = (sharded_samples(nbatch, bsz) if args.feeder == "iterable" else
                Images(files, nsamples) if args.feeder == "vision" else
                Texts(nsamples) if args.feeder == "tokens" else Samples(nsamples))
        loader = DataLoader(data, batch_size=bsz, shuffle=False,
                            num_workers=workers, pin_memory=args.feeder == "pin",
                            persistent_workers=args.feeder == "persistent",
                            worker_init_fn=WorkerInit(args.name_workers) if workers else None,
                            multiprocessing_context="fork" if workers else None)
        epoch_iter = lambda: iter(loader)
    elif args.feeder == "pool":
        pool = mp.get_context("fork").Pool(workers, initializer=pool_init)
        relay = pool._result_handler.native_id
        other = {"pool task handler": pool._task_handler.native_id,
                 "pool worker handler": pool._worker_handler.native_id}

        def epoch_iter():
            res = pool.imap(pool_batch, ((b, bsz) for b in range(nbatch)))
            return (torch.from_numpy(a) for a in res)
    elif args.feeder == "queue":
        files = write_batches(nbatch, bsz)

        def epoch_iter():
            q = queue.Queue(maxsize=2)
            th = threading.Thread(target=prefetch, args=(files, nbatch, bsz, q, feeder_tids),
                                  name="prefetch", daemon=True)
            th.start()
            while True:
                xb = q.get()
                if xb is None:
                    th.join()
                    return
                yield xb
    else:
        executor = concurrent.futures.ThreadPoolExecutor(workers)

        def task(b):
            tid = threading.get_native_id()
            feeder_tids.add(tid)
            built[tid] = built.get(tid, 0) + 1
            return build_batch(b, bsz)

        def epoch_iter():
            ahead = collections.deque()
            nxt = 0
            while nxt < nbatch or ahead:
                while nxt < nbatch and len(ahead) < 2 * workers:
                    ahead.append(executor.submit(task, nxt))
                    nxt += 1
                yield ahead.popleft().result()

    waits, gaps, copies, launches, syncs, epoch_first = [], [], [], [], [], []
    it = None
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    t_loop = time.monotonic_ns()
    t_sync = None
    for ep in range(epochs):
        t0 = time.monotonic_ns()
        it = epoch_iter()
        while True:
            try:
                xb = next(it)
            except StopIteration:
                break
            t1 = time.monotonic_ns()
            ts = send(rt, dev, xb, kernel)
            if not ts:
                print("feeders: a CUDA call failed", file=sys.stderr)
                return 1
            t2, t3, t4, t5 = ts
            if not epoch_first or epoch_first[-1][0] != ep:
                epoch_first.append((ep, len(waits)))
            if not waits:
                # the steady loop, as the report's: from the first batch's
                # arrival, with the run-queue wait the kernel counts in it
                t_steady, rd_steady = t1, run_delay_ns()
            waits.append(t1 - t0)
            if t_sync is not None:
                gaps.append(t2 - t_sync)
            copies.append(t3 - t2)
            launches.append(t4 - t3)
            syncs.append(t5 - t4)
            t_sync = t5
            t0 = time.monotonic_ns()
        if args.feeder in WORKER_LOADERS and (ep == 0 or args.feeder != "persistent"):
            wpids = sorted((wpids if ep else []) + [w.pid for w in it._workers])
    t_end = time.monotonic_ns()
    rd_end = run_delay_ns()
    wall = t_end - t_loop
    ru = resource.getrusage(resource.RUSAGE_SELF)

    pin_tid = None
    if args.feeder == "pin":
        pin_tid = it._pin_memory_thread.native_id
    if args.feeder in WORKER_LOADERS:
        other = {"index queue feeder %d" % i: q._thread.native_id
                 for i, q in enumerate(it._index_queues) if q._thread is not None}
    if args.feeder == "pool":
        wpids = sorted(p.pid for p in pool._pool)

    # tail: the feeder goes, the device drains, the memory is freed
    del it
    if pool:
        pool.close()
        pool.join()
    if executor:
        executor.shutdown()
    if args.feeder in LOADERS:
        del loader
    if files:
        for f in os.listdir(files):
            os.unlink(os.path.join(files, f))
        os.rmdir(files)
    if rt.cudaDeviceSynchronize() or rt.cudaFree(dev):
        print("feeders: the CUDA tail failed", file=sys.stderr)
        return 1
    tail = time.monotonic_ns() - t_end

    seen = sorted(p for p in SEEN if p)
    if args.feeder in WORKER_LOADERS + ("pool",):
        if seen != wpids:
            print("feeders: the workers said %r, the parent knew %r" % (seen, wpids),
                  file=sys.stderr)
            return 1
        feeders = {"processes": wpids, "threads": []}
    elif args.feeder in ("threads", "queue"):
        feeders = {"processes": [], "threads": sorted(feeder_tids)}
    else:
        feeders = {"processes": [], "threads": []}
    if args.feeder == "pin":
        if ring.tids != {pin_tid}:
            print("feeders: pinned by %r, the pin thread is %d" % (ring.tids, pin_tid),
                  file=sys.stderr)
            return 1
        relay = pin_tid

    first = [i for _, i in epoch_first]
    print(json.dumps({
        "feeder": args.feeder, "healthy": args.healthy, "named": args.name_workers,
        "pid": os.getpid(), "tid": threading.get_native_id(), "cpus": os.cpu_count(),
        "workers": len(feeders["processes"]), "threads": len(feeders["threads"]),
        # a loader's workers: those of one epoch, but for persistent ones
        "workers_at_once": min(workers, len(feeders["processes"])),
        "feeders": feeders, "relay_tid": relay,
        "built": {str(t): n for t, n in sorted(built.items())},
        "relay_role": "pin-memory thread" if args.feeder == "pin" else
        "relay" if relay else None,
        "other_tids": other,
        "host_allocs": ring.allocs if ring else 0,
        "batch": bsz, "reps": REPS, "kernel_us": kernel_us, "epochs": epochs,
        "batches": len(waits), "epoch_first": first,
        "first_wait_ns": waits[0], "waits_ns": waits,
        "wait": stats(waits), "steady_wait": stats(waits[1:]), "run_delay_ns": run_delay_ns(),
        "steady_gap": stats(gaps), "gaps_ns": gaps,
        "startup_ns": t_loop - t_start + waits[0], "wall_ns": wall, "tail_ns": tail,
        "steady_ns": t_end - t_steady,
        "steady_run_delay_ns": rd_end - rd_steady if min(rd_end, rd_steady) >= 0 else -1,
        "cudaMemcpy": stats(copies), "cudaLaunchKernel": stats(launches),
        "cudaStreamSynchronize": stats(syncs),
        "utime_ns": int((ru.ru_utime - ru0.ru_utime) * 1e9),
        "stime_ns": int((ru.ru_stime - ru0.ru_stime) * 1e9),
        "nvcsw": ru.ru_nvcsw - ru0.ru_nvcsw, "nivcsw": ru.ru_nivcsw - ru0.ru_nivcsw,
        "torch": torch.__version__,
        # the vision workers' own clocks: their thread CPU decoding, transforming
        "decode_s": data.times[0] if args.feeder == "vision" else None,
        "transform_s": data.times[1] if args.feeder == "vision" else None,
    "torchvision": sys.modules["torchvision"].__version__ if "torchvision" in sys.modules
    else None,
    }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
