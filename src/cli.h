/* SPDX-License-Identifier: MIT */
#ifndef IFT_CLI_H
#define IFT_CLI_H

/* Shared by main.c and the cmd-*.c files (cli.c): the only code that prints and exits. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ift-trace.h"
#include "ift-version.h"
#include "ift-words.h"

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

extern int verbose;	/* -v raises, -q lowers; 0 is normal */
extern const char *progname;

/* Prints "ingero-ftrace: error: ..." to stderr and returns -1, as git's error(). */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a usage error and returns EXIT_USAGE. */
int usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A command's options, after git's parse-options but kept small: a wrapper
 * over getopt_long that does what every command does alike, so that the
 * command's switch holds only its own options and its own checks.
 */
struct option;
struct cli_options {
	const char *usage;		/* after "usage: ingero-ftrace " */
	const char *help;		/* more for --help, after the usage line and a blank one */
	const char *shortopts;		/* getopt's; '+' first stops at the first argument */
	const struct option *longopts;	/* NULL: short options alone, as getopt() */
	const char **input;		/* where -i/--input FILE goes ('i'), or NULL */
	int max_args;			/* arguments after the options, or CLI_ARGS_ANY */
	const char *args_hint;		/* said after "unexpected argument 'X'" */
	bool bare_usage;		/* a bad option prints the usage line alone */
	int status;			/* the exit code when cli_option_next() returns -1 */
};
#define CLI_ARGS_ANY	(-1)

/*
 * cli_option_next - the next of the command's own options, for its switch:
 * getopt_long's value, with optarg set.  Handles 'h' (the usage and HELP on
 * stdout), 'i' when O->input is set, a bad option or missing value (a usage
 * error) and, after the last option, more than O->max_args arguments (a usage
 * error).  Returns 0 when the options are done (the arguments start at
 * optind, which main() leaves at 1), or -1 when the command must return
 * O->status now: EXIT_OK after --help, EXIT_USAGE after saying why.
 */
int cli_option_next(struct cli_options *o, int argc, char **argv);

/*
 * A process id given on the command line (-p, --pid): decimal digits only
 * (no sign, no blank), 1 to INT32_MAX.  0, or -1 for anything else; every
 * command says "bad pid 'S'" for it.
 */
int cli_parse_pid(const char *s, pid_t *pid);

/*
 * Opens a trace for a command, printing a one-line error on failure (with a
 * hint when only an unfinished PATH.part exists) and a warning when only part
 * of the file could be read.  Damage before the file's end (data after it
 * discarded) is a one-line error instead, and main() turns the command's
 * success into exit 1.  Returns NULL on failure.
 */
struct ift_trace *cli_open_trace(const char *path, unsigned flags);
/* Whether a trace cli_open_trace() opened lost data to damage: exit 1. */
bool cli_trace_data_lost(void);

/*
 * An output file named by the user, opened as root may open it
 * (docs/security.md): written as PATH.part, made without following links, and
 * renamed over PATH by cli_output_close() (a link at PATH is replaced, not
 * followed, unless it is the caller's own, as protected_symlinks has it; a
 * device or pipe at PATH is written in place).  Returns NULL with errno set.
 */
struct ift_outfile;
FILE *cli_output_open(struct ift_outfile *o, const char *path);
/* Closes F; with RET >= 0 puts it in place, else removes PATH.part.  Returns
   RET, or the first error of closing or renaming. */
int cli_output_close(struct ift_outfile *o, FILE *f, int ret);

struct ift_creds;
/*
 * cli_sudo_user - under sudo (root, with SUDO_UID set and not 0), the user who
 * ran it: SUDO_UID and SUDO_GID, and the groups the group database gives the
 * name passwd has for that uid (or SUDO_USER when passwd has none).  Fills AS
 * (AS->groups malloc'ed: the caller frees it) and returns 1; 0 when not under
 * sudo; -1 after printing why the user cannot be known for sure (ids that do
 * not parse, no name to find the groups by): nothing may then run for it.
 */
int cli_sudo_user(struct ift_creds *as);

/*
 * cli_parse_duration - a duration such as 12s, 20.5s, 300ms, 40us, 1500ns,
 * 2m or 1h, a bare number in seconds, into *OUT in ns.  Returns 0, or -1
 * for anything else (no digits, an unknown unit, an overflow).
 */
int cli_parse_duration(const char *s, uint64_t *out);

/*
 * cli_parse_size - a size such as 64K, 100M, 20G or 1T (powers of 1024; KB
 * and KiB too) into *OUT in bytes.  0, or -1 for anything else, a bare
 * number included.
 */
int cli_parse_size(const char *s, uint64_t *out);

/* Where free text wraps: a terminal on stdout narrower than the report's
   width, or 0 (the default). */
int cli_terminal_width(void);

/* fflush + ferror on stdout: a full disk under `cmd > file' is an error. */
int cli_finish_stdout(int status);


int cmd_record(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_discover_debug(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_nvml_helper(int argc, char **argv);

#endif
