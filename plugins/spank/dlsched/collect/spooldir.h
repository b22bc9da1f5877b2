/*****************************************************************************\
 *  spooldir.h - the spool's directories, opened without following links
 *  (doc/protocol.md, "Delivery"; plugins/spank/dlsched/README.md, "Spool").
 *
 *  <spool> belongs to root and only root may write it; so may every directory
 *  above it, except a sticky one (/tmp) whose next component belongs to root:
 *  in a sticky directory only an entry's owner may rename or remove it, so no
 *  user can put another directory in its place. <spool>/<uid> is made by root
 *  (spank/dlsched, in slurmstepd) with mkdirat() and given to the user with
 *  fchown() on the descriptor opened O_NOFOLLOW; its subdirectories are the
 *  user's own (made by the collector, as the user).
 *
 *  Shared by spank/dlsched (as root) and dlsched-collect (as the job's user).
\*****************************************************************************/

#ifndef DLSCHED_COLLECT_SPOOLDIR_H
#define DLSCHED_COLLECT_SPOOLDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Opens the absolute directory path (O_DIRECTORY, no link followed on the
 * way) after checking it and every directory above it as said above; with
 * create, missing components are made (root only, mode 0755). Returns the
 * descriptor, or -1 with a one-line reason in err. */
extern int spooldir_open_base(const char *path, bool create, char *err, size_t errlen);

/* Opens <base>/<uid>: made (mode 0700, then given to uid:gid) when missing and
 * create is set; it must be a directory of uid that nobody else may write.
 * Returns the descriptor or -1 with the reason in err. */
extern int spooldir_open_user(int basefd, const char *base, uid_t uid, gid_t gid, bool create, char *err,
			      size_t errlen);

/* Opens (making it if missing, mode 0700) the subdirectory name of dirfd,
 * which must belong to uid and be writable by nobody else. */
extern int spooldir_open_sub(int dirfd, const char *dir, const char *name, uid_t uid, char *err, size_t errlen);

#endif
