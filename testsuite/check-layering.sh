#!/bin/sh
# Layering check (DESIGN.md): common/ and models/ never include a Slurm header; only models/ includes
# libtorch. Fails listing the offending lines.
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}"
status=0
bad=$(grep -rnE '#[[:space:]]*include[[:space:]]*[<"](slurm/|src/(common|slurmctld|slurmd)/|spank\.h)' \
	"$top/common" "$top/models" 2>/dev/null)
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
