#!/usr/bin/env bash
# DistributedDataParallel training loop (test/fixtures/cuda/ddp_train.py,
# torchrun, one GPU per rank) plain vs under `mate guard-run --device cuda`,
# variants alternating, in-loop seconds of rank 0, median of the rounds.
# The guard's counters (MATE_GUARD_CUDA_STATS; STATS=0: off, as a user runs) of each rank are printed
# beside each guarded round: where its time goes (alloc/free/track ms).
#   bench/cuda/ddp.sh [rounds] [ranks] [steps]   (DDP_WIDTH, DDP_BATCH: the model and batch size)
# VARIANTS="plain guard guard-notrack guard-nostacks" picks some (all:
# bench/cuda/ddp_variants.sh). A second table compares rank 0's median
# step (the steady pace, without a run's stalls); DDP_WARMUP steps (20)
# run before the timed ones.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${1:-3}
RANKS=${2:-2}
STEPS=${3:-1000}
. "$ROOT/bench/cuda/medians.sh"
. "$ROOT/bench/cuda/ddp_variants.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
export DDP_WARMUP=${DDP_WARMUP:-20}
declare -A times step_ms
read -r -a variants <<<"${VARIANTS:-plain guard guard-notrack guard-nostacks}"
echo "## $RANKS rank(s), $STEPS steps, $REPS rounds, variants alternating, each round starting one further on"
n=${#variants[@]}
for ((rep = 0; rep < REPS; rep++)); do
  # Each round starts one variant further on: no variant always runs right after another.
  for ((k = 0; k < n; k++)); do
    v=${variants[$(((k + rep) % n))]}
    out=$(ddp_variant "$v" "$RANKS" "$STEPS")
    t=$(grep -o 'steps in [0-9.]* s' <<<"$out" | grep -o '[0-9.]*' | tail -1)
    [ -n "$t" ] || { echo "$v failed:"; echo "$out" | tail -20; }
    m=$(grep -o 'median step [0-9.]* ms' <<<"$out" | grep -o '[0-9.]*' | tail -1)
    echo "$v round $rep: ${t:-?} s, median step ${m:-?} ms"
    grep -o 'cuda stats:.*' <<<"$out" | sed 's/^/    /'
    times[$v]="${times[$v]:-} ${t:--}"  # "-": the round failed (kept, so rounds stay paired)
    step_ms[$v]="${step_ms[$v]:-} ${m:--}"
  done
done
variants_table "${variants[0]}" "${variants[@]}"
echo "## rank 0's median step (ms) in place of the in-loop seconds"
for v in "${variants[@]}"; do times[$v]=${step_ms[$v]}; done
variants_table "${variants[0]}" "${variants[@]}" | sed 's/in-loop s (median)/median step ms (median of rounds)/; s/| rounds (s) |/| rounds (ms) |/'
