#!/usr/bin/env bash
# DistributedDataParallel training loop (test/fixtures/cuda/ddp_train.py,
# torchrun, one GPU per rank) plain vs under `mate guard-run --device cuda`,
# variants alternating, in-loop seconds of rank 0, median of the rounds.
# The guard's counters (MATE_GUARD_CUDA_STATS) of each rank are printed
# beside each guarded round: where its time goes (alloc/free/track ms).
#   bench/cuda/ddp.sh [rounds] [ranks] [steps]   (DDP_WIDTH, DDP_BATCH: the model and batch size)
# VARIANTS="plain guard guard-notrack guard-nostacks" picks some; guard-emptycb:
# CUPTI subscribed, every callback returning at once (MATE_GUARD_CUPTI_EMPTY);
# guard-pending1g: frees wait once 1 GiB of them pend (MATE_GUARD_CUDA_PENDING_MIB).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${1:-3}
RANKS=${2:-2}
STEPS=${3:-1000}
MATE=$ROOT/packages/core-native/bin/mate.js
. "$ROOT/bench/cuda/medians.sh"
TRAIN=$ROOT/test/fixtures/cuda/ddp_train.py
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
torchrun() { python3 -m torch.distributed.run --nproc-per-node "$RANKS" "$TRAIN" "$STEPS" 2>&1; }
guard() { MATE_GUARD_CUDA_STATS=1 node "$MATE" guard-run --device cuda "$@" -- python3 -m torch.distributed.run --nproc-per-node "$RANKS" "$TRAIN" "$STEPS" 2>&1; }
declare -A times
read -r -a variants <<<"${VARIANTS:-plain guard guard-notrack guard-nostacks}"
echo "## $RANKS rank(s), $STEPS steps, $REPS rounds, variants alternating"
for ((rep = 0; rep < REPS; rep++)); do
  for v in "${variants[@]}"; do
    case $v in
      plain) out=$(torchrun) ;;
      guard) out=$(guard) ;;
      guard-notrack) out=$(guard --no-track-launches) ;;
      guard-nostacks) out=$(guard --no-capture-stacks) ;;
      guard-emptycb) out=$(MATE_GUARD_CUPTI_EMPTY=1 guard) ;;  # subscribed, callbacks return at once
      guard-pending1g) out=$(MATE_GUARD_CUDA_PENDING_MIB=1024 guard) ;;  # the pending-frees bound before it scaled
    esac
    t=$(grep -o 'steps in [0-9.]* s' <<<"$out" | grep -o '[0-9.]*' | tail -1)
    [ -n "$t" ] || { echo "$v failed:"; echo "$out" | tail -20; }
    echo "$v round $rep: ${t:-?} s"
    grep -o 'cuda stats:.*' <<<"$out" | sed 's/^/    /'
    times[$v]="${times[$v]:-} ${t:--}"  # "-": the round failed (kept, so rounds stay paired)
  done
done
variants_table "${variants[0]}" "${variants[@]}"
