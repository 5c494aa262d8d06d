#!/usr/bin/env bash
# The small-test shape of a GPU kernel library's suite (suite/: parametrized
# tests of Triton and ATen kernels, each allocating tens of small tensors of
# odd sizes and checking a PyTorch reference), plain against
# `pytest --guard-alloc`, alternating inside each round, with and without
# xdist workers. Prints each file's guarded/plain ratio (median of rounds),
# the total, the guard's end-of-test share and its counters.
#   bench/cuda/small_tests/run.sh [rounds] [workers] [scale]
# VARIANTS (default "plain guard"): also guard-gc<N>, the guard with the
# plugin's per-test gc.collect() limited to generation N (a what-if), and
# guard-sync / guard-nosync (--guard-sync-on-free / --no-guard-sync-on-free),
# guard-imports (launches seen through the driver functions handed to the
# program, not CUPTI: MATE_GUARD_TRACK_VIA=imports),
# and plain-roundtrip: no guard, each test ending with one wait for the GPU
# and a few bytes copied back (the floor of a check at each test's end).
# PY: a python with torch, triton, pytest (and pytest-xdist for workers > 0)
# and the mate_guard package installed. Needs a GPU.
set -euo pipefail
rounds=${1:-3}; workers=${2:-8}; scale=${3:-1}
here=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python3}
out=$(mktemp -d "${TMPDIR:-/tmp}/small-tests.XXXXXX")
export SMALL_TESTS_SCALE=$scale
cd "$here/suite"
# One unmeasured pass fills Triton's kernel cache for both variants.
"$PY" -m pytest -q -p no:cacheprovider -x . > "$out/warmup.log" 2>&1 || { tail -30 "$out/warmup.log"; exit 1; }
for r in $(seq 1 "$rounds"); do
  for mode in serial xdist; do
    [ "$mode" = xdist ] && [ "$workers" = 0 ] && continue
    n=(); [ "$mode" = xdist ] && n=(-n "$workers")
    for variant in ${VARIANTS:-plain guard}; do
      d="$out/$r-$mode-$variant"; mkdir -p "$d"
      g=(); gen=; rt=; via=
      case $variant in plain) ;; plain-roundtrip) rt=1 ;; guard) g=(--guard-alloc) ;; guard-gc*) g=(--guard-alloc); gen=${variant#guard-gc} ;;
        guard-imports) g=(--guard-alloc); via=imports ;;
        guard-sync) g=(--guard-alloc --guard-sync-on-free) ;; guard-nosync) g=(--guard-alloc --no-guard-sync-on-free) ;;
        *) echo "unknown variant $variant" >&2; exit 2 ;; esac
      start=$(date +%s.%N)
      MATE_GUARD_TRACK_VIA=$via SMALL_TESTS_ROUNDTRIP=$rt SMALL_TESTS_GC_GENERATION=$gen SMALL_TESTS_OUT=$d MATE_GUARD_CUDA_STATS=1 "$PY" -m pytest -q -p no:cacheprovider "${n[@]}" "${g[@]}" . > "$d/log" 2>&1 \
        || { echo "round $r $mode $variant failed:"; tail -30 "$d/log"; exit 1; }
      echo "$(date +%s.%N) - $start" > "$d/wall"
    done
  done
done
"$PY" "$here/summarize.py" "$out"
echo "(logs in $out)"
