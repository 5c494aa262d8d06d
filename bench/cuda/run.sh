#!/usr/bin/env bash
# CUDA benchmarks of the device guard, side by side on one GPU, back to back
# (results in bench/README.md, "CUDA"). Needs a GPU, node, python3 with
# PyTorch, compute-sanitizer, and nvcc (or GUARD_PROBE=<built guard_probe>).
# Variants: guard = defaults (freed ranges recycled when the background
# thread falls behind; frees don't wait for the GPU); guard-sync = frees wait
# and check (syncOnFree); guard-strict = every freed range unmapped, frees wait.
#   bench/cuda/run.sh [repetitions] [transformer_steps.py]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${1:-3}
STEPS=${2:-$ROOT/../shared/bench-cuda/transformer_steps.py}
LIB=$ROOT/packages/core-native/build/Release/libmate_guard_cuda.so
MATE=$ROOT/packages/core-native/bin/mate.js
PROBE=${GUARD_PROBE:-$ROOT/bench/cuda/build/guard_probe}
if [ ! -x "$PROBE" ]; then
  mkdir -p "$(dirname "$PROBE")"
  nvcc -O2 -std=c++17 -arch=native -I"$ROOT/packages/core-native/include" -o "$PROBE" "$ROOT/bench/cuda/guard_probe.cu" -lcuda -ldl -lpthread || exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

echo "## guarded alloc+free vs cudaMalloc+cudaFree (median of 7), defaults"
"$PROBE" "$LIB" bench 7 1000
echo "## the same, strict quarantine and syncOnFree (MATE_GUARD_CUDA_RECYCLE=0 MATE_GUARD_ALLOCATOR_SYNC_ON_FREE=1)"
MATE_GUARD_CUDA_RECYCLE=0 MATE_GUARD_ALLOCATOR_SYNC_ON_FREE=1 "$PROBE" "$LIB" bench 7 1000

echo "## $(basename "$STEPS"): in-loop seconds, $REPS rounds, variants alternating"
declare -A times
variants=(caching guard guard-sync guard-strict nocache)
guard() { MATE_GUARD_CUDA_STATS=1 env "$@" node "$MATE" guard-run --device cuda -- python3 "$STEPS" 2>&1; }
for ((rep = 0; rep < REPS; rep++)); do
  for v in "${variants[@]}"; do
    case $v in
      caching) out=$(python3 "$STEPS" 2>&1) ;;
      nocache) out=$(PYTORCH_NO_CUDA_MEMORY_CACHING=1 python3 "$STEPS" 2>&1) ;;
      guard) out=$(guard) ;;
      guard-sync) out=$(guard MATE_GUARD_ALLOCATOR_SYNC_ON_FREE=1) ;;
      guard-strict) out=$(guard MATE_GUARD_CUDA_RECYCLE=0 MATE_GUARD_ALLOCATOR_SYNC_ON_FREE=1) ;;
    esac
    t=$(grep -o 'in [0-9.]* s' <<<"$out" | grep -o '[0-9.]*')
    [ -n "$t" ] || { echo "$v failed:"; echo "$out" | tail -20; }
    echo "$v round $rep: ${t:-?} s $(grep -o 'cuda stats:.*' <<<"$out")"
    times[$v]="${times[$v]:-} $t"
  done
done
out=$(PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python3 "$STEPS" 2>&1)
memcheck=$(grep -o 'in [0-9.]* s' <<<"$out" | grep -o '[0-9.]*')
echo "memcheck (no caching) once: ${memcheck:-?} s"
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(median "${times[caching]}")
echo "| variant | in-loop s (median) | / caching |"
echo "|---|---|---|"
for v in "${variants[@]}"; do
  m=$(median "${times[$v]}")
  echo "| $v | $m | $(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.2fx", a / b}') |"
done
[ -n "$memcheck" ] && echo "| memcheck, no caching | $memcheck | $(awk -v a="$memcheck" -v b="$base" 'BEGIN {printf "%.2fx", a / b}') |"
