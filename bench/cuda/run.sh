#!/usr/bin/env bash
# CUDA benchmarks of the device guard, side by side on one GPU, back to back
# (results in bench/README.md, "CUDA"). Needs a GPU, node, python3 with
# PyTorch, compute-sanitizer, and nvcc (or GUARD_PROBE=<built guard_probe>).
#   bench/cuda/run.sh [rounds] [transformer_steps.py] [probe|transformer|all]
# STEPS_N=<n> trains n steps instead of the script's default (50, a ~0.14 s
# loop: too short to tell 1.28x from 1.3x).
# Variants of the transformer loop: caching (plain PyTorch), guard (mate
# guard-run --device cuda: defaults, launch tracking on), guard-notrack
# (--no-track-launches), guard-nostacks (--no-capture-stacks: tracking
# without Python call sites), guard-emptycb (tracking subscribed, its
# callbacks returning at once: CUPTI's own cost), guard-strict (--cuda-quarantine strict
# --sync-on-free), guard-exact (--device-exact-placement: device allocations
# byte-exact; whether PyTorch's kernels run with it decides that setting's
# default), nocache (PYTORCH_NO_CUDA_MEMORY_CACHING=1), and once
# compute-sanitizer memcheck with no caching. VARIANTS="caching guard ..."
# picks some.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${1:-3}
STEPS=${2:-$ROOT/../shared/bench-cuda/transformer_steps.py}
WHAT=${3:-all}
LIB=$ROOT/packages/core-native/build/Release/libmate_guard_cuda.so
MATE=$ROOT/packages/core-native/bin/mate.js
. "$ROOT/bench/cuda/medians.sh"
PROBE=${GUARD_PROBE:-$ROOT/bench/cuda/build/guard_probe}
if [ ! -x "$PROBE" ]; then
  mkdir -p "$(dirname "$PROBE")"
  nvcc -O2 -std=c++17 -arch=native -I"$ROOT/packages/core-native/include" -o "$PROBE" "$ROOT/bench/cuda/guard_probe.cu" -lcuda -ldl -lpthread || exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
DIR=$(mktemp -d)
# The probe loads the plain library directly: the handoff guard-run would write.
handoff() { echo "{\"version\":1,\"settings\":{\"reportDir\":\"$DIR\"$1},\"explicit\":[]}"; }

if [ "$WHAT" != transformer ]; then
  # MATE_GUARD_CUDA_STATS: the guard's counters at exit (ready hits and
  # misses, recycled, allocMs/freeMs/backgroundMs), summed over the run.
  echo "## guarded alloc+free vs cudaMalloc+cudaFree (median of 7), defaults"
  MATE_GUARD_CUDA_STATS=1 MATE_GUARD_SETTINGS=$(handoff "") "$PROBE" "$LIB" bench 7 1000
  echo "## the same, strict quarantine and syncOnFree"
  MATE_GUARD_CUDA_STATS=1 MATE_GUARD_SETTINGS=$(handoff ',"cudaQuarantine":"strict","syncOnFree":true') "$PROBE" "$LIB" bench 7 1000
fi
[ "$WHAT" = probe ] && exit 0

echo "## $(basename "$STEPS"): in-loop seconds, $REPS rounds, variants alternating"
declare -A times
read -r -a variants <<<"${VARIANTS:-caching guard guard-notrack guard-nostacks guard-strict nocache}"
guard() { MATE_GUARD_CUDA_STATS=1 node "$MATE" guard-run --device cuda "$@" -- python3 "$STEPS" ${STEPS_N:-} 2>&1; }
for ((rep = 0; rep < REPS; rep++)); do
  for v in "${variants[@]}"; do
    case $v in
      caching) out=$(python3 "$STEPS" ${STEPS_N:-} 2>&1) ;;
      nocache) out=$(PYTORCH_NO_CUDA_MEMORY_CACHING=1 python3 "$STEPS" ${STEPS_N:-} 2>&1) ;;
      guard) out=$(guard) ;;
      guard-notrack) out=$(guard --no-track-launches) ;;
      guard-nostacks) out=$(guard --no-capture-stacks) ;;
      guard-emptycb) out=$(MATE_GUARD_CUPTI_EMPTY=1 guard) ;;
      guard-strict) out=$(guard --cuda-quarantine strict --sync-on-free) ;;
      guard-exact) out=$(guard --device-exact-placement) ;;
    esac
    t=$(grep -o 'in [0-9.]* s' <<<"$out" | grep -o '[0-9.]*')
    [ -n "$t" ] || { echo "$v failed:"; echo "$out" | tail -20; }
    echo "$v round $rep: ${t:-?} s $(grep -o 'cuda stats:.*' <<<"$out")"
    times[$v]="${times[$v]:-} ${t:--}"  # "-": the round failed (kept, so rounds stay paired)
  done
done
memcheck=
if [ "${MEMCHECK:-1}" != 0 ]; then  # MEMCHECK=0 leaves it out (a minute of GPU time)
  out=$(PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python3 "$STEPS" ${STEPS_N:-} 2>&1)
  memcheck=$(grep -o 'in [0-9.]* s' <<<"$out" | grep -o '[0-9.]*')
  echo "memcheck (no caching) once: ${memcheck:-?} s"
fi
variants_table caching "${variants[@]}"
base=$(median "${times[caching]}")
[ -n "$memcheck" ] && echo "| memcheck, no caching | $memcheck | $(ratio "$memcheck" "$base") |"
g=$(median "${times[guard]}"); n=$(median "${times[guard-notrack]}")
echo "launch tracking: guard / guard-notrack = $(ratio "$g" "$n")"
rm -rf "$DIR"
