// SPDX-License-Identifier: MIT
/*
 * The stage of a Parquet export, and its move into DIR (pqstage.h).  Every
 * step below DIR goes through a descriptor opened with O_NOFOLLOW, one level
 * at a time: a link planted in DIR while we write takes nothing elsewhere.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/pqstage.h"
#include "util/outfile.h"

#define LEVELS	3	/* host=H, rank=R, the files */

struct pq_stage {
	int parent;		/* the directory DIR is (or will be) in */
	char *base;		/* DIR's name there */
	int at;			/* the directory the stage is in: PARENT, or DIR */
	bool inside;		/* in DIR (AT is then a descriptor of its own) */
	char name[NAME_MAX + 1];	/* the stage's name there */
	int fd;			/* the stage; -1 once it became DIR */
	char **moved;		/* what moved into DIR, in order: to put back */
	size_t nmoved;
};

/* NAME in AT without following a link there: a directory's descriptor. */
static int open_dir(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int make_dir(int at, const char *name)
{
	if (mkdirat(at, name, 0755) < 0 && errno != EEXIST)
		return -errno;
	return open_dir(at, name);
}

/* DIR's parent and name: DIR's real path where it is there (it may be a
   link of the user's, or "."), else as given. */
static int split_dir(const char *dir, char **parent, char **base)
{
	char *path = realpath(dir, NULL), *slash;
	size_t len;

	if (!path && errno != ENOENT)
		return -errno;
	if (!path && !(path = strdup(dir)))
		return -ENOMEM;
	len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		path[--len] = 0;
	slash = strrchr(path, '/');
	*base = strdup(slash ? slash + 1 : path);
	if (slash)
		slash == path ? (void)(slash[1] = 0) : (void)(*slash = 0);
	*parent = slash ? path : strdup(".");
	if (!slash)
		free(path);
	if (!*base || !*parent) {
		free(*base);
		free(*parent);
		return -ENOMEM;
	}
	if (!**base || !strcmp(*base, ".") || !strcmp(*base, "..")) {
		free(*base);
		free(*parent);
		return -EINVAL;	/* "/", or a "." of a directory not there */
	}
	return 0;
}

/*
 * Makes the stage from TMPL (PATH/.NAME-XXXXXX): beside DIR, in PARENT, or
 * INSIDE it, DIR_PATH.  0, or a negative errno with nothing made.
 */
static int make_stage(struct pq_stage *s, char *tmpl, bool inside, const char *dir_path)
{
	int ret = 0;

	if (!mkdtemp(tmpl))
		return -errno;
	s->inside = inside;
	s->at = inside ? open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : s->parent;
	if (s->at < 0)
		ret = -errno;
	if (!ret) {
		snprintf(s->name, sizeof(s->name), "%s", strrchr(tmpl, '/') + 1);
		s->fd = open_dir(s->at, s->name);
		ret = s->fd < 0 ? s->fd : 0;
	}
	if (ret < 0) {
		rmdir(tmpl);	/* empty yet */
		if (inside && s->at >= 0)
			close(s->at);
		s->at = s->fd = -1;
		s->inside = false;
	}
	return ret;
}

int ift_pq_stage_begin(const char *dir, struct pq_stage **out)
{
	struct pq_stage *s = calloc(1, sizeof(*s));
	char *parent = NULL, tmpl[PATH_MAX], inside[PATH_MAX];
	struct stat st;
	int ret;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->parent = s->at = s->fd = -1;
	ret = split_dir(dir, &parent, &s->base);
	if (ret < 0) {
		free(s);
		return ret;
	}
	if ((s->parent = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		ret = -errno;
	else if (snprintf(tmpl, sizeof(tmpl), "%s/.%.200s.ingero-XXXXXX", parent, s->base) >=
		 (int)sizeof(tmpl))
		ret = -ENAMETOOLONG;
	else
		ret = make_stage(s, tmpl, false, NULL);
	/*
	 * A DIR of the user's in a directory they cannot write (a mount point,
	 * a shared tree): the stage goes inside DIR, hidden, where no engine's
	 * DIR/x=/y=/ pattern reaches, and still on DIR's file system.
	 */
	if ((ret == -EACCES || ret == -EPERM) && !fstatat(s->parent, s->base, &st, 0) &&
	    S_ISDIR(st.st_mode)) {
		if (snprintf(inside, sizeof(inside), "%s/%s", parent, s->base) >= (int)sizeof(inside) ||
		    snprintf(tmpl, sizeof(tmpl), "%s/.ingero-XXXXXX", inside) >= (int)sizeof(tmpl))
			ret = -ENAMETOOLONG;
		else
			ret = make_stage(s, tmpl, true, inside);
	}
	free(parent);
	if (ret < 0) {
		ift_pq_stage_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int ift_pq_stage_part(struct pq_stage *s, const char *host, const char *rank, int *staged,
		  int *final, int *level)
{
	int sh, top, fh = -1, ret = 0;

	*staged = *final = -1;
	*level = 1;
	sh = make_dir(s->fd, host);
	if (sh < 0)
		return sh;
	/* DIR as the user named it (a link of theirs is theirs); below it,
	   no link */
	top = openat(s->parent, s->base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0 && errno != ENOENT)
		ret = -errno;
	if (top >= 0) {
		fh = open_dir(top, host);
		close(top);
		if (fh == -ENOENT)
			fh = -1;
		else if (fh < 0)
			ret = fh;
	}
	if (!ret) {
		*level = 2;
		*staged = make_dir(sh, rank);
		ret = *staged < 0 ? *staged : 0;
	}
	if (!ret && fh >= 0) {
		*final = open_dir(fh, rank);
		if (*final == -ENOENT)
			*final = -1;
		else if (*final < 0)
			ret = *final;
	}
	close(sh);
	if (fh >= 0)
		close(fh);
	if (ret < 0) {
		if (*staged >= 0)
			close(*staged);
		if (*final >= 0)
			close(*final);
		*staged = *final = -1;
	}
	return ret;
}

bool ift_pq_stage_taken(int staged, int final, const char *name)
{
	struct stat st;

	return (staged >= 0 && !fstatat(staged, name, &st, AT_SYMLINK_NOFOLLOW)) ||
	       (final >= 0 && !fstatat(final, name, &st, AT_SYMLINK_NOFOLLOW));
}

/* The names in directory FD (not "." nor ".."), sorted: a NULL-ended list. */
static int list_names(int fd, char ***out)
{
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dup < 0 ? NULL : fdopendir(dup);
	char **v = NULL;
	size_t n = 0;
	struct dirent *e;
	int ret = 0;

	*out = NULL;
	if (!d) {
		ret = -errno;
		if (dup >= 0)
			close(dup);
		return ret;
	}
	while ((e = readdir(d))) {
		char **nv;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!(nv = realloc(v, (n + 2) * sizeof(*v))) ||
		    !(nv[n] = strdup(e->d_name))) {
			v = nv ? nv : v;
			ret = -ENOMEM;
			break;
		}
		v = nv;
		v[++n] = NULL;
	}
	closedir(d);
	if (v && ret < 0) {
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return ret;
	}
	*out = v;
	return (int)n;
}

static void free_names(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static int note_moved(struct pq_stage *s, const char *prefix, const char *name)
{
	char **v = realloc(s->moved, (s->nmoved + 1) * sizeof(*v));
	size_t len = strlen(prefix) + strlen(name) + 2;

	if (!v)
		return -ENOMEM;
	s->moved = v;
	if (!(v[s->nmoved] = malloc(len)))
		return -ENOMEM;
	snprintf(v[s->nmoved++], len, "%s%s%s", prefix, *prefix ? "/" : "", name);
	return 0;
}

/*
 * FROM's entries into TO at DEPTH (0: the host level): a directory TO lacks
 * in one rename, else into TO's own; files each by itself, the marks ("_")
 * last.  PREFIX is FROM's path in the stage, for putting back.
 */
static int merge(struct pq_stage *s, int from, int to, const char *prefix, int depth)
{
	char **names, path[PATH_MAX];
	int n = list_names(from, &names), ret = 0;

	if (n < 0)
		return n;
	for (int pass = 0; pass < 2 && ret >= 0; pass++) {
		for (int i = 0; i < n && ret >= 0; i++) {
			int sub_from, sub_to;

			if (depth == LEVELS - 1 && (names[i][0] == '_') != pass)
				continue;
			if (depth < LEVELS - 1 && pass)
				continue;
			ret = ift_rename_noreplace(from, names[i], to, names[i]);
			if (!ret) {
				ret = note_moved(s, prefix, names[i]);
				continue;
			}
			if (ret != -EEXIST || depth == LEVELS - 1)
				break;	/* a file's name taken meanwhile: EEXIST */
			sub_from = open_dir(from, names[i]);
			sub_to = sub_from < 0 ? sub_from : open_dir(to, names[i]);
			ret = sub_to;
			if (sub_to >= 0) {
				snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "/" : "",
					 names[i]);
				ret = merge(s, sub_from, sub_to, path, depth + 1);
				close(sub_to);
			}
			if (sub_from >= 0)
				close(sub_from);
		}
	}
	free_names(names);
	return ret;
}

/* PATH's last name in the directory it names from AT, opened level by level
   without following a link: the directory's descriptor, *LEAF in PATH. */
static int open_parent(int at, const char *path, const char **leaf)
{
	char name[NAME_MAX + 1];
	const char *p = path, *slash;
	int fd = fcntl(at, F_DUPFD_CLOEXEC, 3);

	while (fd >= 0 && (slash = strchr(p, '/'))) {
		int next;

		snprintf(name, sizeof(name), "%.*s", (int)(slash - p), p);
		next = open_dir(fd, name);
		close(fd);
		fd = next;
		p = slash + 1;
	}
	*leaf = p;
	return fd;
}

/* What moved into TOP goes back into the stage, the last first. */
static void put_back(struct pq_stage *s, int top)
{
	while (s->nmoved) {
		char *path = s->moved[--s->nmoved];
		const char *from_leaf, *to_leaf;
		int from = open_parent(top, path, &from_leaf);
		int to = open_parent(s->fd, path, &to_leaf);

		if (from >= 0 && to >= 0)
			renameat(from, from_leaf, to, to_leaf);
		if (from >= 0)
			close(from);
		if (to >= 0)
			close(to);
		free(path);
	}
}

int ift_pq_stage_commit(struct pq_stage *s)
{
	mode_t mask = umask(0);
	int top, ret;

	umask(mask);
	/* as mkdir(DIR, 0755) would have made it */
	if (fchmod(s->fd, 0755 & ~mask) < 0)
		return -errno;
	ret = !s->inside ? ift_rename_noreplace(s->at, s->name, s->parent, s->base)
			 : -EEXIST;	/* inside DIR: into it */
	if (!ret) {
		close(s->fd);
		s->fd = -1;
		return 0;
	}
	if (ret != -EEXIST && ret != -ENOTEMPTY)
		return ret;
	top = openat(s->parent, s->base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0)
		return -errno;
	ret = merge(s, s->fd, top, "", 0);
	if (ret < 0)
		put_back(s, top);
	close(top);
	return ret;
}

/* NAME in AT and all below it, at most LEVELS deep: the stage is ours
   (0700), but still no link is followed. */
static void remove_tree(int at, const char *name, int depth)
{
	char **names;
	int fd = depth <= LEVELS ? open_dir(at, name) : -ENOTDIR;

	if (fd < 0) {
		unlinkat(at, name, 0);
		return;
	}
	if (list_names(fd, &names) > 0)
		for (size_t i = 0; names[i]; i++)
			remove_tree(fd, names[i], depth + 1);
	free_names(names);
	close(fd);
	unlinkat(at, name, AT_REMOVEDIR);
}

void ift_pq_stage_free(struct pq_stage *s)
{
	if (!s)
		return;
	if (s->fd >= 0) {
		close(s->fd);
		remove_tree(s->at, s->name, 0);
	}
	while (s->nmoved)
		free(s->moved[--s->nmoved]);
	free(s->moved);
	if (s->inside && s->at >= 0)
		close(s->at);
	if (s->parent >= 0)
		close(s->parent);
	free(s->base);
	free(s);
}
