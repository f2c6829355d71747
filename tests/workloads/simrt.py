"""What the Python workloads share: the stand-in CUDA runtime (contrib/simcuda)
through ctypes, a batch sent to the device the same way by each, and the
nearest-rank statistics of their truth (as the report computes them).

feeders.py and torch-loader.py import it from their own directory."""
import ctypes
import os
import sys
import threading
import time

H2D = 1

# A list to log each call of send() in, with the Python frames that made it
# (record --py-stack's truth: tests/e2e/pysitescheck.py); None: not logged.
FRAMES = None


def frame_chain(fr):
    """The Python frames from FR outwards as [file, qualified name, line],
    innermost first: what record --py-stack must give back."""
    out = []
    while fr is not None:
        code = fr.f_code
        out.append([code.co_filename, getattr(code, "co_qualname", code.co_name),
                    fr.f_lineno])
        fr = fr.f_back
    return out


def frames_here():
    """The caller's frame_chain() when FRAMES is a list; called on the line
    of a call, that line."""
    return None if FRAMES is None else frame_chain(sys._getframe(1))


def log_frames(op, start, end, frames):
    if FRAMES is not None:
        FRAMES.append({"tid": threading.get_native_id(), "op": op, "start": start,
                       "end": end, "frames": frames})


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def run_delay_ns():
    """This thread's run-queue wait so far as the scheduler counted it
    (/proc/thread-self/schedstat), or -1 where the kernel keeps none."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def stats(v):
    s = sorted(v)
    if not s:
        return {"n": 0, "sum_ns": 0, "p50_ns": 0, "p99_ns": 0, "max_ns": 0}
    rank = lambda p: s[max(1, -(-len(s) * p // 100)) - 1]  # nearest rank
    return {"n": len(s), "sum_ns": sum(s), "p50_ns": rank(50), "p99_ns": rank(99),
            "max_ns": s[-1]}


def runtime(path):
    """The runtime at PATH with the argument types of every call made here."""
    rt = ctypes.CDLL(path)
    rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    rt.cudaFree.argtypes = [ctypes.c_void_p]
    rt.cudaHostAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                                 ctypes.c_uint]
    rt.cudaGetDevice.argtypes = [ctypes.POINTER(ctypes.c_int)]
    rt.cudaGetDeviceCount.argtypes = [ctypes.POINTER(ctypes.c_int)]
    rt.cudaSetDevice.argtypes = [ctypes.c_int]
    rt.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3,
                                    ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                                    ctypes.c_void_p]
    rt.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]
    return rt


class Kernel:
    """A kernel the stand-in's device runs for about US microseconds (its
    grid, in blocks of SIMCUDA_BLOCK_NS), named by any host address."""

    def __init__(self, us, name):
        block_ns = int(os.environ.get("SIMCUDA_BLOCK_NS", "1000"))
        self.grid = Dim3(max(1, us * 1000 // block_ns), 1, 1)
        self.block = Dim3(256, 1, 1)
        self.func = ctypes.c_void_p(id(name))


def send(rt, dev, xb, kernel):
    """One training step on batch XB: cudaMemcpy to DEV, the kernel,
    cudaStreamSynchronize.  Returns the clock before each call and after the
    last (t2, t3, t4, t5), or None when a call failed."""
    xb = xb.contiguous()
    n = xb.numel() * xb.element_size()
    # each call shares its line with what logs its frames (frames_here())
    t2 = time.monotonic_ns(); ret = rt.cudaMemcpy(dev, xb.data_ptr(), n, H2D); f2 = frames_here()  # noqa: E702,E501
    t3 = time.monotonic_ns(); ret |= rt.cudaLaunchKernel(kernel.func, kernel.grid, kernel.block, None, 0, None); f3 = frames_here()  # noqa: E702,E501
    t4 = time.monotonic_ns(); ret |= rt.cudaStreamSynchronize(None); f4 = frames_here()  # noqa: E702
    t5 = time.monotonic_ns()
    if FRAMES is not None:
        log_frames("cudaMemcpy", t2, t3, f2)
        log_frames("cudaLaunchKernel", t3, t4, f3)
        log_frames("cudaStreamSynchronize", t4, t5, f4)
    return None if ret else (t2, t3, t4, t5)
