/* SPDX-License-Identifier: MIT */
#ifndef IFT_ERROR_H
#define IFT_ERROR_H

/*
 * Error codes of the ingero-ftrace core.  Functions return 0 (or a count) on
 * success and a negative value on failure: -errno for a system error, or one of
 * -IFT_E_* below for an error of our own.  One list makes both the codes and the
 * messages, as libtraceevent's TEP_ERRORS does.
 */
#define IFT_ERRORS							\
	_PE(NOT_TRACE,	"not an ingero-ftrace trace"),			\
	_PE(BYTE_ORDER,	"trace written with an unsupported byte order"),	\
	_PE(TOO_NEW,	"trace needs a newer ingero-ftrace"),		\
	_PE(FEATURE,	"trace uses a required feature this version does not know"), \
	_PE(HEADER,	"trace header is corrupt"),			\
	_PE(EMPTY,	"trace file is empty"),				\
	_PE(NOT_FILE,	"not a regular file"),				\
	_PE(CORRUPT,	"trace data is corrupt"),			\
	_PE(CHECKSUM,	"trace data failed its checksum"),		\
	_PE(TRUNCATED,	"trace file is cut short"),			\
	_PE(NO_TABLE,	"trace has no such table"),			\
	_PE(DECOMPRESS,	"cannot decompress trace data"),		\
	_PE(COMPRESS,	"cannot compress trace data"),			\
	_PE(FINISHED,	"trace writer is already finished"),		\
	_PE(REPLACED,	"the file was replaced while it was written"),	\
	_PE(KEPT,	"a file is there, and an output of a damaged trace replaces none"), \
	_PE(ORDER,	"rows must be appended in time order"),		\
	_PE(LIMIT,	"trace exceeds a limit of the format"),		\
	_PE(NOT_ELF,	"not an ELF file"),				\
	_PE(NO_TRACEFS,	"tracefs is not mounted and cannot be mounted"),	\
	_PE(NO_UPROBES,	"the kernel has no uprobe events (CONFIG_UPROBE_EVENTS)"), \
	_PE(NO_EVENT,	"the kernel has no such trace event"),		\
	_PE(OLD_KERNEL,	"the kernel lacks a feature recording needs (see ingero-ftrace check)"), \
	_PE(NOT_CUDA,	"not a CUDA runtime, CUDA driver or NCCL library"),	\
	_PE(SQL,	"SQLite error"),				\
	_PE(READONLY,	"only read-only SQL (SELECT/WITH/EXPLAIN) is allowed"), \
	_PE(PY_MOVED,	"the Python frames changed while they were read"),	\
	_PE(JOB,	"the traces do not make one job: two processes claim one rank, or communicators of different sizes"), \
	_PE(PIECES,	"the traces are not the pieces of one recording, each once and none missing")

#undef _PE
#define _PE(code, str) IFT_E_##code
enum ift_errno {
	IFT_E_BASE = 10000,	/* above every errno value */
	IFT_ERRORS,
	IFT_E_LAST
};
#undef _PE

/*
 * ift_strerror - the message for a negative return value of the core
 * Returns a static string; never NULL.
 */
const char *ift_strerror(int err);

/*
 * ift_write_error - after a stdio write or flush of an output failed: the
 * errno that says why where it is one a user acts on (ENOSPC, EDQUOT,
 * EFBIG, EPIPE, EBADF), negated; else -EIO.  "No space left on device",
 * not "Input/output error", for a full disk.
 */
int ift_write_error(void);

#endif
