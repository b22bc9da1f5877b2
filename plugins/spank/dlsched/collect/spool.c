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

#define CLAIMED ".claimed."
#define TMP ".tmp."

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

/* A directory of ours: made if missing, then checked. */
static int _own_dir(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", path,
			 strerror(errno));
		return -1;
	}
	if (lstat(path, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory (remove it)",
			 path);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s belongs to uid %u, not to uid %u (remove it; spank/dlsched makes it again)",
			 path, (unsigned) st.st_uid, (unsigned) geteuid());
		return -1;
	}
	if (st.st_mode & 022) {
		snprintf(err, errlen, "%s may be written by others (mode %03o; chmod 700 it)",
			 path, (unsigned) (st.st_mode & 0777));
		return -1;
	}
	return 0;
}

extern int spool_init(spool_t *s, const char *base, uid_t uid,
		      const char *tag, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->tag, sizeof(s->tag), "%s", tag);
	if (asprintf(&s->dir, "%s/%u", base, (unsigned) uid) < 0 ||
	    asprintf(&s->rejected, "%s/%u/rejected", base, (unsigned) uid) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (_own_dir(s->dir, err, errlen) || _own_dir(s->rejected, err, errlen))
		return -1;
	return 0;
}

extern void spool_fini(spool_t *s)
{
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

extern int spool_write(spool_t *s, const char *data, size_t len, char *name,
		       size_t namelen)
{
	struct timespec ts;
	char tmp_name[512], *tmp, *final;
	int fd, rc = -1;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(name, namelen, "%019lld-%s-%06u.json",
		 (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec, s->tag,
		 ++s->seq);
	snprintf(tmp_name, sizeof(tmp_name), ".%s" TMP "%d", name,
		 (int) getpid());
	tmp = _path(s->dir, tmp_name, NULL);
	final = _path(s->dir, name, NULL);
	if (!tmp || !final)
		goto out;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		collect_log("cannot write a batch to %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (_write_all(fd, data, len) < 0 || close(fd) < 0) {
		collect_log("cannot write a batch to %s: %s (disk full?)", tmp,
			    strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, final) < 0) {
		collect_log("cannot rename %s to %s: %s", tmp, final, strerror(errno));
		unlink(tmp);
		goto out;
	}
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
static pid_t _pid_after(const char *name, const char *marker,
			const char **at)
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

		if ((pid = _pid_after(de->d_name, CLAIMED, &at)) &&
		    !spool_collector_alive(pid)) {
			char *from = _path(s->dir, de->d_name, NULL);
			char *base = strndup(de->d_name, at - de->d_name);
			char *to = base ? _path(s->dir, base, NULL) : NULL;

			if (from && to && rename(from, to) == 0) {
				collect_log("took back %s from collector %d, which is gone",
					    base, (int) pid);
				/* readdir may or may not show the new name: add it */
				(void) _push(names, n, &cap, base);
			}
			free(from);
			free(to);
			free(base);
			continue;
		}
		if (de->d_name[0] == '.' &&
		    (pid = _pid_after(de->d_name, TMP, &at)) &&
		    !spool_collector_alive(pid)) {
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

extern int spool_reject_claimed(spool_t *s, const char *name,
				const char *answer, size_t len)
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
	rc = 0;
out:
	free(from);
	free(to);
	free(ans);
	return rc;
}
