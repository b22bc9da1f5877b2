/*
 * load-job: asks slurmctld for one job through libslurm.so, as any Slurm client
 * program does (pyslurm, site tools). libslurm loads slurm.conf's select plugin
 * to read the answer, so this fails (fatal, exit 1) when a dlsched select plugin
 * cannot be loaded outside slurmctld.
 *   load-job JOBID   prints "job JOBID uid UID" and exits 0
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

int main(int argc, char** argv)
{
	job_info_msg_t* msg = NULL;
	uint32_t id;
	int rc;

	if (argc != 2 || !(id = (uint32_t)strtoul(argv[1], NULL, 10))) {
		fprintf(stderr, "usage: load-job JOBID\n");
		return 2;
	}
	slurm_init(NULL);
#ifdef slurm_load_job_sluid
	/* From 26.05 a job is named by a slurm_step_id_t (the uint32_t form only with
	 * SLURM_BACKWARD_COMPAT); slurm_load_job_sluid() came with that signature. */
	slurm_step_id_t step = SLURM_STEP_ID_INITIALIZER;
	step.job_id = id;
	rc = slurm_load_job(&msg, step, SHOW_ALL);
#else
	rc = slurm_load_job(&msg, id, SHOW_ALL);
#endif
	if (rc != SLURM_SUCCESS || !msg || msg->record_count < 1) {
		/* Slurm's errors are in errno (slurm_get_errno() is gone from 23.x). */
		fprintf(stderr, "load-job: %s\n", slurm_strerror(errno));
		return 1;
	}
	printf("job %u uid %u\n", id, msg->job_array[0].user_id);
	slurm_free_job_info_msg(msg);
	return 0;
}
