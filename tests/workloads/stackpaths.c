// SPDX-License-Identifier: MIT
/*
 * stackpaths A B C: reaches cudaStreamSynchronize A times through path a,
 * B times through b and C times through c (in an interleaved order), and
 * prints its truth as one JSON line:
 *   {"a":A,"b":B,"c":C,"paths":{"a":[frames...],...}}
 * where each path lists the functions from the CUDA call outwards.
 * Built -O2 -fomit-frame-pointer, as is libstackpaths.so.
 */
#include <stdio.h>
#include <stdlib.h>

int stackpaths_a(int k);
int stackpaths_b(int k);
int stackpaths_c(int k);

static volatile int sink;

__attribute__((noinline)) static int run_a(int k)
{
	int r = stackpaths_a(k);

	sink += r;
	return r;
}

__attribute__((noinline)) static int run_b(int k)
{
	int r = stackpaths_b(k);

	sink += r * 2;
	return r;
}

__attribute__((noinline)) static int run_c(int k)
{
	int r = stackpaths_c(k);

	sink += r * 3;
	return r;
}

int main(int argc, char **argv)
{
	long n[3] = { 7, 13, 21 }, left[3];
	int bad = 0;

	for (int i = 0; i < 3 && i + 1 < argc; i++)
		n[i] = strtol(argv[i + 1], NULL, 10);
	for (int i = 0; i < 3; i++)
		left[i] = n[i];
	for (int k = 0; left[0] + left[1] + left[2]; k++) {
		if (left[k % 3] <= 0)
			continue;
		left[k % 3]--;
		switch (k % 3) {
		case 0: bad |= run_a(k); break;
		case 1: bad |= run_b(k); break;
		default: bad |= run_c(k); break;
		}
	}
	printf("{\"a\":%ld,\"b\":%ld,\"c\":%ld,\"paths\":{"
	       "\"a\":[\"cudaStreamSynchronize\",\"sync_common\",\"stackpaths_a\",\"run_a\",\"main\"],"
	       "\"b\":[\"cudaStreamSynchronize\",\"sync_common\",\"stackpaths_b\",\"run_b\",\"main\"],"
	       "\"c\":[\"cudaStreamSynchronize\",\"stackpaths_c\",\"run_c\",\"main\"]}}\n",
	       n[0], n[1], n[2]);
	return bad ? 1 : 0;
}
