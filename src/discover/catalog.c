// SPDX-License-Identifier: MIT
/*
 * The CUDA and NCCL functions we trace and the arguments worth a column.
 * Each function's parameters are given by class, in order (SIG, the letters
 * of ift-arch.h: 'i' an integer or pointer, 'd' a dim3 by value, 'u' an
 * ncclUniqueId by value), and each argument kept by its parameter's index:
 * where that is at the function's first instruction is the calling
 * convention's business (ift_arch_arg_fetch), so one catalog serves x86-64
 * and aarch64.  All arguments are fetched as u64: a dim3 by value yields its
 * first eightbyte (x and y, part 0) or its second (z, part 1), and a field of
 * a struct passed by pointer is read at its offset (DEREF).
 */
#include <errno.h>
#include <string.h>

#include "ift-arch.h"
#include "ift-discover.h"

#define RT IFT_API_RUNTIME
#define DRV IFT_API_DRIVER
#define NCCL IFT_API_NCCL

/* argument NAME: parameter P itself, eightbyte PART of it, a u64 at OFF of it */
#define A(name, p)		{ (name), (p), 0, -1 }
#define PART(name, p, part)	{ (name), (p), (part), -1 }
#define AT(name, p, off)	{ (name), (p), 0, (off) }
#define NONE			{ A(NULL, 0) }

const struct ift_func_spec ift_cuda_funcs[] = {
	/* ---- runtime: memory ---- */
	/* cudaMalloc(void **ptr, size_t size) */
	{ "cudaMalloc", RT, "ii", 1, { A("bytes", 1) } },
	{ "cudaFree", RT, "i", 1, { A("ptr", 0) } },
	/* cudaMallocManaged(void **ptr, size_t size, unsigned flags) */
	{ "cudaMallocManaged", RT, "iii", 2, { A("bytes", 1), A("flags", 2) } },
	{ "cudaMallocHost", RT, "ii", 1, { A("bytes", 1) } },
	{ "cudaHostAlloc", RT, "iii", 2, { A("bytes", 1), A("flags", 2) } },
	{ "cudaFreeHost", RT, "i", 1, { A("ptr", 0) } },
	/* cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream) */
	{ "cudaMallocAsync", RT, "iii", 2, { A("bytes", 1), A("stream", 2) }, true },
	{ "cudaFreeAsync", RT, "ii", 2, { A("ptr", 0), A("stream", 1) }, true },
	/* cudaMemcpy(dst, src, count, kind) */
	{ "cudaMemcpy", RT, "iiii", 4, { A("dst", 0), A("src", 1), A("bytes", 2),
					 A("kind", 3) }, true },
	{ "cudaMemcpyAsync", RT, "iiiii", 5, { A("dst", 0), A("src", 1), A("bytes", 2),
					       A("kind", 3), A("stream", 4) }, true },
	/* cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind) */
	{ "cudaMemcpy2D", RT, "iiiiiii", 5, { A("dst", 0), A("src", 2), A("width", 4),
					      A("height", 5), A("kind", 6) }, true },
	{ "cudaMemcpy2DAsync", RT, "iiiiiiii", 6, { A("dst", 0), A("src", 2), A("width", 4),
						    A("height", 5), A("kind", 6),
						    A("stream", 7) }, true },
	/* cudaMemset(ptr, value, count) */
	{ "cudaMemset", RT, "iii", 2, { A("ptr", 0), A("bytes", 2) }, true },
	{ "cudaMemsetAsync", RT, "iiii", 3, { A("ptr", 0), A("bytes", 2), A("stream", 3) },
	  true },
	/* ---- runtime: work submission ---- */
	/* cudaLaunchKernel(func, dim3 grid, dim3 block, args, sharedMem, stream) */
	{ "cudaLaunchKernel", RT, "iddiii", 5, { A("func", 0), PART("grid_xy", 1, 0),
						 PART("block_xy", 2, 0), A("shared_mem", 4),
						 A("stream", 5) }, true },
	/*
	 * cudaLaunchKernelExC(config, func, args): config->gridDim at 0,
	 * config->stream at 32 (two dim3 and a size_t before it)
	 */
	{ "cudaLaunchKernelExC", RT, "iii", 3, { A("func", 1), AT("grid_xy", 0, 0),
						 AT("stream", 0, 32) }, true },
	{ "cudaGraphLaunch", RT, "ii", 2, { A("graph", 0), A("stream", 1) }, true },
	{ "cudaEventRecord", RT, "ii", 2, { A("event", 0), A("stream", 1) }, true },
	{ "cudaStreamWaitEvent", RT, "iii", 2, { A("stream", 0), A("event", 1) }, true },
	/* ---- runtime: waiting ---- */
	{ "cudaStreamSynchronize", RT, "i", 1, { A("stream", 0) }, true },
	{ "cudaDeviceSynchronize", RT, "", 0, NONE },
	{ "cudaEventSynchronize", RT, "i", 1, { A("event", 0) } },
	/* ---- runtime: devices ---- */
	{ "cudaSetDevice", RT, "i", 1, { A("device", 0) } },
	{ "cudaGetDeviceCount", RT, "i", 0, NONE },
	{ "cudaStreamCreate", RT, "i", 0, NONE },

	/* ---- driver ---- */
	/*
	 * cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sharedMem, stream, params,
	 * extra)
	 */
	{ "cuLaunchKernel", DRV, "iiiiiiiiiii", 5, { A("func", 0), A("grid_x", 1),
						     A("block_x", 4), A("shared_mem", 7),
						     A("stream", 8) }, true },
	/* cuLaunchKernelEx(config, f, params, extra): config->hStream at 32 */
	{ "cuLaunchKernelEx", DRV, "iiii", 3, { A("func", 1), AT("grid_x", 0, 0),
						AT("stream", 0, 32) }, true },
	/* cuMemAlloc(CUdeviceptr *dptr, size_t bytesize) */
	{ "cuMemAlloc", DRV, "ii", 1, { A("bytes", 1) } },
	{ "cuMemAlloc_v2", DRV, "ii", 1, { A("bytes", 1) } },
	{ "cuMemAllocManaged", DRV, "iii", 2, { A("bytes", 1), A("flags", 2) } },
	{ "cuMemFree", DRV, "i", 1, { A("ptr", 0) } },
	{ "cuMemFree_v2", DRV, "i", 1, { A("ptr", 0) } },
	/* cuMemcpy(dst, src, ByteCount) and the directed copies alike */
	{ "cuMemcpy", DRV, "iii", 3, { A("dst", 0), A("src", 1), A("bytes", 2) }, true },
	{ "cuMemcpyAsync", DRV, "iiii", 4, { A("dst", 0), A("src", 1), A("bytes", 2),
					     A("stream", 3) }, true },
	{ "cuMemcpyHtoD_v2", DRV, "iii", 3, { A("dst", 0), A("src", 1), A("bytes", 2) }, true },
	{ "cuMemcpyDtoH_v2", DRV, "iii", 3, { A("dst", 0), A("src", 1), A("bytes", 2) }, true },
	{ "cuMemcpyDtoD_v2", DRV, "iii", 3, { A("dst", 0), A("src", 1), A("bytes", 2) }, true },
	{ "cuMemcpyHtoDAsync_v2", DRV, "iiii", 4, { A("dst", 0), A("src", 1), A("bytes", 2),
						    A("stream", 3) }, true },
	{ "cuMemcpyDtoHAsync_v2", DRV, "iiii", 4, { A("dst", 0), A("src", 1), A("bytes", 2),
						    A("stream", 3) }, true },
	{ "cuMemcpyDtoDAsync_v2", DRV, "iiii", 4, { A("dst", 0), A("src", 1), A("bytes", 2),
						    A("stream", 3) }, true },
	{ "cuCtxSynchronize", DRV, "", 0, NONE },
	{ "cuStreamSynchronize", DRV, "i", 1, { A("stream", 0) }, true },
	{ "cuEventSynchronize", DRV, "i", 1, { A("event", 0) } },
	/*
	 * ---- NCCL (libnccl.so.2): collectives, point to point, groups ----
	 * ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream)
	 */
	{ "ncclAllReduce", NCCL, "iiiiiii", 5, { A("count", 2), A("datatype", 3), A("op", 4),
						 A("comm", 5), A("stream", 6) } },
	/* ncclBroadcast(sendbuff, recvbuff, count, datatype, root, comm, stream) */
	{ "ncclBroadcast", NCCL, "iiiiiii", 5, { A("count", 2), A("datatype", 3), A("root", 4),
						 A("comm", 5), A("stream", 6) } },
	/* ncclReduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream) */
	{ "ncclReduce", NCCL, "iiiiiiii", 6, { A("count", 2), A("datatype", 3), A("op", 4),
					       A("root", 5), A("comm", 6), A("stream", 7) } },
	/* ncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream) */
	{ "ncclAllGather", NCCL, "iiiiii", 4, { A("count", 2), A("datatype", 3), A("comm", 4),
						A("stream", 5) } },
	/* ncclReduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream) */
	{ "ncclReduceScatter", NCCL, "iiiiiii", 5, { A("count", 2), A("datatype", 3),
						     A("op", 4), A("comm", 5),
						     A("stream", 6) } },
	/* ncclSend(sendbuff, count, datatype, peer, comm, stream), ncclRecv alike */
	{ "ncclSend", NCCL, "iiiiii", 5, { A("count", 1), A("datatype", 2), A("peer", 3),
					   A("comm", 4), A("stream", 5) } },
	{ "ncclRecv", NCCL, "iiiiii", 5, { A("count", 1), A("datatype", 2), A("peer", 3),
					   A("comm", 4), A("stream", 5) } },
	{ "ncclGroupStart", NCCL, "", 0, NONE },
	{ "ncclGroupEnd", NCCL, "", 0, NONE },
	/*
	 * ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int
	 * rank): the 128-byte id by value, on the stack (x86-64) or by a
	 * pointer in a register (aarch64).  The communicator it makes is
	 * written through COMM after entry: the collectives' comm is matched
	 * by the process.
	 */
	{ "ncclCommInitRank", NCCL, "iiui", 3, { A("comm_out", 0), A("nranks", 1),
						 A("rank", 3) } },
	/* ncclCommInitRankConfig(comm, nranks, id, rank, config) */
	{ "ncclCommInitRankConfig", NCCL, "iiuii", 3, { A("comm_out", 0), A("nranks", 1),
							A("rank", 3) } },
	{ "ncclCommDestroy", NCCL, "i", 1, { A("comm", 0) } },
	{ "ncclCommAbort", NCCL, "i", 1, { A("comm", 0) } },
};

const size_t ift_cuda_nfuncs = sizeof(ift_cuda_funcs) / sizeof(ift_cuda_funcs[0]);

const struct ift_func_spec *ift_func_find(const char *name)
{
	for (size_t i = 0; i < ift_cuda_nfuncs; i++) {
		const struct ift_func_spec *f = &ift_cuda_funcs[i];
		size_t len = strlen(f->name);

		if (strncmp(name, f->name, len))
			continue;
		if (!name[len] || (f->per_thread_variants &&
				   (!strcmp(name + len, "_ptsz") || !strcmp(name + len, "_ptds"))))
			return f;
	}
	return NULL;
}

int ift_func_arg_fetch(const struct ift_func_spec *f, unsigned i, const struct ift_arch *a,
		       char *buf, size_t len)
{
	if (i >= f->nargs || i >= IFT_CALL_MAX_ARGS)
		return -EINVAL;
	return ift_arch_arg_fetch(a, f->sig, f->args[i].param, f->args[i].part,
				  f->args[i].deref, buf, len);
}
