// SPDX-License-Identifier: MIT
/*
 * Output files made without following links (outfile.h).  The directory is
 * opened once, so a path component swapped for a link later does not move
 * the rename elsewhere; the rename itself follows no link (rename(2) replaces
 * a link at the target name).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ift-error.h"
#include "ift-trace.h"
#include "outfile.h"

/*
 * The file system ids of the calling thread (setfsuid/setfsgid are per
 * thread): O's owner's while acting for it, so the kernel checks that
 * user's permissions (and root's capabilities on files are dropped), then
 * back.  errno is kept across the way back.
 */
struct fsids {
	int uid, gid;
	bool on;
};

static void fs_enter(const struct ift_outfile *o, struct fsids *s)
{
	s->on = o->give && geteuid() == 0 && o->uid != 0;
	if (!s->on)
		return;
	s->gid = setfsgid(o->gid);
	s->uid = setfsuid(o->uid);
}

static void fs_leave(const struct fsids *s)
{
	int e = errno;

	if (s->on) {
		setfsuid((uid_t)s->uid);
		setfsgid((gid_t)s->gid);
	}
	errno = e;
}

static int create_part(struct ift_outfile *o, uid_t owner)
{
	struct stat st;

	o->fd = openat(o->dirfd, o->base_part,
		       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (o->fd >= 0 || errno != EEXIST)
		return o->fd >= 0 ? 0 : -errno;
	/* a killed run's file may go; a link or another's file is not ours to
	   touch (unlinkat follows nothing: a race only removes a name) */
	if (fstatat(o->dirfd, o->base_part, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_uid != owner)
		return -EEXIST;
	if (unlinkat(o->dirfd, o->base_part, 0) < 0 && errno != ENOENT)
		return -errno;
	o->fd = openat(o->dirfd, o->base_part,
		       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	return o->fd >= 0 ? 0 : -errno;
}

int ift_outfile_create(struct ift_outfile *o, const char *path, bool give,
		       uid_t uid, gid_t gid)
{
	const char *slash;
	struct stat st;
	char *dir;
	int ret;

	struct fsids fs;

	memset(o, 0, sizeof(*o));
	o->dirfd = o->fd = -1;
	o->give = give;
	o->uid = uid;
	o->gid = gid;
	o->path = strdup(path);
	if (!o->path || asprintf(&o->part, "%s%s", path, IFT_PART_SUFFIX) < 0) {
		o->part = NULL;
		return -ENOMEM;
	}
	slash = strrchr(o->path, '/');
	o->base = slash ? slash + 1 : o->path;
	o->base_part = o->part + (o->base - o->path);
	if (!*o->base)
		return -EISDIR;
	dir = slash ? strndup(o->path, slash == o->path ? 1 : (size_t)(slash - o->path)) :
		      strdup(".");
	if (!dir)
		return -ENOMEM;
	fs_enter(o, &fs);
	o->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ret = o->dirfd < 0 ? -errno : 0;
	free(dir);
	/* the file is renamed over PATH: never over a device, a FIFO, a
	   socket or a directory (a link there is replaced, not followed) */
	if (ret >= 0 && !fstatat(o->dirfd, o->base, &st, AT_SYMLINK_NOFOLLOW) &&
	    !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -IFT_E_NOT_FILE;
	if (ret >= 0)
		ret = create_part(o, give ? uid : geteuid());
	fs_leave(&fs);
	if (ret < 0)
		return ret;
	if (fstat(o->fd, &st) < 0)
		return -errno;	/* cannot tell it is ours: left */
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	if (give && fchown(o->fd, uid, gid) < 0) {
		ret = -errno;
		ift_outfile_remove(o);
		return ret;
	}
	return 0;
}

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE	(1 << 0)
#endif

int ift_rename_noreplace(int fromfd, const char *from, int tofd, const char *to)
{
	struct stat st;

#ifdef SYS_renameat2
	if (syscall(SYS_renameat2, fromfd, from, tofd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != ENOSYS && errno != EINVAL)
		return -errno;
#endif
	/* before 3.15, or a file system without it: a link to TO fails where
	   something is there; a directory, which has no links, is looked for
	   first (a rename onto an empty directory would replace it) */
	if (fstatat(fromfd, from, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode)) {
		if (fstatat(tofd, to, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return -EEXIST;
		return renameat(fromfd, from, tofd, to) < 0 ? -errno : 0;
	}
	if (linkat(fromfd, from, tofd, to, 0) < 0)
		return -errno;
	unlinkat(fromfd, from, 0);
	return 0;
}

int ift_outfile_commit(struct ift_outfile *o)
{
	struct stat st;
	int fd = o->fd;

	if (fd >= 0) {
		o->fd = -1;
		if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS) {
			int ret = -errno;

			close(fd);
			return ret;
		}
		if (close(fd) < 0)
			return -errno;
	}
	if (fstatat(o->dirfd, o->base_part, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? -IFT_E_REPLACED : -errno;
	if (st.st_dev != o->dev || st.st_ino != o->ino)
		return -IFT_E_REPLACED;
	{
		struct fsids fs;
		int ret = 0;

		fs_enter(o, &fs);
		if (o->keep)
			ret = ift_rename_noreplace(o->dirfd, o->base_part, o->dirfd, o->base);
		else if (renameat(o->dirfd, o->base_part, o->dirfd, o->base) < 0)
			ret = -errno;
		fs_leave(&fs);
		if (ret == -EEXIST)
			ret = -IFT_E_KEPT;
		if (ret < 0)
			return ret;
	}
	o->done = true;
	return 0;
}

void ift_outfile_remove(struct ift_outfile *o)
{
	struct stat st;

	if (o->done || o->dirfd < 0 || !o->base_part || !o->ino)
		return;
	if (fstatat(o->dirfd, o->base_part, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_dev == o->dev && st.st_ino == o->ino) {
		struct fsids fs;

		fs_enter(o, &fs);
		unlinkat(o->dirfd, o->base_part, 0);
		fs_leave(&fs);
	}
}

int ift_unlink_for(const char *path, bool give, uid_t uid, gid_t gid)
{
	struct ift_outfile o = { .give = give, .uid = uid, .gid = gid };
	struct fsids fs;
	int ret;

	fs_enter(&o, &fs);
	ret = unlink(path) < 0 ? -errno : 0;
	fs_leave(&fs);
	return ret;
}

void ift_outfile_release(struct ift_outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->fd = o->dirfd = -1;
	free(o->path);
	free(o->part);
	o->path = o->part = NULL;
	o->base = o->base_part = NULL;
}
