/*****************************************************************************\
 *  counters.h - what a training job reads, as seen from outside it:
 *
 *  - bytes read by the step's processes: rchar of /proc/<pid>/io summed over
 *    the descendants of the step's root (slurmstepd), the collector excluded;
 *  - bytes the node received: /sys/class/net/<if>/statistics/rx_bytes summed
 *    over the interfaces but lo;
 *  - bytes NFS read from its servers: the serverread field of the "bytes:"
 *    line of /proc/self/mountstats, summed over NFS mounts.
 *
 *  Each total only grows: counters_sample() adds what was read since the last
 *  sample, so that exited processes, removed interfaces and unmounted file
 *  systems keep what they contributed.
\*****************************************************************************/

#ifndef DLSCHED_COLLECT_COUNTERS_H
#define DLSCHED_COLLECT_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_ent;
struct named_ent;

typedef struct {
	pid_t root;		/* the step's processes descend from it */
	pid_t self;		/* never counted */
	const char *proc_dir;	/* "/proc" */
	const char *net_dir;	/* "/sys/class/net" */
	const char *mountstats; /* "/proc/self/mountstats" */

	struct proc_ent *procs; /* tracked processes, by (pid, start time) */
	size_t nprocs, procs_cap;
	uint64_t io_gone; /* rchar of processes no tracked parent reaped */
	uint64_t io_total;

	struct named_ent *ifs; /* interfaces: last rx_bytes */
	size_t nifs, ifs_cap;
	uint64_t net_total;
	bool net_seen;

	struct named_ent *nfs; /* NFS mounts: last serverread */
	size_t nnfs, nfs_cap;
	uint64_t nfs_total;
	bool nfs_seen; /* some NFS mount was seen since the start */
} counters_t;

/* The totals at one moment; -1 where nothing could be measured. */
typedef struct {
	int64_t bytes_read;
	int64_t net_rx_bytes;
	int64_t nfs_read_bytes;
} counter_values_t;

extern void counters_init(counters_t *c, pid_t root, pid_t self);
extern void counters_fini(counters_t *c);

/* Reads /proc, /sys and mountstats once and updates the totals. */
extern void counters_sample(counters_t *c);

extern counter_values_t counters_values(const counters_t *c);

/* What was read between two moments (-1 where either is unmeasured). */
extern counter_values_t counters_delta(counter_values_t now, counter_values_t before);

#endif
