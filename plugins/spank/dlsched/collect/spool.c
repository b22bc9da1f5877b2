/*****************************************************************************\
 *  spool.c - batches on disk before and while they are sent (spool.h).
\*****************************************************************************/

#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "spool.h"
#include "spooldir.h"

#define CLAIMED ".claimed."
#define TMP ".tmp."
/* Refused batches kept in rejected/ (with their answers), newest first. */
#define SPOOL_REJECTED_KEEP 64

static char *_path(const char *dir, const char *name, const char *suffix)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s%s", dir, name, suffix ? suffix : "") < 0)
		return NULL;
	return p;
}

static char *_claimed_path(spool_t *s, const char *name)
{
	char suffix[32];

	snprintf(suffix, sizeof(suffix), CLAIMED "%d", (int) getpid());
	return _path(s->dir, name, suffix);
}

extern int spool_init(spool_t *s, const char *base, uid_t uid, const char *tag, long long max_bytes, char *err,
		      size_t errlen)
{
	int basefd, fd;

	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
	s->max_bytes = max_bytes;
	snprintf(s->tag, sizeof(s->tag), "%s", tag);
	if (asprintf(&s->dir, "%s/%u", base, (unsigned) uid) < 0 ||
	    asprintf(&s->rejected, "%s/%u/rejected", base, (unsigned) uid) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* Root makes the base and <uid>/ (spank/dlsched); run by hand as root,
	 * the collector makes them itself. */
	if ((basefd = spooldir_open_base(base, geteuid() == 0, err, errlen)) < 0)
		return -1;
	s->dirfd = spooldir_open_user(basefd, base, uid, getegid(), geteuid() == 0, err, errlen);
	close(basefd);
	if (s->dirfd < 0)
		return -1;
	if ((fd = spooldir_open_sub(s->dirfd, s->dir, "rejected", geteuid(), err, errlen)) < 0)
		return -1;
	close(fd);
	return 0;
}

extern void spool_fini(spool_t *s)
{
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->dir);
	free(s->rejected);
	memset(s, 0, sizeof(*s));
}

static int _write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t) n;
	}
	return 0;
}

/* Bytes of the batches waiting in the spool (and claimed): what the cap counts.
 * rejected/ is bounded on its own (SPOOL_REJECTED_KEEP), the log too (log.c):
 * batches the service refused for good must not fill the cap and stop the
 * user's profiling for ever. */
static long long _spooled_bytes(spool_t *s)
{
	long long total = 0;
	const char *dirs[] = {"."};

	for (int i = 0; i < 1; i++) {
		int fd = openat(s->dirfd, dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *de;
		struct stat st;

		if (!d) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		while ((de = readdir(d))) {
			if (strstr(de->d_name, ".json") &&
			    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
				total += (long long) st.st_size;
		}
		closedir(d);
	}
	return total;
}

extern int spool_write(spool_t *s, const char *data, size_t len, char *name, size_t namelen)
{
	struct timespec ts;
	char tmp_name[512], *tmp, *final;
	int fd, rc = -1;

	if (s->max_bytes > 0) {
		long long used = _spooled_bytes(s);

		if (used + (long long) len > s->max_bytes) {
			if (!s->full)
				collect_log(
					"the spool %s holds %lld bytes of batches: a batch of %zu more would pass its "
					"cap of %lld (spool_max= in plugstack.conf); the records wait in memory until "
					"deliveries make room (is dlsched-ingestd reachable? see the lines above)",
					s->dir, used, len, s->max_bytes);
			s->full = true;
			errno = EDQUOT;
			return SPOOL_FULL;
		}
		if (s->full)
			collect_log("the spool %s has room again (%lld of %lld bytes used)", s->dir, used,
				    s->max_bytes);
		s->full = false;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(name, namelen, "%019lld-%s-%06u.json", (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec, s->tag,
		 s->seq + 1);
	snprintf(tmp_name, sizeof(tmp_name), ".%s" TMP "%d", name, (int) getpid());
	tmp = _path(s->dir, tmp_name, NULL);
	final = _path(s->dir, name, NULL);
	if (!tmp || !final)
		goto out;
	fd = openat(s->dirfd, tmp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		collect_log("cannot write a batch to %s: %s; its records wait in memory", tmp, strerror(errno));
		goto out;
	}
	/* The content on disk before the name says it is complete, and the new
	 * name on disk before the records leave memory. */
	if (_write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		int e = errno;

		collect_log("cannot write a batch to %s: %s; its records wait in memory", tmp, strerror(e));
		close(fd);
		unlinkat(s->dirfd, tmp_name, 0);
		errno = e;
		goto out;
	}
	if (close(fd) < 0 || renameat(s->dirfd, tmp_name, s->dirfd, name) < 0 || fsync(s->dirfd) < 0) {
		int e = errno;

		collect_log("cannot put the batch %s in place: %s; its records wait in memory", final, strerror(e));
		unlinkat(s->dirfd, tmp_name, 0);
		unlinkat(s->dirfd, name, 0);
		errno = e;
		goto out;
	}
	s->seq++;
	rc = 0;
out:
	free(tmp);
	free(final);
	return rc;
}

extern int spool_collector_alive(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (pid <= 0)
		return 0;
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
	if (!(f = fopen(path, "re")))
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strncmp(comm, "dlsched-collect", 15);
}

/* The pid after `marker` at the end of name, or 0. */
static pid_t _pid_after(const char *name, const char *marker, const char **at)
{
	const char *p = strstr(name, marker);
	char *end;
	long pid;

	if (!p)
		return 0;
	pid = strtol(p + strlen(marker), &end, 10);
	if (*end || pid <= 0)
		return 0;
	*at = p;
	return (pid_t) pid;
}

static int _by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static int _ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

static int _push(char ***names, size_t *n, size_t *cap, const char *name)
{
	char *copy;

	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		char **nv = realloc(*names, ncap * sizeof(*nv));

		if (!nv)
			return -1;
		*names = nv;
		*cap = ncap;
	}
	if (!(copy = strdup(name)))
		return -1;
	(*names)[(*n)++] = copy;
	return 0;
}

extern int spool_scan(spool_t *s, char ***names, size_t *n)
{
	DIR *d = opendir(s->dir);
	struct dirent *de;
	size_t cap = 0;

	*names = NULL;
	*n = 0;
	if (!d) {
		collect_log("cannot read the spool %s: %s", s->dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		const char *at = NULL;
		pid_t pid;

		if ((pid = _pid_after(de->d_name, CLAIMED, &at)) && !spool_collector_alive(pid)) {
			char *from = _path(s->dir, de->d_name, NULL);
			char *base = strndup(de->d_name, at - de->d_name);
			char *to = base ? _path(s->dir, base, NULL) : NULL;

			if (from && to && rename(from, to) == 0) {
				collect_log("took back %s from collector %d, which is gone", base, (int) pid);
				/* readdir may or may not show the new name: add it */
				(void) _push(names, n, &cap, base);
			}
			free(from);
			free(to);
			free(base);
			continue;
		}
		if (de->d_name[0] == '.' && (pid = _pid_after(de->d_name, TMP, &at)) && !spool_collector_alive(pid)) {
			char *p = _path(s->dir, de->d_name, NULL);

			if (p)
				unlink(p);
			free(p);
			continue;
		}
		if (de->d_name[0] == '.' || !_ends_with(de->d_name, ".json"))
			continue;
		if (_push(names, n, &cap, de->d_name) < 0)
			break;
	}
	closedir(d);
	if (*n) {
		/* de-duplicate (a taken-back name may also have been listed) */
		size_t k = 0;

		qsort(*names, *n, sizeof(char *), _by_name);
		for (size_t i = 0; i < *n; i++) {
			if (k && !strcmp((*names)[k - 1], (*names)[i])) {
				free((*names)[i]);
				continue;
			}
			(*names)[k++] = (*names)[i];
		}
		*n = k;
	}
	return 0;
}

extern void spool_free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

extern int spool_claim(spool_t *s, const char *name)
{
	char *from = _path(s->dir, name, NULL), *to = _claimed_path(s, name);
	int rc = (from && to) ? rename(from, to) : -1;

	free(from);
	free(to);
	return rc;
}

extern char *spool_read_claimed(spool_t *s, const char *name, size_t *len)
{
	char *path = _claimed_path(s, name), *buf = NULL;
	struct stat st;
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		goto out;
	buf = malloc((size_t) st.st_size + 1);
	while (buf && got < (size_t) st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t) st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t) n;
	}
	if (buf) {
		buf[got] = '\0';
		*len = got;
	}
out:
	if (fd >= 0)
		close(fd);
	free(path);
	return buf;
}

extern int spool_unclaim(spool_t *s, const char *name)
{
	char *from = _claimed_path(s, name), *to = _path(s->dir, name, NULL);
	int rc = (from && to) ? rename(from, to) : -1;

	free(from);
	free(to);
	return rc;
}

extern int spool_delete_claimed(spool_t *s, const char *name)
{
	char *p = _claimed_path(s, name);
	int rc = p ? unlink(p) : -1;

	free(p);
	return rc;
}

/* rejected/ keeps the newest SPOOL_REJECTED_KEEP batches (names start with
 * their time in ns, so the smallest names are the oldest), with their answers. */
static void _prune_rejected(spool_t *s)
{
	int fd = openat(s->dirfd, "rejected", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		if (_ends_with(de->d_name, ".json") && _push(&names, &n, &cap, de->d_name) < 0)
			break;
	}
	if (n > SPOOL_REJECTED_KEEP) {
		qsort(names, n, sizeof(*names), _by_name);
		for (size_t i = 0; i < n - SPOOL_REJECTED_KEEP; i++) {
			char answer[NAME_MAX + 16];

			(void) unlinkat(dirfd(d), names[i], 0);
			snprintf(answer, sizeof(answer), "%s.answer", names[i]);
			(void) unlinkat(dirfd(d), answer, 0);
		}
		collect_log(
			"%s: removed the %zu oldest refused batches: it keeps the newest %d (their answers say why)",
			s->rejected, n - SPOOL_REJECTED_KEEP, SPOOL_REJECTED_KEEP);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
}

extern int spool_reject_claimed(spool_t *s, const char *name, const char *answer, size_t len)
{
	char *from = _claimed_path(s, name), *to = _path(s->rejected, name, NULL);
	char *ans = _path(s->rejected, name, ".answer");
	int rc = -1, fd;

	if (!from || !to || !ans)
		goto out;
	if (rename(from, to) < 0) {
		collect_log("cannot move %s to %s: %s", from, to, strerror(errno));
		goto out;
	}
	fd = open(ans, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		(void) _write_all(fd, answer, len);
		close(fd);
	}
	_prune_rejected(s);
	rc = 0;
out:
	free(from);
	free(to);
	free(ans);
	return rc;
}
