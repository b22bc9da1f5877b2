#!/bin/sh
# Layering check (doc/architecture.md): common/ and models/ never include a Slurm header; only models/ includes
# libtorch. Fails listing the offending lines.
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}"
status=0
# Any header of Slurm's tree (src/...), its public headers (slurm/..., or bare slurm.h,
# slurm_errno.h, slurmdb.h, spank.h when -I points into slurm/).
slurm_re='#[[:space:]]*include[[:space:]]*[<"](slurm/|src/|slurm[a-z_]*\.h[>"]|slurmdb\.h|spank\.h)'
# The pattern must catch what it is for: a self-test on lines that it has to flag.
for line in '#include <slurm/slurm.h>' '#include "src/slurmctld/slurmctld.h"' '#include "src/interfaces/gres.h"' \
	'# include <spank.h>' '#include "slurm_errno.h"' '#include <slurmdb.h>'; do
	printf '%s\n' "$line" | grep -qE "$slurm_re" || { echo "FAIL: the layering pattern misses '$line'"; exit 1; }
done
printf '%s\n' '#include "policy/slurm_like.h"' '#include <string>' | grep -qE "$slurm_re" &&
	{ echo "FAIL: the layering pattern flags a non-Slurm header"; exit 1; }
bad=$(grep -rnE "$slurm_re" "$top/common" "$top/models" 2>/dev/null)
if [ -n "$bad" ]; then
	echo "FAIL: common/ or models/ includes a Slurm header:"
	echo "$bad"
	status=1
fi
bad=$(grep -rnE '#[[:space:]]*include[[:space:]]*[<"](torch/|ATen/|c10/)' \
	"$top/common" "$top/contribs" "$top/plugins" 2>/dev/null)
if [ -n "$bad" ]; then
	echo "FAIL: libtorch is included outside models/:"
	echo "$bad"
	status=1
fi
[ $status -eq 0 ] && echo "PASS: layering (common/ and models/ free of Slurm, libtorch only in models/)"
exit $status
