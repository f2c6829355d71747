// SPDX-License-Identifier: MIT
/*
 * Users and groups: through the name service in a normal build, from the
 * files in a static one (account.h says why).
 */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/account.h"
#include "util/array.h"

#define GROUPS_MAX	65536	/* NGROUPS_MAX of Linux */

#ifndef IFT_STATIC

int ift_account_name(uid_t uid, char **name)
{
	struct passwd *pw;

	errno = 0;
	pw = getpwuid(uid);
	if (!pw)
		return errno && errno != ENOENT && errno != ESRCH ? -errno : 0;
	*name = strdup(pw->pw_name);
	return *name ? 1 : -ENOMEM;
}

int ift_account_uid(const char *name, uid_t *uid)
{
	struct passwd *pw;

	errno = 0;
	pw = getpwnam(name);
	if (!pw)
		return errno && errno != ENOENT && errno != ESRCH ? -errno : 0;
	*uid = pw->pw_uid;
	return 1;
}

int ift_account_groups(const char *name, gid_t gid, gid_t **groups, const char **partial,
		       char *why, size_t whylen)
{
	gid_t *v = NULL;
	int n = 32;

	(void)why, (void)whylen;
	*partial = NULL;
	for (;;) {
		gid_t *nv = realloc(v, (size_t)n * sizeof(*v));
		int want = n;

		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		if (getgrouplist(name, gid, v, &want) >= 0) {
			*groups = v;
			return want;
		}
		if (want <= n || want > GROUPS_MAX) {
			free(v);
			return -EINVAL;
		}
		n = want;
	}
}

#else /* IFT_STATIC: the files alone */

int ift_account_name(uid_t uid, char **name)
{
	FILE *f = fopen("/etc/passwd", "re");
	struct passwd *pw;
	int ret = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while ((pw = fgetpwent(f)))
		if (pw->pw_uid == uid) {
			*name = strdup(pw->pw_name);
			ret = *name ? 1 : -ENOMEM;
			break;
		}
	fclose(f);
	return ret;
}

int ift_account_uid(const char *name, uid_t *uid)
{
	FILE *f = fopen("/etc/passwd", "re");
	struct passwd *pw;
	int ret = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while ((pw = fgetpwent(f)))
		if (!strcmp(pw->pw_name, name)) {
			*uid = pw->pw_uid;
			ret = 1;
			break;
		}
	fclose(f);
	return ret;
}

/* Whether a directory of systemd's user records holds any group membership. */
static bool userdb_has_groups(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool any = false;

	while (d && !any && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		any = (len > 11 && !strcmp(e->d_name + len - 11, ".membership")) ||
		      (len > 6 && !strcmp(e->d_name + len - 6, ".group"));
	}
	if (d)
		closedir(d);
	return any;
}

/*
 * nss-systemd adds groups only from user records (userdb, nss-systemd(8)):
 * drop-in membership files or systemd-homed.  Without them it gives the
 * files' groups and the synthesized root and nobody.
 */
static bool systemd_adds_groups(void)
{
	static const char *const dirs[] = { "/etc/userdb", "/run/userdb", "/run/host/userdb",
					    "/usr/local/lib/userdb", "/usr/lib/userdb" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (userdb_has_groups(dirs[i]))
			return true;
	return access("/run/systemd/userdb/io.systemd.Home", F_OK) == 0;
}

/* Whether /etc/group has compat mode's +/- lines (NIS). */
static bool group_has_nis(void)
{
	FILE *f = fopen("/etc/group", "re");
	char line[512];
	bool nis = false;

	while (f && !nis && fgets(line, sizeof(line), f))
		nis = line[0] == '+' || line[0] == '-';
	if (f)
		fclose(f);
	return nis;
}

/*
 * The group database's sources that a static build does not read, from
 * nsswitch.conf's group line (glibc's default without one: the files),
 * into WHY; false when there are none.
 */
static bool group_sources_unread(char *why, size_t whylen)
{
	FILE *f = fopen("/etc/nsswitch.conf", "re");
	char line[512], *p, *tok, *save;
	size_t at = 0;

	if (!f)
		return false;
	while ((p = fgets(line, sizeof(line), f))) {
		p += strspn(p, " \t");
		if (!strncmp(p, "group:", 6))
			break;
	}
	fclose(f);
	if (!p)
		return false;
	why[0] = '\0';
	for (tok = strtok_r(p + 6, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		bool unread;

		if (tok[0] == '#')	/* a comment ends the line */
			break;
		if (tok[0] == '[')	/* an action */
			continue;
		unread = strcmp(tok, "files") && strcmp(tok, "compat") && strcmp(tok, "systemd");
		unread |= !strcmp(tok, "systemd") && systemd_adds_groups();
		unread |= !strcmp(tok, "compat") && group_has_nis();
		if (unread && at < whylen) {
			int n = snprintf(why + at, whylen - at, "%s%s", at ? ", " : "", tok);

			at += n > 0 ? (size_t)n : 0;
		}
	}
	return at > 0;
}

int ift_account_groups(const char *name, gid_t gid, gid_t **groups, const char **partial,
		       char *why, size_t whylen)
{
	FILE *f = fopen("/etc/group", "re");
	struct group *gr;
	gid_t *v = malloc(sizeof(*v));
	size_t n = 1, cap = 1;

	if (!v) {
		if (f)
			fclose(f);
		return -ENOMEM;
	}
	v[0] = gid;
	while (f && (gr = fgetgrent(f))) {
		bool member = false, have = false;

		for (char **m = gr->gr_mem; m && *m && !member; m++)
			member = !strcmp(*m, name);
		for (size_t i = 0; member && i < n && !have; i++)
			have = v[i] == gr->gr_gid;
		if (!member || have)
			continue;
		if (n == cap) {
			int err = cap < GROUPS_MAX ?
				  ift_array_grow((void **)&v, &cap, n + 1, sizeof(*v)) : -EINVAL;

			if (err) {
				free(v);
				fclose(f);
				return err;
			}
		}
		v[n++] = gr->gr_gid;
	}
	if (f)
		fclose(f);
	*partial = group_sources_unread(why, whylen) ? why : NULL;
	*groups = v;
	return (int)n;
}

#endif
