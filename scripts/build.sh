#!/usr/bin/env bash
# Configures and builds cutrace in Release into build/ (or $CUTRACE_BUILD_DIR):
# everything, or only the targets named in $CUTRACE_TARGETS (e.g. quickstart).
# The CUDA toolkit is optional: without nvcc the injection library and the
# testapps are skipped and everything else still builds and tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CUTRACE_BUILD_DIR:-$root/build}"
if [[ -d /usr/local/cuda/bin && ":$PATH:" != *":/usr/local/cuda/bin:"* ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
if [[ -n "${CUTRACE_TARGETS:-}" ]]; then
  # shellcheck disable=SC2086  # a list of target names
  cmake --build "$build" -j"$(nproc)" --target ${CUTRACE_TARGETS}
else
  cmake --build "$build" -j"$(nproc)"
fi
