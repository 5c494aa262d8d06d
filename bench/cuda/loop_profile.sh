#!/usr/bin/env bash
# Where the reference loop's time goes: perf samples of the loop's own
# threads (main and autograd, the step's critical path on the CPU) and of the
# guard's background thread, per shared object, caching against the guard
# without launch tracking, with CUPTI's callbacks empty, and by default
# (bench/cuda/loop_profile.py samples only the timed loop). Variants alternate
# in each round; prints each run's loop time and the table of medians
# (bench/cuda/loop_profile_table.py). Per-run reports land in $OUT (default .).
#   bench/cuda/loop_profile.sh [rounds] [steps]
# PY: a python with torch and the mate_guard package; PERF: the perf command
# (default perf; it must be allowed to sample the process). Needs a GPU.
set -u
rounds=${1:-2}; steps=${2:-1500}
here=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python3}
. "$here/loop_variants.sh"
export PERF=${PERF:-perf}
OUT=${OUT:-.}
read -r -a variants <<<"${VARIANTS:-caching guard-notrack guard-emptycb guard}"
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
for ((r = 1; r <= rounds; r++)); do
  for v in "${variants[@]}"; do
    loop_variant "$v" || exit 2
    out=$(env "${LOOP_ENV[@]}" "$PY" "${LOOP_ARGS[@]}" "$here/loop_profile.py" "$steps" "$data/$v.data" 2>&1)
    grep -q ' steps in ' <<<"$out" || { echo "$v failed:"; tail -20 <<<"$out"; exit 1; }
    echo "round $r $v: $(grep -o '[0-9]* steps in [0-9.]* s' <<<"$out")"
    "$PERF" report -i "$data/$v.data" --stdio -n --sort comm,dso 2>/dev/null | grep -v '^#' | grep . >"$OUT/$v.$r.dso.txt"
    rm -f "$data/$v.data"
  done
done
"$PY" "$here/loop_profile_table.py" "$OUT" "${variants[@]}"
