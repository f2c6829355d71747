/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_ARRAY_H
#define IFT_UTIL_ARRAY_H

/*
 * Growing an array by doubling, written once (git's ALLOC_GROW): *V holds
 * *CAP elements of SIZE bytes; after success it holds at least NEED, the
 * new ones zeroed.  0, or -ENOMEM with *V and *CAP unchanged.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int ift_array_grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / size)
			return -ENOMEM;
		n *= 2;
	}
	p = realloc(*v, n * size);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *cap * size, 0, (n - *cap) * size);
	*v = p;
	*cap = n;
	return 0;
}

#endif
