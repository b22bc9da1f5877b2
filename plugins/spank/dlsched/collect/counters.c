/*****************************************************************************\
 *  counters.c - bytes read by the step's processes, received by the node and
 *  read from NFS servers (see counters.h).
 *
 *  Processes: the kernel adds a child's I/O counts to its parent's when the
 *  parent reaps it (wait), so /proc/<pid>/io of a shell already includes the
 *  commands it ran. Summing the descendants naively would count a reaped child
 *  twice, and dropping a vanished process would lose what it read. So: the
 *  total is the sum over the live descendants, plus the last value seen of
 *  each vanished process whose parent is no longer a live descendant (its
 *  counts went to a process we do not count: slurmstepd, or init). When the
 *  parent is alive, it reaped the child and now carries its counts itself.
 *  What a process reads between its last sample and its exit is lost only in
 *  that second case. A parent that ignores SIGCHLD (auto-reaping) loses its
 *  children's last counts too.
\*****************************************************************************/

#define _GNU_SOURCE

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"

struct proc_ent {
	pid_t pid;
	pid_t ppid;
	unsigned long long start; /* start time, clock ticks after boot */
	uint64_t rchar;
	unsigned gen; /* last sample that saw it */
};

struct named_ent {
	char name[256];
	uint64_t last;
	unsigned gen;
};

/* One line of /proc/<pid>/stat, as read by this sample. */
typedef struct {
	pid_t pid;
	pid_t ppid;
	unsigned long long start;
	signed char desc; /* 1 descendant of root, 0 not, -1 unknown */
} proc_stat_t;

static unsigned sample_gen;

extern void counters_init(counters_t *c, pid_t root, pid_t self)
{
	memset(c, 0, sizeof(*c));
	c->root = root;
	c->self = self;
	c->proc_dir = "/proc";
	c->net_dir = "/sys/class/net";
	c->mountstats = "/proc/self/mountstats";
}

extern void counters_fini(counters_t *c)
{
	free(c->procs);
	free(c->ifs);
	free(c->nfs);
	memset(c, 0, sizeof(*c));
}

/* A whole small file into buf (NUL-terminated); its length or -1. */
static ssize_t _read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return -1;
	while ((size_t) got < size - 1) {
		n = read(fd, buf + got, size - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

/* ppid and start time from /proc/<pid>/stat; the command name may hold
 * spaces and parentheses, so fields are counted after its last ')'. */
static int _read_stat(const char *proc_dir, pid_t pid, proc_stat_t *ps)
{
	char path[64], buf[1024], *p, *tok, *save = NULL;
	int field = 2;

	snprintf(path, sizeof(path), "%s/%d/stat", proc_dir, (int) pid);
	if (_read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	if (!(p = strrchr(buf, ')')))
		return -1;
	ps->pid = pid;
	ps->ppid = -1;
	ps->start = 0;
	ps->desc = -1;
	for (tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		field++;
		if (field == 4)
			ps->ppid = (pid_t) strtol(tok, NULL, 10);
		else if (field == 22) {
			ps->start = strtoull(tok, NULL, 10);
			return ps->ppid >= 0 ? 0 : -1;
		}
	}
	return -1;
}

static int _by_pid(const void *a, const void *b)
{
	const proc_stat_t *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static proc_stat_t *_find(proc_stat_t *v, size_t n, pid_t pid)
{
	proc_stat_t key = {.pid = pid};

	return bsearch(&key, v, n, sizeof(*v), _by_pid);
}

/* Whether ps descends from root; the verdict is kept for every process met
 * on the way up, so that the scan stays linear. */
static int _descends(proc_stat_t *v, size_t n, proc_stat_t *ps, pid_t root)
{
	proc_stat_t *chain[64];
	size_t depth = 0;
	int verdict;

	for (;;) {
		if (ps->desc >= 0) {
			verdict = ps->desc;
			break;
		}
		if (depth == sizeof(chain) / sizeof(chain[0])) {
			verdict = 0; /* deeper than any step's tree */
			break;
		}
		chain[depth++] = ps;
		if (ps->ppid == root) {
			verdict = 1;
			break;
		}
		if (ps->ppid <= 1 || !(ps = _find(v, n, ps->ppid))) {
			verdict = 0;
			break;
		}
	}
	for (size_t i = 0; i < depth; i++)
		chain[i]->desc = (signed char) verdict;
	return verdict;
}

static int _read_rchar(const char *proc_dir, pid_t pid, uint64_t *rchar)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "%s/%d/io", proc_dir, (int) pid);
	if (_read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	if (!(p = strstr(buf, "rchar:")))
		return -1;
	*rchar = strtoull(p + 6, NULL, 10);
	return 0;
}

static struct proc_ent *_tracked(counters_t *c, pid_t pid, unsigned long long start)
{
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].pid == pid && c->procs[i].start == start)
			return &c->procs[i];
	return NULL;
}

static struct proc_ent *_track(counters_t *c, pid_t pid, unsigned long long start)
{
	struct proc_ent *e = _tracked(c, pid, start);

	if (e)
		return e;
	if (c->nprocs == c->procs_cap) {
		size_t cap = c->procs_cap ? 2 * c->procs_cap : 64;
		struct proc_ent *n = realloc(c->procs, cap * sizeof(*n));

		if (!n)
			return NULL;
		c->procs = n;
		c->procs_cap = cap;
	}
	e = &c->procs[c->nprocs++];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	e->start = start;
	return e;
}

static void _sample_procs(counters_t *c)
{
	DIR *d = opendir(c->proc_dir);
	struct dirent *de;
	proc_stat_t *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t live = 0, total;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (!isdigit((unsigned char) de->d_name[0]) || *end || pid <= 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 256;
			proc_stat_t *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv)
				break;
			v = nv;
			cap = ncap;
		}
		if (_read_stat(c->proc_dir, (pid_t) pid, &v[n]) == 0)
			n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), _by_pid);

	for (size_t i = 0; i < n; i++) {
		struct proc_ent *e;
		uint64_t rchar;

		if (v[i].pid == c->self || v[i].pid == c->root || !_descends(v, n, &v[i], c->root))
			continue;
		e = _tracked(c, v[i].pid, v[i].start);
		/* Unreadable now (exiting, or not ours): keep the last value. */
		if (_read_rchar(c->proc_dir, v[i].pid, &rchar) < 0) {
			if (e)
				e->gen = sample_gen;
			continue;
		}
		if (!e && !(e = _track(c, v[i].pid, v[i].start)))
			continue;
		if (rchar > e->rchar)
			e->rchar = rchar;
		e->ppid = v[i].ppid;
		e->gen = sample_gen;
	}

	/* Vanished processes: reaped by a live tracked parent, or gone. */
	for (size_t i = 0; i < c->nprocs;) {
		struct proc_ent *e = &c->procs[i];
		bool parent_alive = false;

		if (e->gen == sample_gen) {
			live += e->rchar;
			i++;
			continue;
		}
		for (size_t k = 0; k < c->nprocs; k++) {
			if (c->procs[k].pid == e->ppid && c->procs[k].gen == sample_gen) {
				parent_alive = true;
				break;
			}
		}
		if (!parent_alive)
			c->io_gone += e->rchar;
		c->procs[i] = c->procs[--c->nprocs];
	}
	free(v);
	total = c->io_gone + live;
	if (total > c->io_total)
		c->io_total = total;
}

/* Adds what `name` counted since its last sample (first sight: nothing). */
static int _account(struct named_ent **tab, size_t *n, size_t *cap, const char *name, uint64_t value, uint64_t *total)
{
	struct named_ent *e = NULL;

	for (size_t i = 0; i < *n; i++) {
		if (!strcmp((*tab)[i].name, name)) {
			e = &(*tab)[i];
			break;
		}
	}
	if (!e) {
		if (*n == *cap) {
			size_t ncap = *cap ? 2 * *cap : 8;
			struct named_ent *nt = realloc(*tab, ncap * sizeof(*nt));

			if (!nt)
				return -1;
			*tab = nt;
			*cap = ncap;
		}
		e = &(*tab)[(*n)++];
		snprintf(e->name, sizeof(e->name), "%s", name);
		e->last = value;
	}
	if (value > e->last)
		*total += value - e->last;
	e->last = value; /* a reset counter starts over */
	e->gen = sample_gen;
	return 0;
}

/* Forgets entries this sample did not see (removed interfaces, unmounts). */
static void _forget(struct named_ent *tab, size_t *n)
{
	for (size_t i = 0; i < *n;) {
		if (tab[i].gen != sample_gen)
			tab[i] = tab[--*n];
		else
			i++;
	}
}

static void _sample_net(counters_t *c)
{
	DIR *d = opendir(c->net_dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[512], buf[64];

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "lo"))
			continue;
		snprintf(path, sizeof(path), "%s/%s/statistics/rx_bytes", c->net_dir, de->d_name);
		if (_read_small(path, buf, sizeof(buf)) <= 0)
			continue;
		if (_account(&c->ifs, &c->nifs, &c->ifs_cap, de->d_name, strtoull(buf, NULL, 10), &c->net_total) == 0)
			c->net_seen = true;
	}
	closedir(d);
	_forget(c->ifs, &c->nifs);
}

/*
 * /proc/self/mountstats: "device SERVER:/EXPORT mounted on DIR with fstype
 * nfs4 statvers=1.1", then indented lines; "bytes:" holds normalread
 * normalwrite directread directwrite serverread serverwrite readpages
 * writepages. A file system mounted twice shows the same counters twice:
 * counted once, by device.
 */
static void _sample_nfs(counters_t *c)
{
	FILE *f = fopen(c->mountstats, "re");
	char line[1024], device[256] = "";
	bool in_nfs = false;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char dev[256], fstype[32];

		if (!strncmp(line, "device ", 7)) {
			in_nfs = sscanf(line, "device %255s mounted on %*s with fstype %31s", dev, fstype) == 2 &&
				(!strcmp(fstype, "nfs") || !strcmp(fstype, "nfs4"));
			if (in_nfs)
				snprintf(device, sizeof(device), "%s", dev);
			continue;
		}
		if (in_nfs) {
			unsigned long long v[5];
			const char *p = line;

			while (*p == ' ' || *p == '\t')
				p++;
			if (strncmp(p, "bytes:", 6) ||
			    sscanf(p + 6, "%llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
				continue;
			c->nfs_seen = true;
			(void) _account(&c->nfs, &c->nnfs, &c->nfs_cap, device, v[4], &c->nfs_total);
			in_nfs = false;
		}
	}
	fclose(f);
	_forget(c->nfs, &c->nnfs);
}

extern void counters_sample(counters_t *c)
{
	sample_gen++;
	_sample_procs(c);
	_sample_net(c);
	_sample_nfs(c);
}

extern counter_values_t counters_values(const counters_t *c)
{
	counter_values_t v = {
		.bytes_read = (int64_t) c->io_total,
		.net_rx_bytes = c->net_seen ? (int64_t) c->net_total : -1,
		.nfs_read_bytes = c->nfs_seen ? (int64_t) c->nfs_total : -1,
	};

	return v;
}

static int64_t _minus(int64_t now, int64_t before)
{
	if (now < 0)
		return -1;
	if (before < 0)
		return now;
	return now >= before ? now - before : 0;
}

extern counter_values_t counters_delta(counter_values_t now, counter_values_t before)
{
	counter_values_t d = {
		.bytes_read = _minus(now.bytes_read, before.bytes_read),
		.net_rx_bytes = _minus(now.net_rx_bytes, before.net_rx_bytes),
		.nfs_read_bytes = _minus(now.nfs_read_bytes, before.nfs_read_bytes),
	};

	return d;
}
