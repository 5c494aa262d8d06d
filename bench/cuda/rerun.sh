#!/usr/bin/env bash
# What the one-step rerun of a device fault costs: the faulting command's
# wall time under `mate guard-run --device cuda --no-rerun` (the report
# alone) vs with the rerun (the command again with launch blocking, which
# names the exact launch), per fixture, median of the rounds.
#   bench/cuda/rerun.sh [rounds]
# Fixtures: a Triton overrun in one process (triton_overrun.py), a canary
# report in the alignment gap (triton_overrun.py 1001), and a 2-GPU
# DistributedDataParallel job with an overrun on rank 1 (ddp_train.py
# overrun 200; skipped with fewer than two GPUs).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${1:-3}
MATE=$ROOT/packages/core-native/bin/mate.js
FIX=$ROOT/test/fixtures/cuda
GPUS=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}'; }
. "$ROOT/bench/cuda/medians.sh"
echo "| fault | plain s | guarded, --no-rerun s | guarded with the rerun s | rerun adds |"
echo "|---|---|---|---|---|"
row() {
  local name=$1; shift
  local plain= norerun= rerun=
  for ((i = 0; i < REPS; i++)); do
    plain="$plain $(secs "$@")"
    norerun="$norerun $(secs node "$MATE" guard-run --device cuda --no-rerun -- "$@")"
    rerun="$rerun $(secs node "$MATE" guard-run --device cuda -- "$@")"
  done
  local p n r
  p=$(median "$plain"); n=$(median "$norerun"); r=$(median "$rerun")
  echo "| $name | $p | $n | $r | $(awk -v a="$r" -v b="$n" 'BEGIN {printf "%.2f s (%.2fx)", a - b, a / b}') |"
}
row "Triton overrun, illegal address" python3 "$FIX/triton_overrun.py"
row "Triton overrun into the alignment gap, canary" python3 "$FIX/triton_overrun.py" 1001
if [ "$GPUS" -ge 2 ]; then
  row "2-GPU DDP, overrun on rank 1" python3 -m torch.distributed.run --nproc-per-node 2 "$FIX/ddp_train.py" overrun 200
fi
