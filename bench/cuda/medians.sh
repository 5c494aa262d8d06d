# Sourced by the CUDA bench scripts: medians of space-separated seconds and
# the side-by-side table of variants (times[<variant>] = "t1 t2 ...").
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a / b}'; }
# variants_table <baseline variant> <variant>...: median per variant and its ratio to the baseline's.
variants_table() {
  local base v m
  base=$(median "${times[$1]}")
  echo "| variant | in-loop s (median) | / $1 |"
  echo "|---|---|---|"
  for v in "${@:2}"; do
    m=$(median "${times[$v]}")
    echo "| $v | $m | $(ratio "$m" "$base") |"
  done
}
