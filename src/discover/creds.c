// SPDX-License-Identifier: MIT
/* Becoming the user a process started on their behalf runs as (ift-discover.h). */
#include <errno.h>
#include <grp.h>
#include <unistd.h>

#include "ift-discover.h"

int ift_creds_become(const struct ift_creds *as)
{
	/* groups first, uid last: after setresuid() nothing else may change */
	if (setgroups(as->ngroups, as->groups) < 0 ||
	    setresgid(as->gid, as->gid, as->gid) < 0 ||
	    setresuid(as->uid, as->uid, as->uid) < 0)
		return -errno;
	return 0;
}
