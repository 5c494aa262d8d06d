#!/usr/bin/env bash
# The device guard's memory cost, side by side on one GPU (results in
# bench/README.md, "CUDA: memory"): peak device memory of the transformer
# loop plain (caching allocator) vs guarded, and how many 4 GiB tensors fit
# plain vs guarded before torch.OutOfMemoryError.
#   bench/cuda/memory.sh [transformer_steps.py] [steps]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
STEPS=${1:-$ROOT/../shared/bench-cuda/transformer_steps.py}
N=${2:-300}
MATE=$ROOT/packages/core-native/bin/mate.js
PEAK=$ROOT/bench/cuda/peak_memory.py
OOM=$ROOT/test/fixtures/cuda/oom_loop.py
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "## peak device memory of $(basename "$STEPS") ($N steps), plain vs guarded"
for round in 1 2; do
  plain=$(python3 "$PEAK" "$STEPS" "$N" 2>&1)
  guard=$(node "$MATE" guard-run --device cuda -- python3 "$PEAK" "$STEPS" "$N" 2>&1)
  p=$(grep -o 'used: [0-9]* MiB' <<<"$plain" | grep -o '[0-9]*')
  g=$(grep -o 'used: [0-9]* MiB' <<<"$guard" | grep -o '[0-9]*')
  [ -n "$p" ] && [ -n "$g" ] || { echo "failed:"; echo "$plain" | tail -5; echo "$guard" | tail -5; continue; }
  echo "round $round: plain $p MiB, guarded $g MiB: $(awk -v a="$g" -v b="$p" 'BEGIN { printf "%.2fx", a / b }')" \
    "(times: plain $(grep -o 'in [0-9.]* s' <<<"$plain"), guarded $(grep -o 'in [0-9.]* s' <<<"$guard"))"
done
echo "## 4 GiB tensors until torch.OutOfMemoryError, plain vs guarded"
python3 "$OOM" 2>&1 | sed 's/^/plain:   /' | cut -c1-220
node "$MATE" guard-run --device cuda -- python3 "$OOM" 2>&1 | grep -v '^==mate-guard==' | sed 's/^/guarded: /' | cut -c1-220
