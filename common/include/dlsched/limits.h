/*
 * dlsched/limits.h - the limits on a job's dlsched metadata (--dl-model, --dl-epochs, --dl-elastic of
 * spank/dlsched; the comment words the core parses, model/job_metadata.h): one definition, read by
 * the C plugins and the C++ core alike. Plain C, macros only.
 */
#ifndef DLSCHED_LIMITS_H
#define DLSCHED_LIMITS_H

#define DLSCHED_MAX_MODEL_NAME 64 /* characters: letters, digits, '-', '_', '.' */
#define DLSCHED_MAX_EPOCHS 1e7    /* epochs of a job (fractions allowed) */
#define DLSCHED_MAX_JOB_GPUS 4096 /* GPUs of a job, elastic maximum included */

#endif
