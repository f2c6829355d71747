/* SPDX-License-Identifier: MIT */
#ifndef IFT_UTIL_OUTFILE_H
#define IFT_UTIL_OUTFILE_H

/*
 * Output files made safely by a process that may be root, in a directory that
 * others (the sudo user, the traced program) may write (docs/security.md).
 * PATH.part is created with O_EXCL|O_NOFOLLOW, so no link there is followed
 * and no file there is truncated; it is handed to its owner through the
 * descriptor (fchown, never chown by path); it is renamed over PATH, within the
 * directory opened at creation, only while PATH.part is still the file made.
 */
#include <stdbool.h>
#include <sys/types.h>

struct ift_outfile {
	char *path, *part;	/* as given, and PATH.part */
	int dirfd;		/* the directory they are in */
	const char *base, *base_part;	/* their names in it */
	int fd;			/* the file; -1 once closed */
	dev_t dev;
	ino_t ino;
	bool done;		/* renamed over PATH */
	bool keep;		/* an output of a damaged trace: renamed to PATH
				   only where nothing is there */
	bool give;		/* made for UID:GID, with their permissions */
	uid_t uid;
	gid_t gid;
};

/*
 * ift_outfile_create - create PATH.part for writing (mode 0644, O_CLOEXEC)
 * PATH, if it exists, must be a regular file or a link (replaced, not
 * followed): a device, FIFO or socket gives -IFT_E_NOT_FILE, a directory
 * -EISDIR, and nothing is made.  An existing PATH.part is removed first only when it is a regular file owned
 * by the file's owner (a killed run's); anything else there (a link, a
 * directory, someone else's file) gives -EEXIST and is left alone.  With
 * GIVE the file goes to UID:GID through fchown(), and every step on the
 * file system (the directory's lookup, the creation, the rename) is made
 * with UID:GID's permissions (setfsuid), not root's: a user allowed to run
 * record through sudo writes only where that user may.  Returns 0 or a negative
 * errno; O->fd is the file's descriptor.  Release O with ift_outfile_release().
 */
int ift_outfile_create(struct ift_outfile *o, const char *path, bool give,
		       uid_t uid, gid_t gid);

/*
 * ift_outfile_commit - fsync and close O->fd (unless the caller closed it and
 * set it to -1), then rename PATH.part over PATH (a link at PATH is replaced,
 * not followed).  -IFT_E_REPLACED when PATH.part is no longer the file created.
 * With O->keep, PATH is never replaced: -IFT_E_KEPT where something is there
 * (the caller removes PATH.part; what was at PATH stays as it was).
 */
int ift_outfile_commit(struct ift_outfile *o);

/*
 * ift_rename_noreplace - FROM (in FROMFD) to TO (in TOFD) where nothing is at
 * TO, a file or a directory: 0, -EEXIST where something is, or a negative
 * errno.  renameat2(RENAME_NOREPLACE); before Linux 3.15 a link (a file) or
 * a look first (a directory).
 */
int ift_rename_noreplace(int fromfd, const char *from, int tofd, const char *to);

/* Removes PATH.part unless committed, if it is still the file created. */
void ift_outfile_remove(struct ift_outfile *o);

/*
 * ift_unlink_for - removes PATH (never a link's target) with the
 * permissions UID:GID have when GIVE (as ift_outfile_create() makes a file
 * for them): in a directory that user controls, root removes only what the
 * user could.  0 or a negative errno.
 */
int ift_unlink_for(const char *path, bool give, uid_t uid, gid_t gid);

/* Closes what is open and frees the names; the file stays on disk.  Safe twice. */
void ift_outfile_release(struct ift_outfile *o);

#endif
