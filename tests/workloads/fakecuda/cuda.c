// SPDX-License-Identifier: MIT
/*
 * A stand-in driver library (built as libcuda.so.1) with the driver calls a
 * runtime makes, so nesting can be tested without a GPU: each burns a
 * little CPU, so it has a duration.
 */
#include <stddef.h>

typedef int CUresult;

static void spin(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
			unsigned bx, unsigned by, unsigned bz, unsigned shared,
			void *stream, void **params, void **extra)
{
	(void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz;
	(void)shared; (void)stream; (void)params; (void)extra;
	spin(20000);
	return 0;
}

CUresult cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t bytes)
{
	(void)dst; (void)src; (void)bytes;
	spin(20000);
	return 0;
}

CUresult cuCtxSynchronize(void)
{
	spin(20000);
	return 0;
}
