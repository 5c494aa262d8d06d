#!/usr/bin/env bash
# Where rank 0's threads go in the DDP training loop (test/fixtures/cuda/
# ddp_train.py, torchrun, 2 ranks), per variant: each thread's CPU ticks and
# voluntary context switches over 2 s of the loop, then `perf` call chains
# of the main thread's context switches (where it blocks) and of the
# guard's background thread on the CPU. Reports land in $OUT (default .).
#   bench/cuda/ddp_profile.sh [variant...]   (bench/cuda/ddp_variants.sh; default: guard guard-notrack)
# PERF: the perf command (default perf). Needs a GPU per rank.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-.}
. "$ROOT/bench/cuda/ddp_variants.sh"
P() { timeout 60 ${PERF:-perf} "$@"; }
taskcpu() {  # tid comm ticks voluntary-switches
  for t in /proc/$1/task/*; do
    echo "$(basename "$t") $(tr ' ' _ <"$t/comm") $(awk '{print $14+$15}' "$t/stat") $(awk '/^voluntary/{print $2}' "$t/status")"
  done | sort
}
export DDP_STARTED_FILE=$(mktemp -u)
variants=("$@")
[ $# -gt 0 ] || variants=(guard guard-notrack)
for v in "${variants[@]}"; do
  rm -f "$DDP_STARTED_FILE"
  [[ " $DDP_VARIANTS " == *" $v "* ]] || { echo "unknown variant $v (one of: $DDP_VARIANTS)"; exit 2; }
  ddp_variant "$v" 2 5000 >"$OUT/$v.log" &
  pid=
  for _ in $(seq 240); do  # rank 0 (not the launcher, not node), once its loop started
    sleep 0.5
    pid=$(for p in $(pgrep -f ddp_train.py); do
      grep -qz '^LOCAL_RANK=0$' "/proc/$p/environ" 2>/dev/null && [ "$(cat "/proc/$p/comm")" != node ] && echo "$p"
    done | head -1)
    [ -n "$pid" ] && [ -e "$DDP_STARTED_FILE" ] && break
  done
  sleep 1
  echo "=== $v: rank 0 is pid $pid"
  taskcpu "$pid" >"$OUT/$v.a"; sleep 2; taskcpu "$pid" >"$OUT/$v.b"
  join "$OUT/$v.a" "$OUT/$v.b" | awk '{d=$6-$3; c=$7-$4; if (d>0||c>100) printf "  thread %s %-16s %d ticks, %d voluntary switches in 2 s\n",$1,$2,d,c}'
  bg=$(join "$OUT/$v.a" "$OUT/$v.b" | awk '$2=="mate-guard-cuda" {print $1}' | head -1)  # the guard's thread, by name
  rm -f "$OUT/$v.a" "$OUT/$v.b"
  P record -e context-switches -c 1 --call-graph dwarf,32768 -t "$pid" -o "$OUT/$v.cs.data" -- sleep 0.4 >/dev/null 2>&1
  [ -n "$bg" ] && P record -e cpu-clock -F 2000 --call-graph dwarf,16384 -t "$bg" -o "$OUT/$v.bg.data" -- sleep 0.4 >/dev/null 2>&1
  wait
  echo "  $(grep -o 'steps in.*' "$OUT/$v.log")"
  grep -o 'cuda stats:.*' "$OUT/$v.log" | head -1 | cut -c1-400
  P report -i "$OUT/$v.cs.data" --no-children --stdio -G --percent-limit 1.5 2>/dev/null | grep -v '^$' >"$OUT/$v.blocks.txt"
  [ -f "$OUT/$v.bg.data" ] && P report -i "$OUT/$v.bg.data" --no-children --stdio -G --percent-limit 2 2>/dev/null | grep -v '^$' >"$OUT/$v.background.txt"
done
