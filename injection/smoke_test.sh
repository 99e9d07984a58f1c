#!/bin/sh
# No-GPU smoke test of the injected library and `cutrace run` (CTest
# injection_smoke, label unit): a program that never touches the GPU must
# behave identically with and without the library, and `cutrace run` must
# pass exit statuses through and keep the program's stdout to itself.
# Usage: smoke_test.sh path/to/libcutrace_injection.so path/to/cutrace
set -u
lib="$1"
cutrace="$2"
libdir=$(dirname "$lib")
bindir=$(dirname "$cutrace")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# Runs "$@", leaving stdout, stderr and the exit status in $work/<tag>.{out,err,rc}.
capture() {
  tag=$1
  shift
  "$@" >"$work/$tag.out" 2>"$work/$tag.err"
  echo $? >"$work/$tag.rc"
}

same() {
  for ext in out err rc; do
    cmp -s "$work/$1.$ext" "$work/$2.$ext" || fail "$2: $ext differs from $1: $(cat "$work/$2.$ext")"
  done
}

program='echo hello; printf "%s\n" a b; echo to-stderr >&2; exit 5'

# 1. A plain program: bare, under LD_PRELOAD, and with CUDA_INJECTION64_PATH.
capture bare /bin/sh -c "$program"
capture preload env LD_PRELOAD="$lib" /bin/sh -c "$program"
capture inject env CUDA_INJECTION64_PATH="$lib" /bin/sh -c "$program"
same bare preload
same bare inject
[ "$(cat "$work/bare.rc")" = 5 ] || fail "bare run exited $(cat "$work/bare.rc")"
[ -z "$(ls "$work"/*.trace 2>/dev/null)" ] || fail "a program that never used CUDA left a trace"

# A child of a preloaded program sees the library through the environment.
env LD_PRELOAD="$lib" /bin/sh -c 'test "$CUDA_INJECTION64_PATH" = "$(readlink -f "$0")"' "$lib" ||
  fail "LD_PRELOAD did not set CUDA_INJECTION64_PATH to the library"

# 2. cutrace run passes statuses through and keeps stdout the program's.
"$cutrace" run -- /bin/sh -c 'exit 3' 2>/dev/null
rc=$?; [ $rc = 3 ] || fail "cutrace run -- sh -c 'exit 3' exited $rc"
"$cutrace" run -- sh -c 'kill -TERM $$' 2>/dev/null
rc=$?; [ $rc = 143 ] || fail "cutrace run -- sh -c 'kill -TERM \$\$' exited $rc"
out=$("$cutrace" run -- echo hi 2>/dev/null)
[ "$out" = hi ] || fail "cutrace run -- echo hi printed '$out' on stdout"
"$cutrace" run -- "$work/no-such-program" 2>"$work/missing.err"
rc=$?; [ $rc = 127 ] || fail "a missing program gave $rc, not 127"
grep -q '^cutrace: cannot run' "$work/missing.err" || fail "no reason for the missing program"
CUTRACE_LIBRARY="$work/none.so" "$cutrace" run -- true 2>/dev/null
rc=$?; [ $rc = 1 ] || fail "a missing library gave $rc, not 1"

# 3. With the stand-in libcupti (built with the tests): a trace is written,
#    listed and summarized on stderr, and stdout is untouched.
app="$bindir/injection_lifecycle_app"
fake="$libdir/libcutrace_fake_cupti.so"
if [ -x "$app" ] && [ -f "$fake" ]; then
  CUTRACE_CUPTI_PATH="$fake" "$cutrace" run --output "$work/traces/" -- "$app" return \
    >"$work/run.out" 2>"$work/run.err"
  rc=$?; [ $rc = 0 ] || fail "cutrace run of the stand-in app exited $rc: $(cat "$work/run.err")"
  [ "$(cat "$work/run.out")" = "app output return" ] || fail "stdout: $(cat "$work/run.out")"
  trace=$(ls "$work"/traces/*.trace 2>/dev/null)
  [ -n "$trace" ] || fail "no trace in $work/traces"
  grep -q "^cutrace: wrote $trace\$" "$work/run.err" || fail "trace path not reported: $(cat "$work/run.err")"
  grep -q "8 kernels" "$work/run.err" || fail "no summary: $(cat "$work/run.err")"
else
  echo "note: $app or $fake not built; skipping the traced run"
fi

if [ $failures -eq 0 ]; then
  echo "injection smoke test: ok"
fi
exit $failures
