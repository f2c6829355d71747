// SPDX-License-Identifier: MIT
/*
 * libstackpaths.so: the middle of stackpaths' three call paths to
 * cudaStreamSynchronize.  Built -O2 -fomit-frame-pointer: only the unwind
 * tables (.eh_frame) can walk through it.
 */
typedef int cudaError_t;
typedef void *cudaStream_t;
cudaError_t cudaStreamSynchronize(cudaStream_t stream);

int stackpaths_a(int k);
int stackpaths_b(int k);
int stackpaths_c(int k);

static volatile int sink;

/* Shared by paths a and b: the frame above it tells them apart. */
__attribute__((noinline)) static int sync_common(int k)
{
	int r = cudaStreamSynchronize((cudaStream_t)0);

	sink += r + k;	/* no tail call: the frame stays */
	return r;
}

__attribute__((noinline)) int stackpaths_a(int k)
{
	int r = sync_common(k + 1);

	sink += r;
	return r;
}

__attribute__((noinline)) int stackpaths_b(int k)
{
	int r = sync_common(k * 3);

	sink -= r;
	return r;
}

/* Path c calls the runtime directly: one frame shorter. */
__attribute__((noinline)) int stackpaths_c(int k)
{
	int r = cudaStreamSynchronize((cudaStream_t)0);

	sink ^= r + k;
	return r;
}
