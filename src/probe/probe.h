/* SPDX-License-Identifier: MIT */
#ifndef IFT_PROBE_PROBE_H
#define IFT_PROBE_PROBE_H

/*
 * Private to src/probe: plain file operations on tracefs, and the removal of
 * one uprobe group or one instance by name, shared by a session's teardown
 * and the cleanup of leftovers.  Every function returns 0 (or a count) or a
 * negative errno; none prints.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Every object this program creates is named IFT_NAME_PREFIX "<pid>". */
#define IFT_NAME_PREFIX "ingero_"

/* snprintf into BUF; -ENAMETOOLONG when it does not fit. */
int ift_tfs_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Writes STR to PATH in one write(2).  APPEND opens without O_TRUNC, which
 * matters: O_TRUNC on uprobe_events deletes every uprobe of the system, and on
 * set_event_pid clears the list.
 */
int ift_tfs_write(const char *path, const char *str, bool append);
/* Reads PATH whole into a NUL-terminated malloc()ed *OUT (caller frees). */
int ift_tfs_read(const char *path, char **out);
bool ift_tfs_exists(const char *path);
/* Whether the blank-separated list in PATH holds WORD, maybe as "[WORD]". */
bool ift_tfs_has_word(const char *path, const char *word);

/* DIR/instances/NAME/FILE, written with O_TRUNC. */
int ift_tfs_instance_write(const char *dir, const char *name, const char *file,
		       const char *str);

/*
 * Calls FN(group, event, arg) for each line of DIR/uprobe_events; stops
 * and returns what FN returns when it is not 0.
 */
int ift_tfs_uprobe_walk(const char *dir,
		    int (*fn)(const char *group, const char *event, void *arg),
		    void *arg);

/*
 * ift_tfs_group_destroy - delete every uprobe event of GROUP.  An event still
 * enabled somewhere cannot be deleted (EBUSY): it is then disabled at the top
 * level and in every instance, for that event only, and deleted again; one
 * still busy (a file of it open) is tried again for BUSY_MS.  Returns how
 * many events the group had (0: no such group) or an error.
 */
int ift_tfs_group_destroy(const char *dir, const char *group, int busy_ms);

/*
 * ift_tfs_instance_remove - tracing off, every event off, then rmdir.  Returns 0,
 * -ENOENT when there is no such instance, or another negative errno.
 */
int ift_tfs_instance_remove(const char *dir, const char *name);

/*
 * A session holds an exclusive flock(2) on its instance's directory from
 * its creation until its objects are gone, through its teardown helper when
 * it hands the teardown off: a locked instance, and the uprobe group of its
 * name, are a live session's, whatever became of the pid in the name.
 * ift_tfs_instance_lock() takes the lock on DIR/instances/NAME and returns the
 * descriptor that holds it (close-on-exec) or a negative errno;
 * ift_tfs_instance_locked() says whether someone holds it (false when there is
 * no such instance).  A new session whose name a finished one's helper is
 * still tearing down (the pid came back) waits for it.
 */
int ift_tfs_instance_lock(const char *dir, const char *name);
bool ift_tfs_instance_locked(const char *dir, const char *name);
/* Waits until nobody holds the lock (a helper done: seconds at most). */
void ift_tfs_instance_await(const char *dir, const char *name);

/*
 * The set-up lock, an flock(2) on DIR/instances: a recorder holds it
 * exclusively from its session's creation until its probes are armed.
 * Each probe a teardown unregisters holds the kernel's event_mutex for a
 * grace period (88 ms on 6.18), and every probe a set-up writes needs that
 * mutex: a set-up behind a teardown of 104 probes waited all of it, 9 s.  A
 * teardown steps aside between probes while someone holds the lock
 * (ift_tfs_setup_busy()), so a set-up waits for one of them at most.
 * ift_tfs_setup_lock() returns the descriptor that holds it (close-on-exec;
 * ift_tfs_setup_unlock() lets go for every copy of it), or a negative errno.
 * ift_tfs_setup_hold() takes it for this process unless it holds it already
 * (true: this call took it; false also where tracefs refuses flock, and a
 * set-up then waits as it did), ift_tfs_setup_release() lets go.
 */
int ift_tfs_setup_lock(const char *dir);
void ift_tfs_setup_unlock(int fd);
bool ift_tfs_setup_hold(const char *dir);
void ift_tfs_setup_release(void);
bool ift_tfs_setup_busy(const char *dir);

/*
 * cost.c: ift_tfs_trap_target() is a function of this program's own, built as
 * the CUDA libraries' are (a frame pointer first, no endbr64), to time a
 * probe's traps on.  ift_tfs_trap_target_where() gives the file it is mapped
 * from and its offset there, as uprobe_events takes them; -ENOENT where it
 * has no file (a deleted one), -EINVAL where the path has a blank.
 * ift_tfs_trap_target_time() calls it TFS_TRAP_ROUNDS rounds of TFS_TRAP_CALLS
 * calls and returns the fastest round's ns per call.
 */
#define TFS_TRAP_ROUNDS	15
#define TFS_TRAP_CALLS	16
unsigned ift_tfs_trap_target(unsigned x);
int ift_tfs_trap_target_where(char *path, size_t len, uint64_t *off);
uint64_t ift_tfs_trap_target_time(void);

/* NAME is IFT_NAME_PREFIX followed by a positive decimal pid and nothing else. */
bool ift_name_pid(const char *name, pid_t *pid);

#endif
