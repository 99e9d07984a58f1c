#!/usr/bin/env bash
# many_files.sh: reports over many rank files (issue 26, point 5).
#
#   bench/many_files.sh [BUILD_DIR=build] [MAX_FILES=1000] [EVENTS_PER_FILE=700] [WORK_DIR=mktemp]
#
# Writes MAX_FILES small traces with bench/gen_trace (one device each, every
# file spanning the same time, as the ranks of one job do), then runs
# `summary`, `kernels` and `gaps` over the first 10, 30, 100, 300 and
# MAX_FILES of them and prints, per step, the wall and user seconds and the
# peak RSS, and per-file figures (flat when the cost is linear in the files).
# The target: MAX_FILES=1000 of about 11 MB in all under 5 s and 500 MB.
# Ends with lines starting with FIGURE; a work dir this script made is deleted.
set -euo pipefail

build=${1:-build}
max=${2:-1000}
per_file=${3:-700}
work=${4:-}
gen=$build/bin/gen_trace
cutrace=$build/bin/cutrace
for b in "$gen" "$cutrace"; do
  [[ -x $b ]] || { echo "many_files: $b not found (build with -DCUTRACE_BUILD_BENCH=ON)" >&2; exit 2; }
done
[[ -x /usr/bin/time ]] || { echo "many_files: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
if [[ -z $work ]]; then
  work=$(mktemp -d /tmp/cutrace-many.XXXXXX)
  trap 'rm -rf "$work"' EXIT
else
  mkdir -p "$work"
fi

echo "generating $max traces of $per_file events in $work ..."
files=()
for ((i = 1; i <= max; ++i)); do
  f=$work/rank$i.trace
  [[ -s $f ]] || "$gen" --events "$per_file" --out "$f" --seed "$i" --devices 1 >/dev/null
  files+=("$f")
done
total_bytes=$(cat "${files[@]}" | wc -c)

figures=()
fig() { figures+=("$(printf 'FIGURE  %-40s %s' "$1" "$2")"); }
fig "machine" "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
fig "files" "$max of $per_file events, $((total_bytes / 1024)) KiB in all"

steps=(10 30 100 300)
(( max > 300 )) && steps+=("$max")
for report in summary kernels gaps; do
  for n in "${steps[@]}"; do
    (( n > max )) && continue
    # %e wall, %U user seconds, %M peak RSS in KiB.
    read -r wall user rss < <(/usr/bin/time -f '%e %U %M' "$cutrace" "$report" "${files[@]:0:n}" \
                                2>&1 >/dev/null | tail -1)
    fig "$report over $n files" "$(awk -v w="$wall" -v u="$user" -v r="$rss" -v n="$n" \
      'BEGIN { printf "%6.2f s wall, %6.2f s user, %7.1f MiB peak; per file %6.2f ms, %6.1f KiB", w, u, r / 1024, 1000 * w / n, r / n }')"
    if [[ $report == summary && $n == "$max" ]]; then
      fig "target at $max files" "$(awk -v w="$wall" -v r="$rss" \
        'BEGIN { print (w < 5 && r < 500 * 1024) ? "met (< 5 s, < 500 MB)" : "NOT met (< 5 s, < 500 MB)" }')"
    fi
  done
done
echo
printf '%s\n' "${figures[@]}"
