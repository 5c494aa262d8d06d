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
# run before the timed ones. With the counters on (STATS unset), a third
# table gives each variant's launch calls, us each (guard-emptycb: untracked).
# guard-alternate (and -all, imports-alternate-all) add a table of their
# runs' steps with launches recorded (calls tracked) against steps without,
# within each run.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${1:-3}
RANKS=${2:-2}
STEPS=${3:-1000}
. "$ROOT/bench/cuda/medians.sh"
. "$ROOT/bench/cuda/ddp_variants.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
export DDP_WARMUP=${DDP_WARMUP:-20}
declare -A times step_ms call_us
alternate=()  # the alternating variants' rounds: "variant round recorded not-recorded" (median steps, ms)
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
    # Counters on: each rank's launch calls, us each (launchCallMs over the
    # launch callbacks; guard-emptycb times them untracked).
    c=$(grep -o 'cuda stats:.*' <<<"$out" | sed -n 's/.*launchCallMs=\([0-9.]*\).*callbacks=\([0-9]*\) launches.*/\1 \2/p' |
      awk '$2 > 0 {printf "%s%.2f", sep, $1 * 1000 / $2; sep = " "}')
    [ -n "$c" ] && call_us[$v]="${call_us[$v]:-} $c"
    a=$(sed -n 's/.*median step recorded \([0-9.]*\) ms .*not recorded \([0-9.]*\) ms.*/\1 \2/p' <<<"$out" | tail -1)
    [ -n "$a" ] && alternate+=("$v $rep $a") && echo "    $(grep -o 'alternating.*' <<<"$out" | tail -1)"
    times[$v]="${times[$v]:-} ${t:--}"  # "-": the round failed (kept, so rounds stay paired)
    step_ms[$v]="${step_ms[$v]:-} ${m:--}"
  done
done
variants_table "${variants[0]}" "${variants[@]}"
echo "## rank 0's median step (ms) in place of the in-loop seconds"
for v in "${variants[@]}"; do times[$v]=${step_ms[$v]}; done
variants_table "${variants[0]}" "${variants[@]}" | sed 's/in-loop s (median)/median step ms (median of rounds)/; s/| rounds (s) |/| rounds (ms) |/'
if [ -n "${call_us[*]:-}" ]; then
  echo "## the program's launch calls, us each (counters on; every rank of every round)"
  echo "| variant | us a launch call | median |"
  echo "|---|---|---|"
  for v in "${variants[@]}"; do
    [ -n "${call_us[$v]:-}" ] && echo "| $v |${call_us[$v]} | $(median "${call_us[$v]}") |"
  done
fi
if [ ${#alternate[@]} -gt 0 ]; then
  echo "## rank 0's median step with launches recorded (calls tracked) and not, within each run"
  echo "| variant | round | recorded (ms) | not recorded (ms) | recorded / not |"
  echo "|---|---|---|---|---|"
  declare -A alt_ratios
  for row in "${alternate[@]}"; do
    read -r v rep rec not <<<"$row"
    r=$(awk -v a="$rec" -v b="$not" 'BEGIN {printf "%.3f", a / b}')
    alt_ratios[$v]="${alt_ratios[$v]:-} $r"
    echo "| $v | $rep | $rec | $not | ${r}x |"
  done
  for v in "${variants[@]}"; do
    [ -n "${alt_ratios[$v]:-}" ] && echo "$v, median of rounds: $(median "${alt_ratios[$v]}")x"
  done
fi
