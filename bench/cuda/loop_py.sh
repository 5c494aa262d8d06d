#!/usr/bin/env bash
# The reference training loop (shared/bench-cuda/transformer_steps.py) under
# the Python package alone (`python -m mate_guard`, no node): caching
# against the guard with launch tracking on (default), off, with CUPTI
# subscribed and every callback returning at once (its mechanism's floor),
# and tracking without Python call sites; VARIANTS may add guard-exact
# (device allocations placed byte-exact against the guard), guard-strict
# (every freed range unmapped: the background thread's most work) and guard-base
# (the guard from another library, BASE_LIB=<libmate_guard_cuda.so>: a
# change's before and after in one run). Variants alternate in each round,
# each round starting one variant further on;
# prints the in-loop seconds of each round, medians, and the median of the
# per-round ratios to caching.
#   bench/cuda/loop_py.sh [rounds] [steps] [transformer_steps.py]
# PY: a python with torch and the mate_guard package. STATS=0: as a user
# runs, without MATE_GUARD_CUDA_STATS (its counters read the clock; no
# counters printed then). PIN=<cpu list>: every run under `taskset -c` on
# those CPUs. Needs a GPU.
set -u
rounds=${1:-3}; steps=${2:-300}
here=$(cd "$(dirname "$0")" && pwd)
STEPS=${3:-$here/../../../shared/bench-cuda/transformer_steps.py}
PY=${PY:-python3}
. "$here/loop_variants.sh"
. "$here/medians.sh"
read -r -a variants <<<"${VARIANTS:-caching guard guard-notrack guard-emptycb guard-nostacks}"
stats=(MATE_GUARD_CUDA_STATS=1)
[ "${STATS:-1}" = 0 ] && stats=()
pin=()
[ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
declare -A times
n=${#variants[@]}
for ((r = 1; r <= rounds; r++)); do
  # Each round starts one variant further on: no variant always runs right after another.
  for ((k = 0; k < n; k++)); do
    v=${variants[$(((k + r - 1) % n))]}
    loop_variant "$v" || exit 2
    out=$("${pin[@]}" env "${LOOP_ENV[@]}" "${stats[@]}" "$PY" "${LOOP_ARGS[@]}" "$STEPS" "$steps" 2>&1)
    t=$(grep -o 'in [0-9.]* s' <<<"$out" | grep -o '[0-9.]*')
    [ -n "$t" ] || { echo "$v failed:"; tail -20 <<<"$out"; exit 1; }
    times[$v]="${times[$v]:-} $t"
    echo "round $r $v $t s $(grep -o 'windowFills=[0-9]*\|filledAhead=[0-9]* MiB\|launches=[0-9]*\|trackMs=[0-9.]* ([^)]*)\|pySites=[0-9]* ([^)]*)\|pyMs=[0-9.]* (GIL wait [0-9.]*)\|allocMs=[0-9.]*\|launchCallMs=[0-9.]*\|backgroundMs=[0-9.]*\|[a-z]*LockWaits=[0-9]* ([0-9.]* ms)\|callbacks=[0-9]* launches, [0-9]* ordering, [0-9]*' <<<"$out" | tr '\n' ' ')"
  done
done
c=$(median "${times[caching]:-}")
for v in "${variants[@]}"; do
  m=$(median "${times[$v]}")
  # And the median of the rounds' own ratios (each round's variants ran back to back).
  pr=$(median "$(paired_ratios "${times[$v]}" "${times[caching]:-}")")
  echo "| $v |${times[$v]} | $m | $([ -n "$c" ] && ratio "$m" "$c") | ${pr:+$(awk -v r="$pr" 'BEGIN {printf "%.2fx", r}')} |"
done
