// SPDX-License-Identifier: MIT
/*
 * The CUDA and NCCL functions we trace and the arguments worth a column,
 * fetched per the x86-64 SysV ABI at function entry: integer arguments in
 * rdi, rsi, rdx, rcx, r8, r9, then on the stack above the return address
 * (+8(%sp), ...); a struct larger than 16 bytes (ncclUniqueId) is passed in
 * memory and takes no register.
 * A struct of at most 16 bytes, such as dim3 (12), travels in two registers,
 * which shifts every argument after it.
 */
#include "ift-discover.h"

#define RT IFT_API_RUNTIME
#define DRV IFT_API_DRIVER
#define NCCL IFT_API_NCCL

const struct ift_func_spec ift_cuda_funcs[] = {
	/* ---- runtime: memory ---- */
	{ "cudaMalloc", RT, 1, { { "bytes", "%si" } } },
	{ "cudaFree", RT, 1, { { "ptr", "%di" } } },
	{ "cudaMallocManaged", RT, 2, { { "bytes", "%si" }, { "flags", "%dx" } } },
	{ "cudaMallocHost", RT, 1, { { "bytes", "%si" } } },
	{ "cudaHostAlloc", RT, 2, { { "bytes", "%si" }, { "flags", "%dx" } } },
	{ "cudaFreeHost", RT, 1, { { "ptr", "%di" } } },
	{ "cudaMallocAsync", RT, 2, { { "bytes", "%si" }, { "stream", "%dx" } }, true },
	{ "cudaFreeAsync", RT, 2, { { "ptr", "%di" }, { "stream", "%si" } }, true },
	/* cudaMemcpy(dst, src, count, kind) */
	{ "cudaMemcpy", RT, 4, { { "dst", "%di" }, { "src", "%si" },
				 { "bytes", "%dx" }, { "kind", "%cx" } }, true },
	{ "cudaMemcpyAsync", RT, 5, { { "dst", "%di" }, { "src", "%si" },
				      { "bytes", "%dx" }, { "kind", "%cx" },
				      { "stream", "%r8" } }, true },
	/* cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind) */
	{ "cudaMemcpy2D", RT, 5, { { "dst", "%di" }, { "src", "%dx" },
				   { "width", "%r8" }, { "height", "%r9" },
				   { "kind", "+8(%sp)" } }, true },
	{ "cudaMemcpy2DAsync", RT, 6, { { "dst", "%di" }, { "src", "%dx" },
					{ "width", "%r8" }, { "height", "%r9" },
					{ "kind", "+8(%sp)" }, { "stream", "+16(%sp)" } }, true },
	/* cudaMemset(ptr, value, count) */
	{ "cudaMemset", RT, 2, { { "ptr", "%di" }, { "bytes", "%dx" } }, true },
	{ "cudaMemsetAsync", RT, 3, { { "ptr", "%di" }, { "bytes", "%dx" },
				      { "stream", "%cx" } }, true },
	/* ---- runtime: work submission ---- */
	/*
	 * cudaLaunchKernel(func, dim3 grid, dim3 block, args, sharedMem, stream):
	 * grid in rsi (x, y) + rdx (z), block in rcx (x, y) + r8 (z), args in
	 * r9, then sharedMem and stream on the stack.
	 */
	{ "cudaLaunchKernel", RT, 5, { { "func", "%di" }, { "grid_xy", "%si" },
				       { "block_xy", "%cx" },
				       { "shared_mem", "+8(%sp)" },
				       { "stream", "+16(%sp)" } }, true },
	/* cudaLaunchKernelExC(config, func, args): config->stream at +32 */
	{ "cudaLaunchKernelExC", RT, 3, { { "func", "%si" },
					  { "grid_xy", "+0(%di)" },
					  { "stream", "+32(%di)" } }, true },
	{ "cudaGraphLaunch", RT, 2, { { "graph", "%di" }, { "stream", "%si" } }, true },
	{ "cudaEventRecord", RT, 2, { { "event", "%di" }, { "stream", "%si" } }, true },
	{ "cudaStreamWaitEvent", RT, 2, { { "stream", "%di" }, { "event", "%si" } }, true },
	/* ---- runtime: waiting ---- */
	{ "cudaStreamSynchronize", RT, 1, { { "stream", "%di" } }, true },
	{ "cudaDeviceSynchronize", RT, 0, { { NULL, NULL } } },
	{ "cudaEventSynchronize", RT, 1, { { "event", "%di" } } },
	/* ---- runtime: devices ---- */
	{ "cudaSetDevice", RT, 1, { { "device", "%di" } } },
	{ "cudaGetDeviceCount", RT, 0, { { NULL, NULL } } },
	{ "cudaStreamCreate", RT, 0, { { NULL, NULL } } },

	/* ---- driver ---- */
	/*
	 * cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sharedMem, stream, params,
	 * extra): bz, sharedMem and stream on the stack.
	 */
	{ "cuLaunchKernel", DRV, 5, { { "func", "%di" }, { "grid_x", "%si" },
				      { "block_x", "%r8" },
				      { "shared_mem", "+16(%sp)" },
				      { "stream", "+24(%sp)" } }, true },
	/* cuLaunchKernelEx(config, f, params, extra): config->hStream at +32 */
	{ "cuLaunchKernelEx", DRV, 3, { { "func", "%si" }, { "grid_x", "+0(%di)" },
					{ "stream", "+32(%di)" } }, true },
	{ "cuMemAlloc", DRV, 1, { { "bytes", "%si" } } },
	{ "cuMemAlloc_v2", DRV, 1, { { "bytes", "%si" } } },
	{ "cuMemAllocManaged", DRV, 2, { { "bytes", "%si" }, { "flags", "%dx" } } },
	{ "cuMemFree", DRV, 1, { { "ptr", "%di" } } },
	{ "cuMemFree_v2", DRV, 1, { { "ptr", "%di" } } },
	{ "cuMemcpy", DRV, 3, { { "dst", "%di" }, { "src", "%si" }, { "bytes", "%dx" } }, true },
	{ "cuMemcpyAsync", DRV, 4, { { "dst", "%di" }, { "src", "%si" },
				     { "bytes", "%dx" }, { "stream", "%cx" } }, true },
	{ "cuMemcpyHtoD_v2", DRV, 3, { { "dst", "%di" }, { "src", "%si" }, { "bytes", "%dx" } }, true },
	{ "cuMemcpyDtoH_v2", DRV, 3, { { "dst", "%di" }, { "src", "%si" }, { "bytes", "%dx" } }, true },
	{ "cuMemcpyDtoD_v2", DRV, 3, { { "dst", "%di" }, { "src", "%si" }, { "bytes", "%dx" } }, true },
	{ "cuMemcpyHtoDAsync_v2", DRV, 4, { { "dst", "%di" }, { "src", "%si" },
					    { "bytes", "%dx" }, { "stream", "%cx" } }, true },
	{ "cuMemcpyDtoHAsync_v2", DRV, 4, { { "dst", "%di" }, { "src", "%si" },
					    { "bytes", "%dx" }, { "stream", "%cx" } }, true },
	{ "cuMemcpyDtoDAsync_v2", DRV, 4, { { "dst", "%di" }, { "src", "%si" },
					    { "bytes", "%dx" }, { "stream", "%cx" } }, true },
	{ "cuCtxSynchronize", DRV, 0, { { NULL, NULL } } },
	{ "cuStreamSynchronize", DRV, 1, { { "stream", "%di" } }, true },
	{ "cuEventSynchronize", DRV, 1, { { "event", "%di" } } },
	/*
	 * ---- NCCL (libnccl.so.2): collectives, point to point, groups ----
	 * ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream)
	 */
	{ "ncclAllReduce", NCCL, 5, { { "count", "%dx" }, { "datatype", "%cx" },
				      { "op", "%r8" }, { "comm", "%r9" },
				      { "stream", "+8(%sp)" } } },
	/* ncclBroadcast(sendbuff, recvbuff, count, datatype, root, comm, stream) */
	{ "ncclBroadcast", NCCL, 5, { { "count", "%dx" }, { "datatype", "%cx" },
				      { "root", "%r8" }, { "comm", "%r9" },
				      { "stream", "+8(%sp)" } } },
	/* ncclReduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream) */
	{ "ncclReduce", NCCL, 6, { { "count", "%dx" }, { "datatype", "%cx" },
				   { "op", "%r8" }, { "root", "%r9" },
				   { "comm", "+8(%sp)" }, { "stream", "+16(%sp)" } } },
	/* ncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream) */
	{ "ncclAllGather", NCCL, 4, { { "count", "%dx" }, { "datatype", "%cx" },
				      { "comm", "%r8" }, { "stream", "%r9" } } },
	/* ncclReduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream) */
	{ "ncclReduceScatter", NCCL, 5, { { "count", "%dx" }, { "datatype", "%cx" },
					  { "op", "%r8" }, { "comm", "%r9" },
					  { "stream", "+8(%sp)" } } },
	/* ncclSend(sendbuff, count, datatype, peer, comm, stream), ncclRecv alike */
	{ "ncclSend", NCCL, 5, { { "count", "%si" }, { "datatype", "%dx" },
				 { "peer", "%cx" }, { "comm", "%r8" }, { "stream", "%r9" } } },
	{ "ncclRecv", NCCL, 5, { { "count", "%si" }, { "datatype", "%dx" },
				 { "peer", "%cx" }, { "comm", "%r8" }, { "stream", "%r9" } } },
	{ "ncclGroupStart", NCCL, 0, { { NULL, NULL } } },
	{ "ncclGroupEnd", NCCL, 0, { { NULL, NULL } } },
	/*
	 * ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int
	 * rank): the 128-byte id is passed in memory, so rank is in the third
	 * integer register.  The communicator it makes is written through COMM
	 * after entry: the collectives' comm is matched by the process.
	 */
	{ "ncclCommInitRank", NCCL, 3, { { "comm_out", "%di" }, { "nranks", "%si" },
					 { "rank", "%dx" } } },
	/* ncclCommInitRankConfig(comm, nranks, id, rank, config) */
	{ "ncclCommInitRankConfig", NCCL, 3, { { "comm_out", "%di" }, { "nranks", "%si" },
					       { "rank", "%dx" } } },
	{ "ncclCommDestroy", NCCL, 1, { { "comm", "%di" } } },
	{ "ncclCommAbort", NCCL, 1, { { "comm", "%di" } } },
};

const size_t ift_cuda_nfuncs = sizeof(ift_cuda_funcs) / sizeof(ift_cuda_funcs[0]);
