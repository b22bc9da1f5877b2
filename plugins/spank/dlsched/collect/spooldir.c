/*****************************************************************************\
 *  spooldir.c - the spool's directories (spooldir.h).
\*****************************************************************************/

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spooldir.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* st (of path) may be above the spool: root's, written by nobody else but
 * root, or sticky with next_root (the next component belongs to root). */
static int _ancestor_ok(const char *path, const struct stat *st, bool next_root, char *err, size_t errlen)
{
	if (st->st_uid != 0) {
		snprintf(err, errlen,
			 "%s belongs to uid %u, not root: a spool must be under directories only root controls (move "
			 "the spool)",
			 path, (unsigned) st->st_uid);
		return -1;
	}
	if ((st->st_mode & 022) && !((st->st_mode & S_ISVTX) && next_root)) {
		snprintf(err, errlen,
			 "%s may be written by others (mode %04o): a spool must be under directories only root may "
			 "write (chmod go-w it, or move the spool)",
			 path, (unsigned) (st->st_mode & 07777));
		return -1;
	}
	return 0;
}

extern int spooldir_open_base(const char *path, bool create, char *err, size_t errlen)
{
	char prefix[4096];
	struct stat st, next;
	const char *p = path;
	int fd, nfd;

	if (path[0] != '/' || strlen(path) >= sizeof(prefix)) {
		snprintf(err, errlen, "spool %s: need an absolute path", path);
		return -1;
	}
	if ((fd = open("/", DIR_FLAGS)) < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "/: %s", strerror(errno));
		return -1;
	}
	snprintf(prefix, sizeof(prefix), "/");
	for (;;) {
		char name[256];
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		if (n >= sizeof(name) || (n == 2 && !strncmp(p, "..", 2))) {
			snprintf(err, errlen, "spool %s: a component is too long or '..'", path);
			goto fail;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		if (create && mkdirat(fd, name, 0755) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot create %s%s%s: %s", prefix, prefix[1] ? "/" : "", name,
				 strerror(errno));
			goto fail;
		}
		if ((nfd = openat(fd, name, DIR_FLAGS)) < 0 || fstat(nfd, &next) < 0) {
			snprintf(err, errlen, "%s%s%s: %s%s", prefix, prefix[1] ? "/" : "", name, strerror(errno),
				 errno == ELOOP || errno == ENOTDIR
					 ? " (a spool is never reached through a symbolic link: give its real path)"
					 : "");
			if (nfd >= 0)
				close(nfd);
			goto fail;
		}
		if (_ancestor_ok(prefix, &st, next.st_uid == 0, err, errlen) < 0) {
			close(nfd);
			goto fail;
		}
		close(fd);
		fd = nfd;
		st = next;
		snprintf(prefix + strlen(prefix), sizeof(prefix) - strlen(prefix), "%s%s", prefix[1] ? "/" : "", name);
	}
	/* The spool itself: root's, and nobody else may make entries in it. */
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		snprintf(err, errlen,
			 "spool %s must belong to root with mode 0755 (it is uid %u, mode %04o; chown root and chmod "
			 "755 it: each user's directory in it is made by root)",
			 path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* dirfd/name opened no-follow: a directory of uid nobody else may write. */
static int _open_checked(int dirfd, const char *dir, const char *name, uid_t uid, char *err, size_t errlen)
{
	struct stat st;
	int fd = openat(dirfd, name, DIR_FLAGS);

	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s/%s: %s%s", dir, name, strerror(errno),
			 errno == ELOOP || errno == ENOTDIR
				 ? " (not a directory: a link or a file; remove it, it is made again)"
				 : "");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_uid != uid || (st.st_mode & 022)) {
		snprintf(err, errlen,
			 "%s/%s belongs to uid %u with mode %04o, not to uid %u with nobody else writing it (remove "
			 "it; it is made again)",
			 dir, name, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777), (unsigned) uid);
		close(fd);
		return -1;
	}
	return fd;
}

extern int spooldir_open_user(int basefd, const char *base, uid_t uid, gid_t gid, bool create, char *err, size_t errlen)
{
	char name[24];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), "%u", (unsigned) uid);
	if (create && mkdirat(basefd, name, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s/%s: %s", base, name, strerror(errno));
		return -1;
	}
	if (create && uid != 0) {
		/* Only root writes the base: what is there is root's doing. A
		 * directory made here, or left by a make-then-chown cut short,
		 * still belongs to root: give it to the user. */
		fd = openat(basefd, name, DIR_FLAGS);
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == 0 && fchown(fd, uid, gid) < 0) {
			snprintf(err, errlen, "chown %s/%s to uid %u: %s", base, name, (unsigned) uid, strerror(errno));
			close(fd);
			return -1;
		}
		if (fd >= 0)
			close(fd);
	}
	if (!create && faccessat(basefd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
		snprintf(err, errlen,
			 "%s/%s is missing: spank/dlsched makes it as root when a step of uid %u starts (is --spool "
			 "the plugin's spool=?)",
			 base, name, (unsigned) uid);
		return -1;
	}
	return _open_checked(basefd, base, name, uid, err, errlen);
}

extern int spooldir_open_sub(int dirfd, const char *dir, const char *name, uid_t uid, char *err, size_t errlen)
{
	if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s/%s: %s", dir, name, strerror(errno));
		return -1;
	}
	return _open_checked(dirfd, dir, name, uid, err, errlen);
}
