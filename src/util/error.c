// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "ift-error.h"

#undef _PE
#define _PE(code, str) str
static const char *const messages[] = { IFT_ERRORS };
#undef _PE

const char *ift_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err > IFT_E_BASE && err < IFT_E_LAST)
		return messages[err - IFT_E_BASE - 1];
	if (err == 0)
		return "success";
	return strerror(err);
}

int ift_write_error(void)
{
	int e = errno;

	return e == ENOSPC || e == EDQUOT || e == EFBIG || e == EPIPE || e == EBADF ?
	       -e : -EIO;
}
