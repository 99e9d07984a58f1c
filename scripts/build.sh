#!/usr/bin/env bash
# Configures and builds cutrace in Release into build/ (or $CUTRACE_BUILD_DIR).
# The CUDA toolkit is optional: without nvcc the injection library and the
# testapps are skipped and everything else still builds and tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CUTRACE_BUILD_DIR:-$root/build}"
if [[ -d /usr/local/cuda/bin && ":$PATH:" != *":/usr/local/cuda/bin:"* ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
