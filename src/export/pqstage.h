/* SPDX-License-Identifier: MIT */
#ifndef IFT_EXPORT_PQSTAGE_H
#define IFT_EXPORT_PQSTAGE_H

/*
 * A Parquet export is whole or nothing (docs/sql.md, docs/security.md): its
 * files are written into a stage, a directory of its own beside DIR
 * (.BASE.ingero-XXXXXX, mode 0700; inside an existing DIR, .ingero-XXXXXX,
 * where DIR's parent cannot be written), and moved into DIR only once every
 * one of them is written.  Where DIR is not there, the stage becomes DIR in one
 * rename.  Where it is, each partition (host=H, then rank=R) that DIR lacks
 * moves in one rename, and into a partition DIR has, each file moves by
 * itself, never replacing one (RENAME_NOREPLACE), the trace's marks last; a
 * move that fails puts back those before it.  What is left of the stage,
 * committed or not, is removed with it.
 *
 * Below DIR, no level is followed where it is a link: a link at
 * DIR/host=H or DIR/host=H/rank=R is an error (ELOOP or ENOTDIR).
 */
#include <stdbool.h>

struct pq_stage;

/* A stage for DIR (DIR itself is not touched): 0 or a negative errno. */
int ift_pq_stage_begin(const char *dir, struct pq_stage **out);

/*
 * The partition HOST/RANK (two names: "host=H", "rank=R"): its directory in
 * the stage, made as needed, in *STAGED, and DIR's own in *FINAL (-1 where
 * DIR has none yet).  On an error, *LEVEL is 1 when HOST is what is wrong,
 * 2 when RANK is.  The caller closes both descriptors.
 */
int ift_pq_stage_part(struct pq_stage *s, const char *host, const char *rank, int *staged,
		  int *final, int *level);

/* Whether NAME is taken in either directory of a partition (-1: not that one). */
bool ift_pq_stage_taken(int staged, int final, const char *name);

/* Moves the stage's files into DIR as above: 0 or a negative errno. */
int ift_pq_stage_commit(struct pq_stage *s);

/* Removes what is left of the stage and frees S.  NULL is fine. */
void ift_pq_stage_free(struct pq_stage *s);

#endif
