#!/usr/bin/env bash
# How often the reference loop's threads wait, per variant: `perf stat
# --per-thread` over the timed loop only (bench/cuda/loop_profile.py with
# WATCH) counting context switches (a thread that blocked and was woken),
# futex calls (lock waits and wake-ups) and ioctls (driver calls that enter
# the kernel), per step, for the main thread, PyTorch's autograd thread and
# the guard's background thread; and the inter-processor interrupts the
# machine took meanwhile. Variants alternate in each round.
#   bench/cuda/loop_waits.sh [rounds] [steps]
# PY: a python with torch and the mate_guard package; PERF: the perf command
# (default perf; it must be allowed to count the process's tracepoints, as
# root). Needs a GPU.
set -u
rounds=${1:-2}; steps=${2:-600}
here=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python3}
PERF=${PERF:-perf}
. "$here/loop_variants.sh"
read -r -a variants <<<"${VARIANTS:-caching guard-notrack guard}"
events=context-switches,syscalls:sys_enter_futex,syscalls:sys_enter_ioctl
stat=$(mktemp)
trap 'rm -f "$stat"' EXIT
for ((r = 1; r <= rounds; r++)); do
  for v in "${variants[@]}"; do
    loop_variant "$v" || exit 2
    out=$(WATCH="$PERF stat --per-thread -x, -e $events -o $stat -p {pid}" env "${LOOP_ENV[@]}" \
      "$PY" "${LOOP_ARGS[@]}" "$here/loop_profile.py" "$steps" /dev/null 2>&1)
    grep -q ' steps in ' <<<"$out" || { echo "$v failed:"; tail -20 <<<"$out"; exit 1; }
    # perf's CSV rows: thread,count,unit,event,...; per step, the loop's threads and the background thread.
    per_step=$(awk -F, -v steps="$steps" '
      $1 ~ /^(python3|pt_autograd_0|mate-guard-cuda)-/ && $2 ~ /^[0-9]+$/ {
        t = $1; sub(/-[0-9]+$/, "", t); e = $4; sub(/^syscalls:sys_enter_/, "", e); n[t ":" e] += $2 }
      END { for (k in n) printf "%s=%.1f\n", k, n[k] / steps }' "$stat" | sort | tr '\n' ' ')
    echo "round $r $v: $(grep -o '[0-9]* steps in [0-9.]* s; interrupts.*' <<<"$out") | per step: $per_step"
  done
done
