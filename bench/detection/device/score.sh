#!/bin/bash
# The device shapes (shapes.py), each plain, under the device guard, and
# with exact placement; one line per run: shape, variant, exit status, the
# first report line. On a CUDA machine with torch and triton:
#   bash bench/detection/device/score.sh
cd "$(dirname "$0")/../../.." || exit 2
MATE="node packages/core-native/bin/mate.js guard-run --device cuda"
for shape in absmax_store_past dequant_write_past bf16_read_one_past; do
  for variant in plain guarded exact; do
    case $variant in
      plain) cmd=(python bench/detection/device/shapes.py "$shape") ;;
      guarded) cmd=($MATE -- python bench/detection/device/shapes.py "$shape") ;;
      exact) cmd=($MATE --device-exact-placement -- python bench/detection/device/shapes.py "$shape") ;;
    esac
    out=$("${cmd[@]}" 2>&1); rc=$?
    first=$(printf '%s\n' "$out" | grep -m1 '==mate-guard== ERROR' || printf '%s\n' "$out" | grep -m1 "^done $shape" || echo '-')
    printf '%s\t%s\texit %s\t%s\n' "$shape" "$variant" "$rc" "$first"
  done
done
