# Helpers the local-cluster tests share (sourced; the cluster's SLURM_CONF is in the environment).

wait_done() {  # wait_done SECONDS JOBID...: until none of them is in the queue
	local t=0 j left
	while [ $t -lt $(($1 * 2)) ]; do
		left=0
		for j in "${@:2}"; do squeue -h -j "$j" 2>/dev/null | grep -q . && left=1; done
		[ $left -eq 0 ] && return 0
		sleep 0.5
		t=$((t + 1))
	done
	return 1
}

# Accounting lags slurmctld: a job gone from squeue may not have its final state in sacct yet.
completed() {  # completed JOBID: its sacct state becomes COMPLETED within 10 s
	local t=0
	while [ $t -lt 20 ]; do
		[ "$(sacct -n -X -P -o State -j "$1" | tail -n1)" = COMPLETED ] && return 0
		sleep 0.5
		t=$((t + 1))
	done
	return 1
}
