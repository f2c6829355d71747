// SPDX-License-Identifier: MIT
/*
 * A stand-in runtime (built as libcudart.so.12) whose calls go through the
 * stand-in driver, as the real runtime's do: a traced runtime call must
 * show its driver calls nested inside it.
 */
#include <stddef.h>

typedef struct { unsigned x, y, z; } dim3;

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		   unsigned by, unsigned bz, unsigned shared, void *stream,
		   void **params, void **extra);
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t bytes);
int cuCtxSynchronize(void);

int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
		     size_t shared, void *stream)
{
	return cuLaunchKernel((void *)func, grid.x, grid.y, grid.z, block.x,
			      block.y, block.z, (unsigned)shared, stream, args, NULL);
}

int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind)
{
	(void)kind;
	return cuMemcpyHtoD_v2((unsigned long long)dst, src, bytes);
}

int cudaDeviceSynchronize(void)
{
	/* two driver calls in one runtime call */
	cuCtxSynchronize();
	return cuCtxSynchronize();
}
