// SPDX-License-Identifier: MIT
/*
 * What every command shares (cli.h): the options, the messages, opening a
 * trace and an output file, the sudo user, the number formats.  The only
 * code besides the commands that prints and exits.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ift-render.h"
#include "util/account.h"
#include "util/outfile.h"
#include "ift-discover.h"

int verbose;
const char *progname = "ingero-ftrace";
/*
 * Set when a trace opened for this command was damaged before its end, so
 * that data after the damage was discarded: the command still prints what it
 * could read, and exits 1.  A file merely cut short (a recorder that died)
 * loses nothing that was ever written, and only warns.
 */
static bool trace_data_lost;

/*
 * One line on stderr.  A message often names a path or a name the traced
 * program chose: it is shown as a terminal may show it (IFT_TEXT_TERM), so
 * it stays one line and acts on nothing.
 */
static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char *msg = NULL;

	fflush(stdout);
	fprintf(stderr, "%s: %s", progname, prefix);
	if (vasprintf(&msg, fmt, ap) < 0)
		fputs(fmt, stderr);	/* no memory: the message's shape at least */
	else
		ift_text_put(stderr, msg, IFT_TEXT_TERM);
	free(msg);
	fputc('\n', stderr);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	if (verbose < 0)
		return;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

int usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "usage: %s %s\n", progname, usage);
	return EXIT_USAGE;
}

/* For getopt's '?': names the bad option, prints the usage, returns EXIT_USAGE. */
static int bad_option(const char *usage, char **argv)
{
	/* getopt is quiet (opterr = 0): one message of ours instead of its own */
	if (optopt && optopt != '?')
		return usage_error(usage, "unknown option or missing value: '-%c'", optopt);
	return usage_error(usage, "unknown option or missing value: '%s'",
			   argv[optind - 1]);
}

int cli_parse_pid(const char *s, pid_t *pid)
{
	uint64_t v = 0;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 10)
		return -1;
	for (; *s; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	if (v == 0 || v > INT32_MAX)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

int cli_option_next(struct cli_options *o, int argc, char **argv)
{
	int c;

	while ((c = getopt_long(argc, argv, o->shortopts, o->longopts, NULL)) != -1) {
		if (c == 'i' && o->input) {
			*o->input = optarg;
			continue;
		}
		if (c == 'h') {
			printf("usage: %s %s\n", progname, o->usage);
			if (o->help)
				printf("\n%s", o->help);
			o->status = EXIT_OK;
			return -1;
		}
		if (c == '?' && o->bare_usage) {
			fprintf(stderr, "usage: %s %s\n", progname, o->usage);
			o->status = EXIT_USAGE;
			return -1;
		}
		if (c == '?') {
			o->status = bad_option(o->usage, argv);
			return -1;
		}
		return c;
	}
	if (o->max_args != CLI_ARGS_ANY && argc - optind > o->max_args) {
		o->status = usage_error(o->usage, "unexpected argument '%s'%s",
					argv[optind + o->max_args],
					o->args_hint ? o->args_hint : "");
		return -1;
	}
	o->status = EXIT_OK;
	return 0;
}

struct ift_trace *cli_open_trace(const char *path, unsigned flags)
{
	const struct ift_recovery *rec;
	struct ift_trace *t;
	struct stat st;
	int ret;

	ret = ift_trace_open(path, flags, &t);
	if (ret == -ENOENT) {
		char part[4096];

		snprintf(part, sizeof(part), "%s%s", path, IFT_PART_SUFFIX);
		if (!stat(part, &st))
			error("cannot open '%s': %s (an unfinished recording is in '%s')",
			      path, ift_strerror(ret), part);
		else
			error("cannot open '%s': %s", path, ift_strerror(ret));
		return NULL;
	}
	if (ret < 0) {
		error("cannot open '%s': %s", path, ift_strerror(ret));
		return NULL;
	}
	rec = ift_trace_recovery(t);
	if (rec->damaged && rec->reason != -IFT_E_TRUNCATED) {
		trace_data_lost = true;
		error("'%s' is damaged (%s): recovered %llu of %llu bytes, the rest is lost",
		      path, ift_strerror(rec->reason),
		      (unsigned long long)rec->good_bytes,
		      (unsigned long long)rec->file_size);
	} else if (rec->damaged)
		warning("'%s' is cut short or damaged (%s): recovered %llu of %llu bytes",
			path, ift_strerror(rec->reason),
			(unsigned long long)rec->good_bytes,
			(unsigned long long)rec->file_size);
	else if (!rec->finished)
		warning("'%s' is unfinished (the recorder did not finish it): all %llu bytes read",
			path, (unsigned long long)rec->file_size);
	return t;
}

FILE *cli_output_open(struct ift_outfile *o, const char *path)
{
	struct stat st;
	FILE *f;
	int fd, ret;

	memset(o, 0, sizeof(*o));
	o->fd = o->dirfd = -1;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
	    (!S_ISLNK(st.st_mode) || st.st_uid == geteuid())) {
		/* a device, a pipe or our own link (/dev/stdout): as asked,
		   creating nothing when it is not a link */
		fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC |
			  (S_ISLNK(st.st_mode) ? O_CREAT | O_TRUNC : O_NOFOLLOW), 0644);
		if (fd < 0)
			return NULL;
		f = fdopen(fd, "w");
		if (!f)
			close(fd);
		return f;
	}
	ret = ift_outfile_create(o, path, false, 0, 0);
	f = ret < 0 ? NULL : fdopen(o->fd, "w");
	if (!f) {
		ret = ret < 0 ? ret : -errno;
		ift_outfile_remove(o);
		ift_outfile_release(o);
		errno = -ret;
		return NULL;
	}
	o->fd = -1;	/* F's now */
	return f;
}

int cli_output_close(struct ift_outfile *o, FILE *f, int ret)
{
	int err;

	errno = 0;
	if (fclose(f) && ret >= 0)
		ret = errno ? -errno : -EIO;
	/* an output of what a damaged trace kept replaces nothing */
	o->keep = trace_data_lost;
	if (o->path && ret >= 0 && (err = ift_outfile_commit(o)) < 0)
		ret = err;
	if (o->path && ret < 0)
		ift_outfile_remove(o);
	ift_outfile_release(o);
	return ret;
}

/* A decimal id and nothing else; (uid_t)-1 is no one's. */
static bool parse_id(const char *s, unsigned long *v)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return !*end && !errno && *v < 0xffffffffUL;
}

int cli_sudo_user(struct ift_creds *as)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID"), *su = getenv("SUDO_USER");
	const char *partial;
	unsigned long uid, gid;
	gid_t *groups;
	char *name = NULL, why[128];
	uid_t su_uid;
	int n;

	memset(as, 0, sizeof(*as));
	if (!u || geteuid() != 0)
		return 0;
	if (!parse_id(u, &uid))
		return error("SUDO_UID '%s' is not a user id: refusing to guess who ran sudo", u);
	if (uid == 0)
		return 0;
	if (!parse_id(g, &gid))
		return error("SUDO_GID '%s' is not a group id: refusing to guess the user's group",
			     g ? g : "");
	/* the uid decides; SUDO_USER only names a user passwd does not know */
	n = ift_account_name((uid_t)uid, &name);
	if (n == 0 && su && *su) {
		if (ift_account_uid(su, &su_uid) > 0 && su_uid != (uid_t)uid)
			return error("SUDO_USER '%s' is not user %lu: refusing to guess its groups",
				     su, uid);
		n = (name = strdup(su)) ? 1 : -ENOMEM;
	}
	if (n < 0)
		return error("cannot look user %lu up: %s", uid, strerror(-n));
	if (n == 0)
		return error("user %lu has no name (no passwd entry, no SUDO_USER): "
			     "refusing to guess its groups", uid);
	n = ift_account_groups(name, (gid_t)gid, &groups, &partial, why, sizeof(why));
	if (n < 0) {
		error("cannot list the groups of user '%s': %s", name, strerror(-n));
		free(name);
		return -1;
	}
	if (partial)
		warning("user '%s' runs the command with the %d groups /etc/group gives: this "
			"static binary does not read the group database's %s, which may give more",
			name, n, partial);
	free(name);
	as->uid = (uid_t)uid;
	as->gid = (gid_t)gid;
	as->groups = groups;
	as->ngroups = (size_t)n;
	return 1;
}

int cli_finish_stdout(int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		error("cannot write output: %s", strerror(errno ? errno : EIO));
		return status ? status : EXIT_RUNTIME;
	}
	return status;
}

bool cli_trace_data_lost(void)
{
	return trace_data_lost;
}

/*
 * A duration such as 12s, 20.5s, 300ms, 40us, 1500ns, 2m or 1h; a bare
 * number is seconds.  Integer arithmetic, so 20.5s is exactly 20500000000.
 */
int cli_parse_duration(const char *s, uint64_t *out)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000ULL }, { "", 1000000000ULL }, { "m", 60000000000ULL },
		{ "min", 60000000000ULL }, { "h", 3600000000000ULL },
	};
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *p = s;
	bool digits = false;

	for (; *p >= '0' && *p <= '9'; p++, digits = true)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole))
			return -1;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits = true) {
			/* digits past the nanosecond do not matter */
			if (scale < 1000000000000000000ULL) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
		}
	}
	if (!digits)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t ns;

		if (strcmp(p, units[i].unit))
			continue;
		if (__builtin_mul_overflow(whole, units[i].ns, &ns) ||
		    __builtin_add_overflow(ns, (uint64_t)((unsigned __int128)frac *
							    units[i].ns / scale), &ns))
			return -1;
		*out = ns;
		return 0;
	}
	return -1;
}

int cli_terminal_width(void)
{
	struct winsize ws;

	/* tables keep their columns; free text follows a narrow terminal */
	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) &&
	    ws.ws_col >= IFT_TEXT_MIN_WIDTH && ws.ws_col < IFT_TEXT_WIDTH)
		return ws.ws_col;
	return 0;
}

/*
 * A size such as 64K, 100M, 20G or 1T (powers of 1024; KB, KiB and the like
 * too), into *OUT in bytes.  A bare number is no size: it would read as a
 * time to `record --rotate'.
 */
int cli_parse_size(const char *s, uint64_t *out)
{
	static const struct { const char *unit; unsigned shift; } units[] = {
		{ "K", 10 }, { "KB", 10 }, { "KiB", 10 }, { "M", 20 }, { "MB", 20 },
		{ "MiB", 20 }, { "G", 30 }, { "GB", 30 }, { "GiB", 30 }, { "T", 40 },
		{ "TB", 40 }, { "TiB", 40 },
	};
	uint64_t v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++)
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return -1;
	if (p == s)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].unit))
			continue;
		if (v > (UINT64_MAX >> units[i].shift))
			return -1;
		*out = v << units[i].shift;
		return 0;
	}
	return -1;
}
