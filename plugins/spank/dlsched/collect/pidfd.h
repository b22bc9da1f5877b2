/*****************************************************************************\
 *  pidfd.h - a descriptor for one process (Linux 5.3+), shared by
 *  spank/dlsched and dlsched-collect: it names that process and no other,
 *  even after its pid is reused, and polls readable when the process ends.
\*****************************************************************************/

#ifndef DLSCHED_COLLECT_PIDFD_H
#define DLSCHED_COLLECT_PIDFD_H

#include <errno.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* A pidfd for pid, or -1 (errno ENOSYS on kernels without pidfds). */
static inline int dls_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int) syscall(SYS_pidfd_open, pid, 0);
#else
	(void) pid;
	errno = ENOSYS;
	return -1;
#endif
}

#endif
