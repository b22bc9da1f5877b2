#!/usr/bin/env bash
# dlsched-calibrate on the CPU with the catalog's smallest model (ncf: PyTorch alone, no torchvision),
# three timed iterations: the JSON's fields and values against what they must be. Skips (77) where
# no Python here imports torch (Debian's python3-torch is /usr/bin/python3's; CI installs it with
# scripts/install-deps --slurm). About 10 s on one core.
#
# The checkpoint's size by hand: NeuMF on MovieLens-1M (6,040 users + 3,706 items = 9,746 rows),
# factor 32, MLP embeddings 32 x 2^2 = 128 wide:
#   embeddings 9,746 x (32 + 128)            = 1,559,360
#   MLP 256->128, 128->64, 64->32 (w + b)    = 32,896 + 8,256 + 2,080 = 43,232
#   output (32 + 32) -> 1                    = 65
#   parameters                               = 1,602,657
# Adam keeps two moments per parameter: 3 x 1,602,657 x 4 bytes = 19,231,884 bytes of tensors; the
# file is that plus torch.save's pickled structure (a few kB), well under 19,300,000.
set -u
top="$(cd "${abs_top_srcdir:-${srcdir:-$(dirname "$0")/../..}}" && pwd)"
cal="$top/contribs/calibrate/dlsched-calibrate"
py=""
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import torch' 2>/dev/null; then
		py="$p"
		break
	fi
done
[ -n "$py" ] || { echo "SKIP: no python3 here imports torch (Debian: apt-get install python3-torch)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "PASS: $*"; }
ko() { echo "FAIL: $*"; fails=$((fails + 1)); }
# An assertion on the JSON in $tmp/out.json: d is the document, m its one model, c the catalog's.
jchk() {
	"$py" -c "import json,sys; d=json.load(open(sys.argv[1])); m=d['models'][0]; c=m['catalog']; sys.exit(0 if ($1) else 1)" \
		"$tmp/out.json"
}
check() {  # check DESCRIPTION EXPRESSION
	if jchk "$2"; then ok "$1"; else ko "$1 ($2)"; fi
}

if OMP_NUM_THREADS=1 "$py" "$cal" --models ncf --iterations 3 --warmup-iterations 2 --device cpu --dir "$tmp" \
	--profiles "$top/contribs/profiles" --json "$tmp/out.json" --csv "$tmp/out.csv" >"$tmp/out.txt" 2>"$tmp/err.txt"; then
	ok "runs on the CPU"
else
	ko "exit status $?: $(cat "$tmp/err.txt")"
fi
cat "$tmp/out.txt"
[ -s "$tmp/out.json" ] || { ko "no JSON written"; exit 1; }
check "one model, ncf, nothing failed" "len(d['models']) == 1 and m['model'] == 'ncf' and not d['failed']"
check "parameters 1,602,657 (by hand, above)" "m['parameters'] == 1602657"
check "checkpoint bytes: 19,231,884 of tensors + pickling" "19231884 < m['checkpoint_bytes'] < 19300000"
check "checkpoint MB = bytes / 1e6" "abs(m['checkpoint_mb'] - m['checkpoint_bytes'] / 1e6) < 1e-9"
check "batch size is the catalog's (257)" "m['batch_size'] == 257"
check "samples/s = batch / iteration time > 0" "m['iter_s'] > 0 and abs(m['samples_per_s'] - 257 / m['iter_s']) < 1e-6 * m['samples_per_s']"
check "epoch = 4,971,264 samples / samples/s" "c['samples_per_epoch'] == 4971264 and abs(m['epoch_s'] - 4971264 / m['samples_per_s']) < 1e-6 * m['epoch_s']"
check "warm-up > 0 (the interpreter and import torch at least) and < 300 s" "0 < m['warmup_s'] < 300 and m['warmup_parts_s']['import_torch'] > 0"
check "warm-up fraction = warm-up / epoch" "abs(m['warmup_fraction'] - m['warmup_s'] / m['epoch_s']) < 1e-9"
check "write and read times > 0, MB/s = MB / s" "m['write_s'] > 0 and m['restore_s'] >= m['load_s'] > 0 and abs(m['write_mbps'] * m['write_s'] - m['checkpoint_mb']) < 1e-6 and abs(m['read_mbps'] * m['restore_s'] - m['checkpoint_mb']) < 1e-6"
check "catalog: ncf 40 MB, Pollux's one-GPU speed > 0" "c['checkpoint_mb'] == 40 and c['samples_per_s_1gpu'] > 0 and abs(m['delta']['checkpoint_mb_vs_catalog'] - m['checkpoint_mb'] / 40) < 1e-9"
check "suggested: the one model's bandwidths and warm-up seconds" "abs(d['suggested']['StorageWriteMBps'] / m['write_mbps'] - 1) < 0.01 and abs(d['suggested']['StorageReadMBps'] / m['read_mbps'] - 1) < 0.01 and abs(d['suggested']['WarmupSeconds'] - m['warmup_s']) <= 0.05 + 1e-9 and 'WarmupFraction' not in d['suggested']"
check "meta: device cpu, 3 iterations" "d['meta']['device'] == 'cpu' and d['meta']['iterations'] == 3"
for k in StorageWriteMBps StorageReadMBps WarmupSeconds; do
	grep -q "^$k=[0-9]" "$tmp/out.txt" && ok "suggests $k=" || ko "no $k= line in the output"
done
[ "$(ls "$tmp")" = "$(printf 'err.txt\nout.csv\nout.json\nout.txt')" ] && ok "the checkpoint file was removed" ||
	ko "files left in --dir: $(ls "$tmp")"
"$py" -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); sys.exit(0 if len(r) == 1 and r[0]['model'] == 'ncf' and float(r[0]['catalog_checkpoint_mb']) == 40 else 1)" \
	"$tmp/out.csv" && ok "CSV: one ncf row" || ko "CSV: $(cat "$tmp/out.csv")"

# Bad input: a clear error naming the input, exit 2, nothing measured.
bad() {  # bad WORDS-EXPECTED ARGS...
	local want="$1"
	shift
	if "$py" "$cal" --profiles "$top/contribs/profiles" "$@" >"$tmp/bad.txt" 2>&1; then
		ko "$* succeeded"
	elif grep -q -- "$want" "$tmp/bad.txt"; then
		ok "$*: $(head -1 "$tmp/bad.txt")"
	else
		ko "$*: no '$want' in: $(cat "$tmp/bad.txt")"
	fi
}
bad "'nosuch' is not in the catalog" --models nosuch --dir "$tmp"
bad "'yolov3' cannot be measured" --models yolov3 --dir "$tmp"
bad "iterations 0: give at least 1" --iterations 0 --dir "$tmp"
bad "dir $tmp/none: not a directory" --dir "$tmp/none"
bad "no model catalog found" --profiles "$tmp" --dir "$tmp"
exit $((fails > 0))
