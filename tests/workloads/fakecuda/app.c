// SPDX-License-Identifier: MIT
/* Calls the stand-in runtime: N launches, copies and synchronizes. */
#include <stdlib.h>

typedef struct { unsigned x, y, z; } dim3;
int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
		     size_t shared, void *stream);
int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind);
int cudaDeviceSynchronize(void);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	static char buf[4096];
	dim3 g = { 4, 1, 1 }, b = { 64, 1, 1 };

	for (int i = 0; i < n; i++) {
		cudaLaunchKernel((void *)0x1000, g, b, NULL, 0, (void *)0x77);
		cudaMemcpy((void *)0x2000, buf, sizeof(buf), 1);
		cudaDeviceSynchronize();
	}
	return 0;
}
