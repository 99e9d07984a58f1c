#!/usr/bin/env bash
# The whole GPU suite in one call, on the GPU machine (see ../shared/GPU.md):
#
#   bash scripts/gpu-suite.sh build/gpu-bundle      (run with carry: ["build/gpu-bundle"])
#
# BUNDLE comes from scripts/make-gpu-bundle.sh. In order: versions (GPU, driver,
# CUDA, CUPTI); a profile of ct_demo with `cutrace run` + `cutrace summary` (its
# trace is the one for examples/); bench/overhead.py (bare, the CUPTI floor,
# cutrace's modes and options, torch.profiler; interleaved; figures); every
# case of tests/gpu/validate.py; tests/gpu/torch_loop.py; the fail-open matrix,
# the 1 M-launch load test and the ASan library runs (tests/gpu/failopen.py);
# the production modes, scaled down (tests/gpu/modes.py);
# a verdict table. Opt-in steps (SUITE_STEPS names them): modes_long,
# continuous_probe, concurrent_pairs, analysis_speed, launch_instructions, idle_causes, ranks,
# capture, python.
# Every step runs under `timeout`, inside a budget (SUITE_BUDGET_S, default 480 s)
# that keeps the whole run well under 9 minutes; steps it cannot fit are NOT RUN.
#
# Leaves in $OUT (at most 8 files, flat): suite.log (this console), verdict.txt,
# figures.json (every case's checks and figures), demo.trace, demo-summary.txt,
# logs.tar.gz (per-step logs, app stdout/stderr, a few small traces).
# Exit status: 0 when every step passed or was skipped (no GPU for it), 1 when any
# failed or did not fit in the budget (NOT RUN).
set -uo pipefail

bundle=${1:?usage: gpu-suite.sh BUNDLE}
bundle=$(cd "$bundle" && pwd) || exit 2
out=${OUT:-}
work=$(mktemp -d /tmp/cutrace-suite.XXXXXX)
[[ -n $out ]] || out=$work/out
mkdir -p "$out" "$work/logs" "$work/cases"
budget=${SUITE_BUDGET_S:-480}
start=$SECONDS
cutrace=$bundle/bin/cutrace
tests=$bundle/tests/gpu
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Shared libraries make-gpu-bundle.sh carried because the binaries need them.
if [[ -d $bundle/lib/deps ]]; then export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$bundle/lib/deps; fi
export PYTHONDONTWRITEBYTECODE=1

# Results, one line each: NAME<TAB>VERDICT<TAB>figures
results=$work/results.tsv
: > "$results"

left() { echo $((budget - (SECONDS - start))); }

# The python steps decide for themselves (exit 77); this is for the others.
gpu=false
if [[ -e /dev/nvidia0 ]] && timeout 30 nvidia-smi -L > /dev/null 2>&1; then gpu=true; fi
if [[ ${CUTRACE_VALIDATE_ASSUME_GPU:-} == 1 ]]; then gpu=true; fi  # validate_selftest's fakes

# step_timeout WANTED: WANTED seconds, or what the budget has left (0: no time).
step_timeout() {
  local l
  l=$(($(left) - 15))
  if ((l < 20)); then echo 0; elif ((l < $1)); then echo "$l"; else echo "$1"; fi
}

section() { printf '\n=== %s (%ds into the suite, %ds left)\n' "$1" $((SECONDS - start)) "$(left)"; }

record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$results"; }

versions() {
  section "machine"
  echo "bundle: $(tr '\n' ' ' < "$bundle/MANIFEST" 2>/dev/null)"
  timeout 30 nvidia-smi -L || echo "nvidia-smi -L failed"
  echo "driver: $(timeout 30 nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1 | head -1)"
  echo "cuda:   $(timeout 30 nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1) (driver API)," \
       "toolkit $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
  echo "cupti:  $(find -H /usr/local/cuda/targets/x86_64-linux/lib/ -maxdepth 1 -name 'libcupti.so*' -printf '%f ' 2>/dev/null)(API version: see the demo trace's info)"
  echo "os:     $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release 2>/dev/null | tr -d '"'), glibc $(ldd --version 2>/dev/null | head -1 | awk '{print $NF}')"
  echo "cpu:    $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores"
  local f nf
  echo "libcutrace_injection.so needs: $(ldd "$bundle/lib/libcutrace_injection.so" 2>&1 | awk '{print $1}' | tr '\n' ' ')"
  [[ -d $bundle/lib/deps ]] && echo "carried libraries: $(find "$bundle/lib/deps" -type f -printf '%f ')"
  for f in "$bundle/bin"/* "$bundle/lib/libcutrace_injection.so"; do
    nf=$(ldd "$f" 2>&1 | grep -c "not found")
    ((nf == 0)) || echo "WARNING: $(basename "$f") has $nf unresolved libraries: $(ldd "$f" 2>&1 | grep "not found" | awk '{print $1}' | tr '\n' ' ')"
  done
}

demo_profile() {
  section "demo: cutrace run + cutrace summary"
  local t dir=$work/demo traces
  if ! $gpu; then record demo_profile SKIP "skipped: no GPU"; return; fi
  t=$(step_timeout 120)
  if ((t == 0)); then record demo_profile "NOT RUN" "no time left"; return; fi
  mkdir -p "$dir"
  timeout -k 5 "$t" "$cutrace" run --output "$dir" -- "$bundle/bin/ct_demo" \
    > "$work/logs/demo-run.log" 2>&1
  local rc=$?
  cat "$work/logs/demo-run.log"
  mapfile -t traces < <(ls "$dir"/*.trace 2>/dev/null)
  if ((rc != 0 || ${#traces[@]} != 1)); then
    record demo_profile FAIL "status $rc, ${#traces[@]} traces"
    return
  fi
  cp "${traces[0]}" "$out/demo.trace"
  timeout 60 "$cutrace" summary "${traces[0]}" > "$out/demo-summary.txt" 2>&1
  local src=$?
  timeout 60 "$cutrace" info "${traces[0]}" > "$work/logs/demo-info.txt" 2>&1
  cat "$out/demo-summary.txt" "$work/logs/demo-info.txt"
  if ((src == 0)); then
    record demo_profile PASS "$(stat -c %s "${traces[0]}") bytes trace; summary ok"
  else
    record demo_profile FAIL "cutrace summary exited $src"
  fi
}

# bench/overhead.py (issue 7): the launch storm and a PyTorch loop bare, under
# the CUPTI floor, cutrace's modes and torch.profiler, interleaved; the
# options' costs; continuous mode's average. Figures, not pass/fail.
overhead() {
  section "overhead (bench/overhead.py: figures)"
  local t rc parts=${OVERHEAD_PARTS:-storm,options,continuous,torch}
  t=$(step_timeout "${OVERHEAD_STEP_S:-260}")
  if ((t == 0)); then record overhead "NOT RUN" "no time left"; return; fi
  if [[ ! -f $bundle/lib/libcutrace_floor.so ]]; then
    record overhead FAIL "no lib/libcutrace_floor.so in the bundle"
    return
  fi
  timeout -k 5 "$t" python3 "$bundle/bench/overhead.py" --cutrace "$cutrace" --bin-dir "$bundle/bin" \
    --floor "$bundle/lib/libcutrace_floor.so" --rounds "${OVERHEAD_ROUNDS:-3}" --parts "$parts" \
    --torch-rounds "${OVERHEAD_TORCH_ROUNDS:-2}" ${OVERHEAD_CPUS:+--cpus "$OVERHEAD_CPUS"} \
    --deadline-s $((t > 40 ? t - 20 : t / 2)) \
    --work "$work/overhead" --json-out "$work/overhead.json" > "$work/logs/overhead.log" 2>&1
  rc=$?
  sed -n '/^=== overhead/,$p' "$work/logs/overhead.log"
  grep '^FAIL' "$work/logs/overhead.log"
  case $rc in
    0) record overhead FIGURE "$(sed -n 's/^FIGURE overhead: //p' "$work/logs/overhead.log")" ;;
    77) record overhead SKIP "$(tail -1 "$work/logs/overhead.log")" ;;
    124|137) record overhead FAIL "timed out after ${t}s" ;;
    *) record overhead FAIL "status $rc: $(grep '^FAIL' "$work/logs/overhead.log" | head -1)" ;;
  esac
}

validate_cases() {
  local c t rc
  for c in $(python3 "$tests/validate.py" --names | tr ';' ' '); do
    section "validate $c"
    # Each run inside has its own timeout (60 s), well inside the step's.
    run_step "$c" 200 "$work/logs/$c.log" python3 "$tests/validate.py" --case "$c" \
      --cutrace "$cutrace" --bin-dir "$bundle/bin" --lib "$bundle/lib/libcutrace_injection.so" \
      --timeout 60 --work "$work/cases/$c" --json-out "$work/cases/$c.json" || continue
    # The console gets the failures and the summary; the log has every line.
    grep -E '^FAIL  \[' "$work/logs/$c.log" | head -15
    tail -1 "$work/logs/$c.log"
    case $rc in
      0) record "$c" PASS "" ;;
      77) record "$c" SKIP "$(tail -1 "$work/logs/$c.log")" ;;
      124|137) record "$c" FAIL "timed out after ${t}s" ;;
      *) record "$c" FAIL "" ;;
    esac
  done
}

torch_loop() {
  section "torch_loop (PyTorch under cutrace run)"
  local t rc
  run_step torch_loop 240 "$work/logs/torch_loop.log" python3 "$tests/torch_loop.py" \
    --cutrace "$cutrace" --timeout 120 --work "$work/cases/torch_loop" \
    --json-out "$work/cases/torch_loop.json" || return
  grep -E '^(FAIL  \[|FIGURE)' "$work/logs/torch_loop.log" | head -15
  tail -1 "$work/logs/torch_loop.log"
  case $rc in
    0) record torch_loop PASS "" ;;
    77) record torch_loop SKIP "$(tail -1 "$work/logs/torch_loop.log")" ;;
    *) record torch_loop FAIL "status $rc" ;;
  esac
}

# tests/gpu/failopen.py, one group per step (a verdict row each; the cases that did not
# pass are named in its figures).
failopen_group() {
  local group=$1 want=$2 t rc extra=()
  section "failopen $group"
  [[ -f $bundle/lib/libcutrace_fake_cupti_version.so ]] &&
    extra+=(--fake-cupti "$bundle/lib/libcutrace_fake_cupti_version.so")
  [[ -d $bundle/lib-asan ]] && extra+=(--asan-dir "$bundle/lib-asan")
  run_step "failopen_$group" "$want" "$work/logs/failopen_$group.log" python3 "$tests/failopen.py" \
    --group "$group" --cutrace "$cutrace" --bin-dir "$bundle/bin" \
    --lib "$bundle/lib/libcutrace_injection.so" "${extra[@]}" --work "$work/failopen/$group" \
    --json-out "$work/cases/failopen_$group.json" || return
  grep -E '^(FAIL  \[|  (PASS|FAIL|SKIP) )' "$work/logs/failopen_$group.log" | head -60
  tail -1 "$work/logs/failopen_$group.log"
  case $rc in
    0) record "failopen_$group" PASS "$(tail -1 "$work/logs/failopen_$group.log")" ;;
    77) record "failopen_$group" SKIP "$(tail -1 "$work/logs/failopen_$group.log")" ;;
    124|137) record "failopen_$group" FAIL "timed out after ${t}s" ;;
    *) record "failopen_$group" FAIL "$(tail -1 "$work/logs/failopen_$group.log")" ;;
  esac
}

# run_step NAME WANTED LOG CMD...: CMD under `timeout` for WANTED seconds (or
# what the budget has left), its output into LOG. Sets the caller's `t` (the
# timeout) and `rc` (CMD's status); returns 1, NAME recorded NOT RUN, when no
# time is left.
run_step() {
  local name=$1 want=$2 log=$3
  shift 3
  t=$(step_timeout "$want")
  if ((t == 0)); then record "$name" "NOT RUN" "no time left"; return 1; fi
  timeout -k 10 "$t" "$@" > "$log" 2>&1
  rc=$?
}

# python_step NAME SECONDS LINES: tests/gpu/NAME.py with the suite's usual
# arguments (--cutrace, --bin-dir, --work, --json-out) under run_step (which
# sets the caller's t and rc), then its first LINES lines that are not PASS.
python_step() {
  local name=$1 want=$2 lines=$3
  run_step "$name" "$want" "$work/logs/$name.log" python3 "$tests/$name.py" --cutrace "$cutrace" \
    --bin-dir "$bundle/bin" --work "$work/cases/$name" --json-out "$work/cases/$name.json" || return
  grep -vE '^PASS  ' "$work/logs/$name.log" | head -"$lines" || true  # no such line: all passed
}

# record_rc NAME RC TIMEOUT LOG PASS_NOTE: a python step's verdict row from its exit status.
record_rc() {
  case $2 in
    0) record "$1" PASS "$5" ;;
    77) record "$1" SKIP "$(tail -1 "$4")" ;;
    124|137) record "$1" FAIL "timed out after ${3}s" ;;
    *) record "$1" FAIL "$(tail -1 "$4")" ;;
  esac
}

# tests/gpu/counters.py: hardware counters of ct_known_work against ncu and the
# known work, and per-NVTX-range values against the sum of their kernels (issue 4).
counters() {
  section "counters (known work vs ncu)"
  local t rc
  run_step counters 150 "$work/logs/counters.log" python3 "$tests/counters.py" \
    --cutrace "$cutrace" --bin-dir "$bundle/bin" --work "$work/cases/counters" \
    --json-out "$work/cases/counters.json" || return
  grep -vE '^PASS  \[' "$work/logs/counters.log" | head -40
  record_rc counters "$rc" "$t" "$work/logs/counters.log" "$(tail -1 "$work/logs/counters.log")"
}

# tests/gpu/modes.py: the production modes (issue 5), scaled to ~6 s runs:
# bare vs summary vs continuous overhead and RSS, summary counts, window
# chunks, rotation under a disk cap, a flight-recorder dump on SIGUSR2.
modes() {
  section "production modes (summary, continuous, disk cap, flight recorder)"
  local t rc
  python_step modes 120 40 || return
  record_rc modes "$rc" "$t" "$work/logs/modes.log" "$(sed -n 's/^FIGURE modes overhead: //p' "$work/logs/modes.log")"
}

# tests/gpu/idle_causes.py: idle time by cause on PyTorch programs (issue
# 19): a host-bound MLP step loop must put its idle time on the host, a
# large-GEMM loop must keep the GPU over 90% busy. Opt-in (~70 s):
# SUITE_STEPS="idle_causes".
idle_causes() {
  section "idle time by cause (PyTorch MLP and GEMM loops)"
  local t rc
  run_step idle_causes 150 "$work/logs/idle_causes.log" python3 "$tests/idle_causes.py" \
    --cutrace "$cutrace" --out "$work/cases/idle_causes" || return
  grep -vE '^PASS  ' "$work/logs/idle_causes.log" | head -20
  record_rc idle_causes "$rc" "$t" "$work/logs/idle_causes.log" \
    "$(grep '^FIGURE' "$work/logs/idle_causes.log" | cut -c8- | cut -c1-120 | paste -sd'|')"
}

# tests/gpu/ranks.py: ranks of one job (issue 25): continuous windows on
# the wall clock's period boundaries in two processes at once, and a
# two-rank DDP job under cutrace run (NCCL on two GPUs, gloo on one):
# per-rank traces, merge, kernel counts against torch.profiler's per rank;
# comm, stragglers and peer copies where there are two GPUs. Opt-in (~50 s
# on one GPU):
# SUITE_STEPS="ranks".
ranks() {
  section "ranks of one job (aligned windows, DDP)"
  local t rc
  python_step ranks 420 20 || return
  record_rc ranks "$rc" "$t" "$work/logs/ranks.log" "$(grep -c '^PASS' "$work/logs/ranks.log") checks"
}

# tests/gpu/capture.py: capture ranges (issue 20): a PyTorch loop's
# cudaProfilerStart/Stop range holds exactly steps 10-19's kernels, nvtx:step
# repeat:3 gives 3 chunks of one step each, --delay 2s --duration 1s a 1 s
# window, a range never reached no trace; the captured chunks and continuous
# mode's windows with CUTRACE_KINDS=kernel,runtime hold every kernel's launch
# call (issue 20's bug: none) and no idle time of unknown cause.
# Opt-in (~70 s): SUITE_STEPS="capture".
capture() {
  section "capture ranges (profiler API, NVTX, delay and duration)"
  local t rc
  run_step capture 180 "$work/logs/capture.log" python3 "$tests/capture.py" \
    --cutrace "$cutrace" --bin-dir "$bundle/bin" --work "$work/cases/capture" \
    --json-out "$work/cases/capture.json" || return
  grep -vE '^PASS  ' "$work/logs/capture.log" | head -40
  record_rc capture "$rc" "$t" "$work/logs/capture.log" \
    "$(grep '^FIGURE' "$work/logs/capture.log" | cut -c9- | cut -c1-120 | paste -sd'|')"
}

# tests/gpu/python_pkg.py: the Python package (issue 24): the carried wheel
# (bundle's wheel/, from scripts/python-test.sh) pip-installed with --no-deps
# --no-index into a venv over the machine's own Python (its PyTorch), then
# `cutrace run -- python3 train.py` with /usr/local/cuda hidden (a private
# mount namespace) and only the wheel's libcupti mapped, and
# cutrace.profile() around steps 10-19 recording exactly those steps. Also
# prints where PyTorch's NVIDIA wheels keep libcupti. Opt-in (~90 s):
# SUITE_STEPS="python".
python_pkg() {
  section "python package (the wheel in the machine's PyTorch environment)"
  local t rc whl
  whl=$(find "$bundle/wheel" -maxdepth 1 -name 'cutrace-*.whl' 2>/dev/null | head -1)
  if [[ -z $whl ]]; then
    record python FAIL "no wheel in $bundle/wheel (run scripts/python-test.sh before make-gpu-bundle.sh)"
    return
  fi
  run_step python 240 "$work/logs/python.log" python3 "$tests/python_pkg.py" --wheel "$whl" \
    --work "$work/cases/python" --json-out "$work/cases/python.json" || return
  grep -vE '^PASS  ' "$work/logs/python.log" | head -60
  record_rc python "$rc" "$t" "$work/logs/python.log" \
    "$(grep '^FIGURE' "$work/logs/python.log" | cut -c8- | cut -c1-120 | paste -sd'|')"
}

# tests/gpu/modes.py --long-s: the issue's minutes-long runs (bare, continuous
# with a 1 s window every 60 s, bare, trace with rotation under a disk cap, a
# flight-recorder dump), about 2 x MODES_LONG_S + 100 seconds of GPU time
# (MODES_LONG_S=120: ~5.5 min). Opt-in, as it outlasts the default budget:
# SUITE_STEPS="modes_long" or SUITE_LONG=1. Its continuous runs detach CUPTI
# between windows, as continuous mode does by default.
modes_long() {
  section "production modes, minutes-long runs"
  local t rc s=${MODES_LONG_S:-120}
  run_step modes_long $((s * 3 + 150)) "$work/logs/modes_long.log" python3 "$tests/modes.py" \
    --cutrace "$cutrace" --bin-dir "$bundle/bin" ${OVERHEAD_CPUS:+--cpus "$OVERHEAD_CPUS"} \
    --long-s "$s" --side-s "${MODES_SIDE_S:-30}" --work "$work/cases/modes_long" \
    --json-out "$work/cases/modes_long.json" || return
  grep -vE '^PASS  ' "$work/logs/modes_long.log" | head -40
  record_rc modes_long "$rc" "$t" "$work/logs/modes_long.log" "$(sed -n 's/^FIGURE modes long: //p' "$work/logs/modes_long.log")"
}

# figure_step NAME TITLE WANT_S PATTERN CMD...: an opt-in step that prints
# figures rather than a verdict: CMD runs under the step's timeout into
# logs/NAME.log ("{deadline}" in CMD becomes that timeout less 30 s, for a
# script that stops starting rounds in time), its report is shown, and the
# row records the first line matching PATTERN (grep -E), or the log's name.
figure_step() {
  local name=$1 title=$2 want=$3 pattern=$4 t rc arg cmd=()
  shift 4
  section "$title"
  t=$(step_timeout "$want")
  if ((t == 0)); then record "$name" "NOT RUN" "no time left"; return; fi
  for arg in "$@"; do cmd+=("${arg//\{deadline\}/$((t > 60 ? t - 30 : t / 2))}"); done
  timeout -k 10 "$t" "${cmd[@]}" > "$work/logs/$name.log" 2>&1
  rc=$?
  if grep -q '^===' "$work/logs/$name.log"; then
    sed -n '/^===/,$p' "$work/logs/$name.log" | cut -c1-400 | tail -60
  else
    tail -20 "$work/logs/$name.log"
  fi
  local note
  note=$(grep -m1 -E "$pattern" "$work/logs/$name.log" | sed 's/^FIGURE *//; s/   */ /g' | cut -c1-200)
  case $rc in
    0) record "$name" FIGURE "${note:-see logs/$name.log}" ;;
    77) record "$name" SKIP "no GPU" ;;
    124|137) record "$name" FAIL "timed out after ${t}s" ;;
    *) record "$name" FAIL "exit $rc: $(tail -1 "$work/logs/$name.log")" ;;
  esac
}

# bench/continuous_probe.py: where continuous mode's cost falls in a launch
# storm (inside windows, at their edges, between them), with CUPTI detached
# between windows (CUTRACE_DETACH=1) and not. Figures; opt-in (~4 min):
# SUITE_STEPS="continuous_probe" (PROBE_ROUNDS, default 6).
continuous_probe() {
  figure_step continuous_probe "continuous mode: where the cost falls (bench/continuous_probe.py)" 300 \
    '^continuous 16ms/1s, defaults' \
    python3 "$bundle/bench/continuous_probe.py" --cutrace "$cutrace" --bin-dir "$bundle/bin" \
    --rounds "${PROBE_ROUNDS:-6}" ${OVERHEAD_CPUS:+--cpus "$OVERHEAD_CPUS"} --deadline-s "{deadline}" \
    --work "$work/probe"
}

# bench/concurrent_pairs.py: continuous mode's average against a bare storm
# run at the same time on other cores (host speed changes hit both alike),
# with a bare-and-bare control pair. Figures; opt-in (~6 min at 3 rounds):
# SUITE_STEPS="concurrent_pairs" (PAIRS_ROUNDS, default 3; PAIRS_N launches;
# PAIRS, the pairs: default control,default,attached).
concurrent_pairs() {
  figure_step concurrent_pairs "continuous mode beside a bare run (bench/concurrent_pairs.py)" 560 \
    '^FIGURE continuous, defaults' \
    python3 "$bundle/bench/concurrent_pairs.py" --cutrace "$cutrace" --bin-dir "$bundle/bin" \
    --rounds "${PAIRS_ROUNDS:-3}" ${PAIRS_N:+--n "$PAIRS_N"} ${PAIRS:+--pairs "$PAIRS"} --deadline-s "{deadline}" \
    --work "$work/pairs" --json-out "$work/cases/concurrent_pairs.json"
}

# bench/launch_instructions.py: instructions per launch under callgrind
# (every thread, the timed loop only) for bare, the floor and each mode, and
# continuous mode's average composed from them: counts, free of the host's
# speed; one run at a time (runs sharing the GPU move the driver's counts).
# Figures; opt-in (~5 min): SUITE_STEPS="launch_instructions" (INSTR_N
# launches, default 60000).
launch_instructions() {
  if [[ ! -x $bundle/valgrind/valgrind.bin ]]; then record launch_instructions SKIP "no valgrind in the bundle"; return; fi
  VALGRIND_LIB="$bundle/valgrind" figure_step launch_instructions \
    "instructions per launch under callgrind (bench/launch_instructions.py)" 420 \
    '^FIGURE continuous, 1 s every 60 s, composed' \
    python3 "$bundle/bench/launch_instructions.py" --cutrace "$cutrace" --bin-dir "$bundle/bin" \
    --floor "$bundle/lib/libcutrace_floor.so" --valgrind "$bundle/valgrind/valgrind.bin" \
    ${INSTR_N:+--n "$INSTR_N"} --deadline-s "{deadline}" --work "$work/instructions" \
    --json-out "$work/cases/launch_instructions.json"
}

# bench/analysis_speed.sh on this machine's CPU (issue 7: `cutrace summary`
# events/s on one core, memory by distinct names, import vs json.load).
# Figures; opt-in (~2 min): SUITE_STEPS="analysis_speed".
analysis_speed() {
  if [[ ! -x $bundle/bin/gen_trace ]]; then record analysis_speed FAIL "no bin/gen_trace in the bundle"; return; fi
  figure_step analysis_speed "analysis speed (bench/analysis_speed.sh)" 240 '^FIGURE +summary wall \(median' \
    bash "$bundle/bench/analysis_speed.sh" "$bundle" 10000000 "$work/speed"
}

verdict() {
  section "verdict"
  python3 - "$results" "$work/cases" "$work/overhead.json" "$out/figures.json" <<'PY' | tee "$out/verdict.txt"
import json, sys
from pathlib import Path

results, cases, overhead, figures_out = sys.argv[1:5]
merged = {}
rows = []
for line in Path(results).read_text().splitlines():
    name, verdict, note = (line.split("\t") + ["", ""])[:3]
    figs = []
    path = Path(cases) / f"{name}.json"
    if path.exists():
        data = json.loads(path.read_text())
        merged[name] = data
        for mode, f in data.get("figures", {}).items():
            if mode == "bare" or not isinstance(f, dict):
                continue
            bits = []
            kernels = f.get("kernels total", {}).get("count", 0)
            if "trace_bytes_per_kernel" in f and kernels >= 10000:  # only then is it a figure
                bits.append(f"{f['trace_bytes_per_kernel']} B/kernel")
            if f.get("us_per_launch"):
                bits.append(f"{f['us_per_launch']:.2f} us/launch")
            for key, val in f.items():
                if not isinstance(val, dict):
                    continue
                if "fraction" in val:
                    bits.append(f"overlap {val['fraction']}")
                if "min_ns" in val and val.get("count"):
                    bits.append(f"shortest gap {val['min_ns'] / 1e6:.1f} ms")
                if "diff_ns" in val:
                    bits.append(f"dur diff {val['diff_ns'] / 1e3:+.1f} us")
            if bits:
                figs.append(f"{mode}: " + ", ".join(bits))
        for fc in data.get("cases", []):  # failopen.py: one line per case that did not pass
            if fc.get("verdict") != "PASS":
                bad = [c["name"] for c in fc.get("checks", []) if c["verdict"] == "FAIL"]
                figs.append(f"{fc['case']} {fc['verdict']}"
                            + (f" ({fc['note']})" if fc.get("note") else "")
                            + (f" [{'; '.join(bad[:3])}]" if bad else ""))
            for c in fc.get("checks", []):
                f = c.get("figures") or {}
                if "rss_delta_bytes" in f:
                    figs.append(f"load: RSS +{f['rss_delta_bytes'] >> 20} MiB traced, "
                                f"peak_memory {f['statistics_peak_memory_bytes'] >> 20} MiB, "
                                f"{f['us_per_launch_bare']} -> {f['us_per_launch_traced']} us/launch")
                if "dropped_by_cupti" in f:
                    figs.append(f"tiny pool: {f['kernels_in_trace']} kept + "
                                f"{f['dropped_by_cupti'] + f['dropped_queue_full']} dropped "
                                f"of {f['launched']}")
        if data.get("case") == "torch_loop":
            f = data.get("figures", {})
            if "ratio" in f:
                figs.append(f"{f['us_per_op_bare']} -> {f['us_per_op_traced']} us/op "
                            f"(x{f['ratio']}), {f.get('kernels', '?')} kernels")
        failed = [c["name"] for c in data.get("checks", []) if c["verdict"] == "FAIL"]
        if failed:
            figs.append("failed: " + "; ".join(failed[:4]) + (" ..." if len(failed) > 4 else ""))
    if note:
        figs.insert(0, note)
    rows.append((name, verdict, " | ".join(figs)))
if Path(overhead).exists():
    merged["overhead"] = json.loads(Path(overhead).read_text())
Path(figures_out).write_text(json.dumps(merged, indent=1))
width = max(len(r[0]) for r in rows) if rows else 4
print(f"{'app':{width}}  {'verdict':8} key figures")
for name, verdict, figs in rows:
    print(f"{name:{width}}  {verdict:8} {figs}")
counts = {}
for _, verdict, _ in rows:
    counts[verdict] = counts.get(verdict, 0) + 1
print("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
PY
}

# SUITE_STEPS (space-separated) runs only those steps, e.g. to re-check a fix
# inside a small device budget: versions demo_profile overhead validate_cases
# torch_loop counters modes failopen_matrix failopen_load failopen_asan
# failopen_detach, and the
# opt-in modes_long, continuous_probe, concurrent_pairs and analysis_speed.
want() { [[ -z ${SUITE_STEPS:-} || " $SUITE_STEPS " == *" $1 "* ]]; }

main() {
  echo "cutrace GPU suite: bundle $bundle, work $work, out $out, budget ${budget}s${SUITE_STEPS:+, steps: $SUITE_STEPS}"
  versions
  want demo_profile && demo_profile
  want overhead && overhead
  want validate_cases && validate_cases
  want torch_loop && torch_loop
  want counters && counters
  want modes && modes
  want failopen_matrix && failopen_group matrix 150
  want failopen_load && failopen_group load 90
  want failopen_asan && failopen_group asan 90
  want failopen_detach && failopen_group detach 200
  if [[ " ${SUITE_STEPS:-} " == *" modes_long "* || ${SUITE_LONG:-0} == 1 ]]; then modes_long; fi
  if [[ " ${SUITE_STEPS:-} " == *" continuous_probe "* ]]; then continuous_probe; fi
  if [[ " ${SUITE_STEPS:-} " == *" concurrent_pairs "* ]]; then concurrent_pairs; fi
  if [[ " ${SUITE_STEPS:-} " == *" analysis_speed "* ]]; then analysis_speed; fi
  if [[ " ${SUITE_STEPS:-} " == *" idle_causes "* ]]; then idle_causes; fi
  if [[ " ${SUITE_STEPS:-} " == *" capture "* ]]; then capture; fi
  if [[ " ${SUITE_STEPS:-} " == *" ranks "* ]]; then ranks; fi
  if [[ " ${SUITE_STEPS:-} " == *" python "* ]]; then python_pkg; fi
  if [[ " ${SUITE_STEPS:-} " == *" launch_instructions "* ]]; then launch_instructions; fi
  verdict
  printf '\nsuite took %ds\n' $((SECONDS - start))
}

main 2>&1 | tee "$work/suite.log"

# Pack what comes back: logs, app outputs and a few small traces in one archive.
cp "$work/suite.log" "$out/suite.log"
(
  cd "$work" || exit
  mapfile -t packed < <(
    printf '%s\n' logs results.tsv
    [[ -f overhead.json ]] && echo overhead.json
    find cases \( -name '*.txt' -o -name '*.json' \) -size -1M 2>/dev/null
    find failopen \( -name '*.txt' -o -name '*.json' \) -size -256k 2>/dev/null
    find cases -name '*.trace' -size -2M 2>/dev/null |
      grep -E '/(nvtx_nested|graph_replay|idle_gaps|fork|overlap|counters)/' | head -16)
  tar czf "$out/logs.tar.gz" "${packed[@]}" 2>/dev/null
)
echo "out: $(find "$out" -maxdepth 1 -type f -printf '%f ')($(du -sh "$out" | cut -f1))"
if grep -qE $'\t(FAIL|NOT RUN)\t' "$results"; then exit 1; fi
exit 0
