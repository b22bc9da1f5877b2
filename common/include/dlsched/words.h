/*
 * dlsched/words.h - the words sched/dlsched writes into a job's admin comment, each as one
 * "<word>=<value>" token among space-separated ones, so that sacct keeps them (dlsched-report
 * reads them back): the one definition of their spelling. C includes this header; tools in other
 * languages read its `#define DLSCHED_WORD_<NAME> "<word>"` lines when they run (keep that form,
 * one a line): dlsched-report does (word("NAME"), DLSCHED_WORDS_H); testsuite/check-words.sh
 * checks that it does.
 */
#ifndef DLSCHED_WORDS_H
#define DLSCHED_WORDS_H

#define DLSCHED_WORD_DEADLINE "deadline"      /* the job's deadline (epoch s), also a comment word */
#define DLSCHED_WORD_INFEASIBLE "infeasible"  /* when its deadline was first found infeasible */
#define DLSCHED_WORD_REQUESTED "dl_requested" /* the GPUs it asked for, kept at its first resize */
#define DLSCHED_WORD_RESIZES "dl_resizes"     /* requeues that were resizes */
#define DLSCHED_WORD_HELD "dl_held"           /* when sched/dlsched first held it for its deadline */
#define DLSCHED_WORD_RELEASED "dl_released"   /* when a hold was first seen released */

#endif
