/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_ACCOUNT_H
#define IFT_UTIL_ACCOUNT_H

/*
 * Who a user is and which groups they hold, for record and discover under
 * sudo.  A normal build asks the name service (getpwuid, getgrouplist: LDAP,
 * SSSD and whatever nsswitch.conf lists).  A static release binary
 * (IFT_STATIC, make dist) cannot load the name service's modules of
 * another glibc, so it reads /etc/passwd and /etc/group itself and says
 * when the group database has other sources: the groups it finds are then
 * a subset of the user's, never more.  Nothing of the user's runs to find
 * them.
 */
#include <stddef.h>
#include <sys/types.h>

/* The name passwd gives UID: 1 and *NAME malloc'ed, 0 when none, or -errno. */
int ift_account_name(uid_t uid, char **name);

/* The uid passwd gives NAME: 1 and *UID, 0 when none, or -errno. */
int ift_account_uid(const char *name, uid_t *uid);

/*
 * ift_account_groups - GID and the groups that list NAME as a member, GID
 * first, each once: the count with *GROUPS malloc'ed, or -errno.  *PARTIAL
 * is NULL when they are the group database's, else (static builds) says in
 * a few words which sources were not read (WHY, of WHYLEN bytes): the user
 * may hold more groups than these.
 */
int ift_account_groups(const char *name, gid_t gid, gid_t **groups, const char **partial,
		       char *why, size_t whylen);

#endif
