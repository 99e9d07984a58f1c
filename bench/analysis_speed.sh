#!/usr/bin/env bash
# analysis_speed.sh: measures the CLI's analysis speed (issue 7, point 5).
#
#   bench/analysis_speed.sh [BUILD_DIR=build] [EVENTS=10000000] [WORK_DIR=mktemp] [JSON_EVENTS=2000000]
#
# 1. `cutrace summary` over an EVENTS-event trace from bench/gen_trace, pinned to
#    core 0, median (and best) of 5 runs: events/s and peak memory.
# 2. Memory is bounded by distinct names, not events: the same measurement on a
#    trace with 4x fewer events (same 50 names) and on one with 4x fewer events
#    but names drawn from 99,999; `kernels` and `overlap` (which stream through
#    the same engine) at both sizes.
# 3. `cutrace import X.json` + `cutrace summary` against Python's json.load of
#    the same Kineto-style JSON (parse only, nothing analysed).
# 4. A region (issue 19): `summary --range step --skip-first 1` over the big
#    trace (three window passes, then the clipped report), target >= 15 M
#    events/s; wall and user+sys time, as the machine may be busy.
# Ends with one table, lines starting with FIGURE. The big files are deleted at
# the end; a work dir this script created is deleted whole.
set -euo pipefail

build=${1:-build}
events=${2:-10000000}
work=${3:-}
# The JSON comparison defaults to 2 M events because json.load holds about
# 1.1 KB of Python objects per event: 10 M events would need ~11 GB of memory
# and ~2 minutes per run. The comparison is a rate, so 2 M is representative.
json_events=${4:-2000000}
if (( json_events > events )); then json_events=$events; fi

gen=$build/bin/gen_trace
cutrace=$build/bin/cutrace
for b in "$gen" "$cutrace"; do
  [[ -x $b ]] || { echo "analysis_speed: $b not found (build with -DCUTRACE_BUILD_BENCH=ON)" >&2; exit 2; }
done

if [[ -z $work ]]; then
  work=$(mktemp -d /tmp/cutrace-speed.XXXXXX)
  trap 'rm -rf "$work"' EXIT
else
  mkdir -p "$work"
  trap 'rm -f "$work"/{big,quarter,names,json,imported}.trace "$work"/x.json' EXIT
fi

# Check for room first: ~10 B/event per trace, ~210 B/event of JSON, and
# Python's ~1.1 KB/event while parsing.
need_disk_kb=$(( (events * 15 + json_events * 230) / 1024 ))
free_disk_kb=$(df -Pk "$work" | awk 'NR == 2 { print $4 }')
free_mem_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
need_mem_kb=$(( json_events * 1200 / 1024 ))
if (( need_disk_kb > free_disk_kb )); then
  echo "analysis_speed: needs ~$((need_disk_kb >> 20)) GiB free in $work, has $((free_disk_kb >> 20)) GiB" >&2; exit 1
fi
if (( need_mem_kb > free_mem_kb )); then
  echo "analysis_speed: json.load of $json_events events needs ~$((need_mem_kb >> 20)) GiB of memory," \
       "$((free_mem_kb >> 20)) GiB available; pass a smaller JSON_EVENTS" >&2; exit 1
fi

# measure N CMD...: runs CMD N times on core 0 and prints "wall cpu maxrss anon best":
# the median wall and CPU (user+sys) seconds, the largest peak RSS (KiB, from
# wait4's rusage) and the largest anonymous RSS seen (KiB, /proc sampled every
# 2 ms from another core). Peak RSS alone would mislead: the trace is mmapped,
# so its pages count in RSS although they are page cache, not the tool's own
# memory; RssAnon is what grows with what the analysis keeps. `best` is the
# fastest wall time: on a machine whose times swing, the least disturbed run.
measure() {
  python3 - "$@" <<'PY'
import os, statistics, subprocess, sys, time
n, cmd = int(sys.argv[1]), sys.argv[2:]
cpus = os.sched_getaffinity(0)
if len(cpus) > 1:
    os.sched_setaffinity(0, cpus - {0})  # keep the sampler off the measured core
walls, cpus_s, maxrss, anon = [], [], 0, 0
for _ in range(n):
    t0 = time.perf_counter()
    p = subprocess.Popen(["taskset", "-c", "0"] + cmd, stdout=subprocess.DEVNULL)
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        anon = max(anon, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.002)
    walls.append(time.perf_counter() - t0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"analysis_speed: {' '.join(cmd)} failed")
    cpus_s.append(ru.ru_utime + ru.ru_stime)
    maxrss = max(maxrss, ru.ru_maxrss)
print(f"{statistics.median(walls):.3f} {statistics.median(cpus_s):.3f} {maxrss} {anon} {min(walls):.3f}")
PY
}

# names FILE: the distinct kernel names in a trace, as summary counts them.
names() { "$cutrace" summary "$1" | grep -o 'of [0-9]* names' | cut -d' ' -f2; }

# gen OUT EVENTS [gen_trace flags]: writes a trace, prints its exact event count.
gen() {
  local out=$1 n=$2; shift 2
  "$gen" --events "$n" --out "$out" "$@" | grep -o '"events":[0-9]*' | cut -d: -f2
}

figures=()
fig() { figures+=("$(printf 'FIGURE  %-48s %s' "$1" "$2")"); }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.2f M events/s", n / s / 1e6 }'; }

# Other work on the machine slows the wall clock more than the CPU time:
# the load average goes into the table to say how quiet the machine was.
echo "work dir: $work"
fig "machine" "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo "generating traces ..."
n_big=$(gen "$work/big.trace" "$events")
n_quarter=$(gen "$work/quarter.trace" $((events / 4)) --seed 2)
n_names=$(gen "$work/names.trace" $((events / 4)) --seed 3 --names 99999)
n_json=$(gen "$work/json.trace" "$json_events" --seed 4 --chrome "$work/x.json")
ls -l "$work"

echo "timing cutrace summary (core 0, median of 5) ..."
m=$(measure 5 "$cutrace" summary "$work/big.trace"); read -r wall cpu rss anon best <<< "$m"
fig "summary events" "$n_big ($(stat -c %s "$work/big.trace") bytes)"
fig "summary wall (median of 5)" "$wall s = $(rate "$n_big" "$wall")"
fig "summary wall (best of 5)" "$best s = $(rate "$n_big" "$best")"
fig "summary CPU user+sys (median of 5)" "$cpu s = $(rate "$n_big" "$cpu")"
fig "summary target (median)" ">= 20 M events/s: $(awk -v n="$n_big" -v s="$wall" 'BEGIN { print (n / s >= 2e7) ? "met" : "NOT met" }')"
fig "peak RSS, $n_big events, $(names "$work/big.trace") names" "$(mib "$rss") (anon $(mib "$anon"))"
# A region: the window's three passes (ranges; API calls; GPU operations,
# each decoding one kind) and the report clipped to it.
m=$(measure 5 "$cutrace" summary --range step --skip-first 1 "$work/big.trace"); read -r wall cpu _ anon best <<< "$m"
fig "summary --range step --skip-first 1 wall (median)" "$wall s = $(rate "$n_big" "$wall") (best $(rate "$n_big" "$best"))"
fig "summary --range ... CPU user+sys (median)" "$cpu s = $(rate "$n_big" "$cpu"), anon $(mib "$anon")"
fig "summary --range target (CPU)" ">= 15 M events/s: $(awk -v n="$n_big" -v s="$cpu" 'BEGIN { print (n / s >= 1.5e7) ? "met" : "NOT met" }')"
m=$(measure 3 "$cutrace" summary "$work/quarter.trace"); read -r _ _ rss anon _ <<< "$m"
fig "peak RSS, $n_quarter events, $(names "$work/quarter.trace") names" "$(mib "$rss") (anon $(mib "$anon"))"
# Every report streams through the same engine: `kernels` (with launch
# configurations for occupancy) and `overlap` keep no per-event state either,
# so their anonymous memory stays that of the names, as summary's does.
for report in kernels overlap; do
  m=$(measure 3 "$cutrace" "$report" "$work/big.trace"); read -r wall _ rss anon _ <<< "$m"
  fig "$report: $n_big events (median of 3)" "$wall s = $(rate "$n_big" "$wall"), anon $(mib "$anon")"
  m=$(measure 3 "$cutrace" "$report" "$work/quarter.trace"); read -r _ _ _ anon _ <<< "$m"
  fig "$report: anon memory at $n_quarter events" "$(mib "$anon")"
done
m=$(measure 3 "$cutrace" summary "$work/names.trace"); read -r _ _ rss anon _ <<< "$m"
fig "peak RSS, $n_names events, $(names "$work/names.trace") names" "$(mib "$rss") (anon $(mib "$anon"))"

echo "timing the JSON path on $n_json events (core 0, median of 3) ..."
# `cutrace import` never overwrites, so each run removes the previous output
# first (an unlink: negligible next to the import).
m=$(measure 3 bash -c 'rm -f "$2" && exec "$0" import "$1" -o "$2" >/dev/null' \
      "$cutrace" "$work/x.json" "$work/imported.trace"); read -r t_import _ _ _ _ <<< "$m"
m=$(measure 3 "$cutrace" summary "$work/imported.trace"); read -r t_sum _ _ _ _ <<< "$m"
m=$(measure 3 python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/x.json"); read -r t_py _ py_rss _ _ <<< "$m"
note=""
if (( n_json < n_big )); then note=", fewer than above: JSON_EVENTS, see the header"; fi
fig "JSON events (Kineto-style, gen_trace --chrome)" "$n_json ($(stat -c %s "$work/x.json") bytes$note)"
fig "cutrace import" "$t_import s = $(rate "$n_json" "$t_import")"
fig "cutrace summary of the imported trace" "$t_sum s"
fig "python3 json.load (parse only)" "$t_py s = $(rate "$n_json" "$t_py"), peak RSS $(mib "$py_rss")"
fig "json.load / (import + summary)" "$(awk -v p="$t_py" -v i="$t_import" -v s="$t_sum" 'BEGIN { printf "%.1fx", p / (i + s) }')"
fig "json.load / summary of the imported trace" "$(awk -v p="$t_py" -v s="$t_sum" 'BEGIN { printf "%.0fx", p / s }')"

echo
printf '%s\n' "${figures[@]}"
