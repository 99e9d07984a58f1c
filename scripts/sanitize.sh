#!/usr/bin/env bash
# The sanitizer passes of the test suite (scripts/test.sh runs this after the
# plain build and tests):
#  - build-asan: everything but the benchmarks and the CUDA testapps, built
#    with ASan+UBSan (-DCUTRACE_SANITIZE=address,undefined; any finding aborts),
#    then every unit test (label `unit`: GoogleTest, the CLI tests, the fuzz
#    corpus replays, the injection library's lifecycle tests) except the two
#    that inspect or preload the library into a program built without ASan
#    (injection_exports, injection_smoke). Its libcutrace_injection.so is the
#    one scripts/make-gpu-bundle.sh carries to the GPU as lib-asan/.
#  - build-tsan: the collector built with TSan, and its concurrency tests
#    (the async writer's producers and writer thread, the string interner).
# Build dirs: CUTRACE_ASAN_DIR, CUTRACE_TSAN_DIR (default build-asan, build-tsan).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
asan="${CUTRACE_ASAN_DIR:-$root/build-asan}"
tsan="${CUTRACE_TSAN_DIR:-$root/build-tsan}"
jobs="$(nproc)"
if [[ -d /usr/local/cuda/bin && ":$PATH:" != *":/usr/local/cuda/bin:"* ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

echo "== ASan+UBSan: $asan"
# -O1 -g1: what ASan recommends (fast, readable stacks), and quicker to build than -O2 -g.
cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCUTRACE_SANITIZE=address,undefined -DCUTRACE_BUILD_BENCH=OFF -DCUTRACE_BUILD_TESTAPPS=OFF \
  >/dev/null
cmake --build "$asan" -j"$jobs"
# Leak checking on: the tests own everything they allocate (the injected
# library's leaked-on-purpose session lives only in the lifecycle test's child
# processes, which are not ASan's to judge here: see injection/README.md).
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  ctest --test-dir "$asan" --output-on-failure -j"$jobs" --timeout 600 -L unit \
        -E '^(injection_exports|injection_smoke)$'

echo "== ASan+UBSan took $SECONDS s"
echo "== TSan: $tsan"
cmake -S "$root" -B "$tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCUTRACE_SANITIZE=thread -DCUTRACE_BUILD_GPU=OFF -DCUTRACE_BUILD_BENCH=OFF >/dev/null
cmake --build "$tsan" -j"$jobs" --target collector_tests
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
  "$tsan/bin/collector_tests" --gtest_filter='AsyncWriter.*:StringInterner.*' --gtest_repeat=3
