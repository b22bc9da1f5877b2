#!/usr/bin/env bash
# job_submit/dlsched in a real slurmctld (dlsched-cluster, dlsched mode: JobSubmitPlugins=dlsched):
#  - an elastic range that does not contain the GPUs per node the job asks for is refused at
#    submission with the reason (--gres=gpu:2 --dl-elastic=3:4, and the same by comment words), as
#    is a range on GPUs given per job (--gpus=2); a range that contains them is accepted;
#  - the comment's deadline= word is fixed at submission: a user who adds one to a pending job
#    (scontrol update Comment=) or changes the one given is refused, and the job's comment stays;
#    other comment changes pass; an operator (root) may change it.
# About 1 minute. Skips (77) without root, Slurm/munge/MariaDB, the plugins, runuser or useradd.
set -u
. "${srcdir:-.}/testsuite/cluster/lib.sh"  # profiled_cluster_test, wait_for, ...
profiled_cluster_test job-submit
[ -e "$build/plugins/lib/job_submit_dlsched.so" ] || { echo "SKIP: job_submit_dlsched.so not built"; exit 77; }
for c in runuser useradd; do command -v $c >/dev/null || { echo "SKIP: $c missing"; exit 77; }; done
user=dlsched-submit
id -u $user >/dev/null 2>&1 || useradd -r -M -d /nonexistent -s /usr/sbin/nologin $user ||
	{ echo "SKIP: cannot create the user $user"; exit 77; }

profiled_cluster_up --nodes 1 --gpus 4
grep -q '^JobSubmitPlugins=dlsched' "$SLURM_CONF" && ok "dlsched-cluster configures JobSubmitPlugins=dlsched" ||
	ko "no JobSubmitPlugins=dlsched in $SLURM_CONF"
mkdir -m 777 -p "$dir/out"
sub() { runuser -u $user -- sbatch --parsable -o /dev/null --time=5 "$@" 2>"$dir/err"; }

refused() {  # refused WHAT PATTERN SBATCH-ARGS...
	local what="$1" pat="$2" j
	shift 2
	if j=$(sub "$@"); then
		ko "$what: accepted as job $j"
	elif grep -q -- "$pat" "$dir/err"; then
		ok "$what: refused, sbatch says why ($(grep -o 'dlsched: .*' "$dir/err" | head -1 | cut -c1-100))"
	else
		ko "$what: refused, but not for the reason '$pat': $(cat "$dir/err")"
	fi
}
refused "--gres=gpu:2 --dl-elastic=3:4" "does not contain the 2 GPUs" --gres=gpu:2 --dl-elastic=3:4 --wrap true
refused "--gres=gpu:4 --comment 'gpus_min=1 gpus_max=2'" "does not contain the 4 GPUs" --gres=gpu:4 \
	--comment "gpus_min=1 gpus_max=2" --wrap true
refused "--gpus=2 --dl-elastic=1:4" "needs the job's GPUs per node" --gpus=2 --dl-elastic=1:4 --wrap true
j=$(sub --gres=gpu:2 --dl-elastic=1:4 --hold --wrap true) && ok "--gres=gpu:2 --dl-elastic=1:4 accepted (job $j)" ||
	ko "--gres=gpu:2 --dl-elastic=1:4 refused: $(cat "$dir/err")"

# The deadline word, on held jobs of the user's own.
later=$(( $(date +%s) + 3600 ))
a=$(sub --gres=gpu:1 --hold --comment "model=cifar10" --wrap true) || ko "submit a: $(cat "$dir/err")"
b=$(sub --gres=gpu:1 --hold --comment "deadline=$later" --wrap true) || ko "submit b: $(cat "$dir/err")"
comment_of() { squeue -h -j "$1" -o %k; }
runuser -u $user -- scontrol update JobId="$a" Comment="model=cifar10 deadline=$later" >"$dir/upd" 2>&1 &&
	ko "the user added deadline= to job $a: $(comment_of "$a")" ||
	{ [ "$(comment_of "$a")" = "model=cifar10" ] && ok "adding deadline= to a submitted job is refused ($(head -1 "$dir/upd"))" ||
		ko "job $a's comment became '$(comment_of "$a")'"; }
runuser -u $user -- scontrol update JobId="$b" Comment="deadline=$((later + 86400))" >"$dir/upd" 2>&1 &&
	ko "the user moved job $b's deadline word: $(comment_of "$b")" ||
	{ [ "$(comment_of "$b")" = "deadline=$later" ] && ok "moving the deadline= word is refused" ||
		ko "job $b's comment became '$(comment_of "$b")'"; }
grep -q "refused uid $(id -u $user)'s update of JobId=$a" "$log" && ok "slurmctld's log says why" ||
	ko "no refusal of $a in $log"
runuser -u $user -- scontrol update JobId="$b" Comment="deadline=$later model=cifar10" >"$dir/upd" 2>&1 &&
	[ "$(comment_of "$b")" = "deadline=$later model=cifar10" ] && ok "other comment changes pass" ||
	ko "a comment change that keeps the deadline was refused: $(cat "$dir/upd")"
scontrol update JobId="$a" Comment="model=cifar10 deadline=$later" >"$dir/upd" 2>&1 &&
	[ "$(comment_of "$a")" = "model=cifar10 deadline=$later" ] && ok "an operator (root) may set it" ||
	ko "root's update: $(cat "$dir/upd"); comment '$(comment_of "$a")'"
scancel "$a" "$b" "$j" 2>/dev/null
[ "$fails" -eq 0 ] || { echo "cluster kept for inspection: $dir"; trap - EXIT; "$tool" down --dir "$dir/c" >/dev/null 2>&1; }
exit $((fails > 0))
