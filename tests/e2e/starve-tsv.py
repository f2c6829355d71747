# SPDX-License-Identifier: MIT
"""A trace as tsv2trace input: a feeding thread (tid 101) blocked 5 ms between
200 us copies until a loader worker wakes it, on 2 CPUs, so report finds data
starvation before cudaMemcpy.  By default its process name and the command
line carry markup and quotes, for the escaping of report --html (t520, t521);
starve-tsv.py NAME CMDLINE gives plain ones, and a third argument "stacks"
two call sites (record --stack), every other copy from each (t301);
"pystacks" Python call sites (record --py-stack): two lines of Python, one
through two native paths, every fifth copy's frames read too late (t520),
and a profile (record --profile) of the workers: 4 samples a gap, 2 in
PIL's decoder (libz's code under it), 1 of them in the kernel, 1 in the
user's own line, and NVML's samples of one GPU every 20 ms (busy 4% of
each: the copies), the process holding memory on it (t007, t301);
"ranks" a NCCL job of two ranks: the thread is rank 1, which all-reduces
just before each copy, and process 300 is rank 0, which enters each
all-reduce at the start of the gap and sleeps there on CPU 1 until rank 1's
entry wakes it (t301, t506);
"gpubound" a thread that queues work ahead: a copy, then 2 ms waiting in
cudaStreamSynchronize, each after 3 ms on the CPU building its input, while NVML says the GPU was busy 97% of
the time (the gpu_bound chain by measurement, and a chain whose GPU did
not wait: t007, t301)."""
import sys

T0 = 10**9
NAME = sys.argv[1] if len(sys.argv) > 1 else "tr<i>&\"x'"
CMDLINE = (sys.argv[2] if len(sys.argv) > 2 else
           "./train --note '<script>alert(1)</script>' --and \"a&b\" <b>")
print("meta\tcmdline\t%s" % CMDLINE)
print("meta\tcpu.count\t2")
STACKS = len(sys.argv) > 3 and sys.argv[3] in ("stacks", "pystacks")
PY = len(sys.argv) > 3 and sys.argv[3] == "pystacks"
RANKS = len(sys.argv) > 3 and sys.argv[3] == "ranks"
BOUND = len(sys.argv) > 3 and sys.argv[3] == "gpubound"
NVML = PY or BOUND
print("op\tcudaMemcpy\t1\tdst,src,bytes,kind")
if BOUND:
    print("op\tcudaStreamSynchronize\t1\tstream")
if RANKS:
    print("op\tncclCommInitRank\t3\tcomm_out,nranks,rank")
    print("op\tncclAllReduce\t3\tcount,datatype,op,comm,stream")
NATIVE = ("/lib/libcudart.so.12,0x1000,cudaMemcpy,0,0\t/usr/lib/libtorch_cuda.so,0x4000,"
          "at::native::copy_(at::Tensor&),0x1a,0\t/usr/bin/python3.11,0x9999,"
          "_PyEval_EvalFrameDefault,0x30,1\t/usr/bin/python3.11,0x100,main,0x21,1")
CALLERS = "/home/u/train.py,80,main,0,4\t/home/u/train.py,99,<module>,0,4"
if PY:
    # 1: the dataloader's line, 2: the same line through ctypes, 3: the
    # user's own line, 4: native only (the frames read too late)
    print("meta\tpy.read\t50")
    print("stack\t%s\t/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py,631,"
          "_BaseDataLoaderIter.__next__,0,4\t/home/u/train.py,52,train_epoch,0,4\t%s"
          % (NATIVE, CALLERS))
    print("stack\t/lib/libcudart.so.12,0x1000,cudaMemcpy,0,0\t/usr/lib/libffi.so.8,0x7e2e,"
          "ffi_call_unix64,0x4e,0\t/usr/bin/python3.11,0x1a2b,_PyObject_MakeTpCall,0x8c,1"
          "\t/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py,631,"
          "_BaseDataLoaderIter.__next__,0,4\t/home/u/train.py,52,train_epoch,0,4\t%s" % CALLERS)
    print("stack\t%s\t/home/u/train.py,60,train_epoch,0,4\t%s" % (NATIVE, CALLERS))
    print("stack\t%s" % NATIVE)
    # 5: a worker in PIL, called from the user's dataset; 6: in its own line
    DATASET = "/home/u/dataset.py,27,Folder.__getitem__,0,4"
    print("stack\t/usr/lib/x86_64-linux-gnu/libz.so.1,0x4a46,-,0,0\t/usr/lib/x86_64-linux-gnu/"
          "libz.so.1,0x2100,inflate,0x50,0\t/usr/bin/python3.11,0x9999,_PyEval_EvalFrameDefault,"
          "0x30,1\t/usr/lib/python3/dist-packages/PIL/ImageFile.py,254,ImageFile.load,0,4\t%s"
          % DATASET)
    print("stack\t/usr/bin/python3.11,0x9999,_PyEval_EvalFrameDefault,0x30,1\t"
          "/home/u/dataset.py,30,Folder.__getitem__,0,4")
    print("meta\tprofile.hz\t99")
    print("meta\tprofile.period_ns\t10101010")
elif STACKS:
    print("stack\t/lib/libcudart.so.12,0x1000,cudaMemcpy,0,0\t/app/train,0x2345,_Z4feedv,0x15,0"
          "\t/usr/lib/libpython3.11.so,0x9999,_PyEval_EvalFrameDefault,0x30,1")
    print("stack\t/lib/libcudart.so.12,0x1000,cudaMemcpy,0,0\t-,0x7f0012345678,-,0,2")
print("tasks\t%d\t0\t100\t100\t4\t0\t0\t%s\t" % (T0 + 1000, NAME))
print("tasks\t%d\t0\t100\t100\t2\t100\t101\t%s\t" % (T0 + 1500, NAME))
for w in range(5):
    print("tasks\t%d\t0\t100\t100\t1\t%d\t%d\t%s\t" % (T0 + 2000 + 10 * w, 200 + w, 200 + w, NAME))
    print("tasks\t%d\t0\t%d\t%d\t4\t0\t0\tpt_data_worker\t" % (T0 + 2005 + 10 * w, 200 + w, 200 + w))
sw, wk, calls, prof = [], [], [], []
t = T0 + 1000000
if RANKS:
    print("tasks\t%d\t0\t300\t300\t4\t0\t0\trank0\t" % (T0 + 3000))
    for pid, rank in ((100, 1), (300, 0)):
        calls.append((t - 900000 + rank, 0, pid, pid + (pid == 100), "ncclCommInitRank",
                      100000, 0, 0, 0, 0x7f00, 2, rank, 0, 0, 0))
sw.append((t - 500000, 0, 0, 0, 0, 120, 100, 101, 120))
for i in range(50 if BOUND else 0):
    # on the CPU between the copies: no switch, no wake-up
    calls.append((t, 0, 100, 101, "cudaMemcpy", 100000, 0, 0, 0, 1, 2, 1 << 20, 1, 0, 0))
    calls.append((t + 100000, 0, 100, 101, "cudaStreamSynchronize", 2000000, 0, 0, 0, 0x7f00,
                  0, 0, 0, 0, 0))
    t += 5100000
for i in range(0 if BOUND else 50):
    site, flags = (1 + i % 2, 0) if not PY else (4, 8) if i % 5 == 4 else (1 + i % 3, 4)
    calls.append((t, 0, 100, 101, "cudaMemcpy", 200000, 0, flags, 0, 1, 2, 1 << 20, 1, 0, 0) +
                 ((site,) if STACKS else ()))
    if RANKS and i:
        # rank 1 all-reduces after its gap, rank 0 has waited since its start
        for pid, tid, start in ((100, 101, t - 20000), (300, 300, t - 5000000)):
            calls.append((start, 1, pid, tid, "ncclAllReduce", t - 10000 - start, 0, 0, 0,
                          1 << 20, 7, 0, 0x7f00, 0, 0))
        # rank 0 sleeps in its all-reduce; rank 1's entry wakes it
        sw.append((t - 4995000, 1, 300, 300, 1, 120, 0, 0, 120))
        wk.append((t - 15000, 0, 300, 300, 1, 120, 1, 100, 101))
        sw.append((t - 12000, 1, 0, 0, 0, 120, 300, 300, 120))
    t += 200000
    if i == 49:
        break
    w = 200 + i % 5
    sw.append((t + 10000, 0, 100, 101, 1, 120, w, w, 120))
    wk.append((t + 5008000, 1, 100, 101, 1, 120, 0, 200, 200))
    sw.append((t + 5010000, 0, w, w, 1 if w == 200 else 0, 120, 100, 101, 120))
    for k in range(4 if PY else 0):
        prof.append((t + 1000000 * (k + 1), 0, w, w, 5 if k < 2 else 6, 1 if k == 1 else 2))
    t += 5100000
for r in sorted(sw, key=lambda r: r[0]):
    print("switches\t" + "\t".join(map(str, r)))
for r in sorted(wk, key=lambda r: r[0]):
    print("wakeups\t" + "\t".join(map(str, r)))
for r in sorted(calls, key=lambda r: r[0]):
    print("calls\t" + "\t".join(map(str, r)))
for r in prof:
    print("profile\t" + "\t".join(map(str, r)))
if NVML:
    print("meta\tgpu.nvml\tok 1")
    print("meta\tgpu.util_source\tsamples")
    print("meta\tgpu.0.name\tNVIDIA H200")
    for k in range(1, (t - T0) // 20000000 + 1):
        ts = T0 + 20000000 * k
        print("gpu_samples\t%d\t0\t0\t0\t0\tutil.gpu_percent\t%d\t%d"
              % (ts, 97 if BOUND else 4, 20000000 if k > 1 else 0))
        print("gpu_samples\t%d\t0\t100\t0\t0\tproc.used_bytes\t%d\t0" % (ts, 1 << 30))
print("meta\trecord.start_ns\t%d" % T0)
print("meta\trecord.stop_ns\t%d" % (t + 1000000))
