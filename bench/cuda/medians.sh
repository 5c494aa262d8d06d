# Sourced by the CUDA bench scripts: medians of space-separated seconds and
# the side-by-side table of variants (times[<variant>] = "t1 t2 ...", a
# failed round "-").
# An even count's median is the mean of its middle two (not the lower one:
# that biased every even-round table low).
median() {
  tr ' ' '\n' <<<"$1" | grep -E '^[0-9.]+$' | sort -g |
    awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a / b}'; }
# paired_ratios "<a1 a2 ...>" "<b1 b2 ...>": each round's a / b, space-separated
# (the variants alternate, so a round's pair ran side by side: steadier than
# the ratio of two medians where whole rounds vary).
paired_ratios() {
  paste <(tr ' ' '\n' <<<"$1" | grep .) <(tr ' ' '\n' <<<"$2" | grep .) |
    awk '$1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ && $2 > 0 {printf "%s%.4f", sep, $1 / $2; sep = " "}'
}
# variants_table <baseline variant> <variant>...: each variant's rounds, their median, its
# ratio to the baseline's, and the median of the per-round ratios.
variants_table() {
  local base v m
  base=$(median "${times[$1]}")
  echo "| variant | rounds (s) | in-loop s (median) | / $1 | median of per-round / $1 |"
  echo "|---|---|---|---|---|"
  for v in "${@:2}"; do
    m=$(median "${times[$v]}")
    echo "| $v |${times[$v]} | $m | $(ratio "$m" "$base") | $(median "$(paired_ratios "${times[$v]}" "${times[$1]}")" | awk '{printf "%.2fx", $1}') |"
  done
}
