#!/usr/bin/env bash
# Host time of a tracked driver call (bench/cuda/launch_cost.cu): a kernel
# launch and an event record + stream wait, plain vs the guard without
# launch tracking, with CUPTI's callbacks returning at once
# (MATE_GUARD_CUPTI_EMPTY), and with tracking as by default. Rounds
# alternate the variants; medians of the rounds.
#   bench/cuda/launch_cost.sh [rounds] [background...]
# background: what a second thread does meanwhile (launch_cost.cu: none,
# spin, query, sync, vmm, launch); one table per mode.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/cuda/medians.sh"
REPS=${1:-5}
LIB=$ROOT/packages/core-native/build/Release/libmate_guard_cuda.so
BIN=${LAUNCH_COST:-$ROOT/bench/cuda/build/launch_cost}
if [ ! -x "$BIN" ]; then
  mkdir -p "$(dirname "$BIN")"
  nvcc -O2 -std=c++17 -arch=native -o "$BIN" "$ROOT/bench/cuda/launch_cost.cu" -ldl -lpthread || exit 1
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
DIR=$(mktemp -d)
handoff() { echo "{\"version\":1,\"settings\":{\"reportDir\":\"$DIR\"$1},\"explicit\":[]}"; }
variants=(plain guard-notrack guard-emptycb guard)
shift $(($# > 0 ? 1 : 0))
for bg in "${@:-none}"; do
  declare -A L=() O=()
  for ((r = 0; r < REPS; r++)); do
    for v in "${variants[@]}"; do
      case $v in
        plain) out=$("$BIN" "" 200 500 "$bg") ;;
        guard-notrack) out=$(MATE_GUARD_SETTINGS=$(handoff ',"trackLaunches":false') "$BIN" "$LIB" 200 500 "$bg") ;;
        guard-emptycb) out=$(MATE_GUARD_CUPTI_EMPTY=1 MATE_GUARD_SETTINGS=$(handoff '') "$BIN" "$LIB" 200 500 "$bg") ;;
        guard) out=$(MATE_GUARD_SETTINGS=$(handoff '') "$BIN" "$LIB" 200 500 "$bg") ;;
      esac
      echo "$v round $r: $out"
      L[$v]="${L[$v]:-} $(grep -o 'launch [0-9.]*' <<<"$out" | grep -o '[0-9.]*')"
      O[$v]="${O[$v]:-} $(grep -o 'wait [0-9.]*' <<<"$out" | grep -o '[0-9.]*')"
    done
  done
  echo "background: $bg"
  echo "| variant | launch us | event record + stream wait us |"
  echo "|---|---|---|"
  for v in "${variants[@]}"; do echo "| $v | $(median "${L[$v]}") | $(median "${O[$v]}") |"; done
done
