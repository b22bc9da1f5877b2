/*****************************************************************************\
 *  spool.h - the collector's spool (doc/protocol.md, "Delivery"): every batch
 *  is a file in <spool>/<uid>/ before it is sent, and stays there until the
 *  ingest service accepted it.
 *
 *  Names: <time_ns>-<job>-<step>-<seq>.json, the time zero-padded to 19
 *  digits, so that the name order is the order the batches were made in.
 *  A batch being written is ".<name>.tmp.<pid>" (renamed when complete); one
 *  being sent is "<name>.claimed.<pid>", so that two collectors of one user
 *  never send the same batch at once. A claim or a temporary file of a
 *  collector that is gone is taken back by the next scan.
\*****************************************************************************/

#ifndef DLSCHED_COLLECT_SPOOL_H
#define DLSCHED_COLLECT_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* spool_write(): the cap was reached (nothing written). */
#define SPOOL_FULL (-2)

typedef struct {
	char *dir;	     /* <spool>/<uid> */
	int dirfd;	     /* <spool>/<uid>, opened without following links */
	long long max_bytes; /* cap of the batches' bytes (0: none) */
	bool full;	     /* the last write found the cap reached */
	char *rejected;	     /* <spool>/<uid>/rejected */
	char tag[96];	     /* "<job>-<step>" */
	unsigned seq;
} spool_t;

/* Opens <base>/<uid> (spooldir.h: root made it; as root, the collector makes
 * it itself), checks the directories above, makes rejected/ if missing. */
extern int spool_init(spool_t *s, const char *base, uid_t uid, const char *tag, long long max_bytes, char *err,
		      size_t errlen);
extern void spool_fini(spool_t *s);

/* Writes one batch (fsync of the file before the rename and of the directory
 * after it); its file name (not the path) goes to name. 0, SPOOL_FULL when
 * it would pass max_bytes (logged once until there is room again), or -1
 * (logged; errno says why: ENOSPC...). */
extern int spool_write(spool_t *s, const char *data, size_t len, char *name, size_t namelen);

/* The batches waiting, oldest first (names; free with spool_free_names).
 * Takes back claims and removes temporary files of collectors that are gone. */
extern int spool_scan(spool_t *s, char ***names, size_t *n);
extern void spool_free_names(char **names, size_t n);

/* Claims a waiting batch for this process: -1 if another collector took it
 * (or it is gone). */
extern int spool_claim(spool_t *s, const char *name);
/* A claimed batch: its content (malloc'ed, NUL-terminated). */
extern char *spool_read_claimed(spool_t *s, const char *name, size_t *len);
/* ... back to waiting, delivered, or moved to rejected/ with the answer
 * beside it (rejected/<name> and rejected/<name>.answer). */
extern int spool_unclaim(spool_t *s, const char *name);
extern int spool_delete_claimed(spool_t *s, const char *name);
extern int spool_reject_claimed(spool_t *s, const char *name, const char *answer, size_t len);

/* Whether pid is a running dlsched-collect. */
extern int spool_collector_alive(pid_t pid);

#endif
