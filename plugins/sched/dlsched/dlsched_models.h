/*****************************************************************************\
 *  dlsched_models.h - the learned policies (dl2, dual-agent) in sched/dlsched.
 *
 *  Built with libtorch (configure found it: DLSCHED_WITH_MODELS, set in
 *  plugins/local.mk for this plugin only), sched_dlsched.so links the models
 *  library (models/libdlsched_models.la, libtorch) and installs its policies
 *  before the first scheduler is created. No other plugin links libtorch:
 *  the select plugin is loaded by slurmd and clients too, and the advisor
 *  plugins keep slurmctld light; for them Policy=dl2 is an unknown policy
 *  (logged, and Slurm decides).
\*****************************************************************************/

#ifndef _DLSCHED_SCHED_MODELS_H
#define _DLSCHED_SCHED_MODELS_H

#include <stdbool.h>

#ifdef DLSCHED_WITH_MODELS
/* models/learned.cpp: makes dlsched_scheduler_create() know dl2 and dual-agent. Never throws. */
extern void dlsched_models_install(void);
#endif

/* Install the learned policies when this build has them; true if it did. */
static inline bool dls_models_install(void)
{
#ifdef DLSCHED_WITH_MODELS
	dlsched_models_install();
	return true;
#else
	return false;
#endif
}

#endif
