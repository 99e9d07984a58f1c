#!/usr/bin/env bash
# The test suite: installs what is missing, builds, runs every test CTest
# knows. GPU tests (label `gpu`) report "skipped: no GPU" on machines without one.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
cd "${CUTRACE_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j"$(nproc)" --timeout 600
