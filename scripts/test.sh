#!/usr/bin/env bash
# The test suite (what CI runs): installs what is missing, builds, runs every
# test CTest knows, then the Python package's (scripts/python-test.sh: `pip wheel .`
# in a fresh venv, pytest tests/python). GPU tests (label `gpu`) report "skipped: no GPU" on
# machines without one. Then the sanitizer passes (scripts/sanitize.sh): the
# unit tests under ASan+UBSan and the collector's concurrency tests under
# TSan; CUTRACE_SANITIZERS=0 leaves them out.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
phase() { echo "== $1: $((SECONDS - phase_start)) s (total $SECONDS s)"; phase_start=$SECONDS; }
phase_start=$SECONDS
bash "$root/scripts/install-deps.sh"
phase "dependencies"
# The quick start's build first (scripts/quickstart.sh: the CLI, the
# injection library, the demo app) and its first answer, so the log shows
# how long a new user waits on this machine; then everything else.
CUTRACE_TARGETS=quickstart bash "$root/scripts/build.sh"
"${CUTRACE_BUILD_DIR:-$root/build}/bin/cutrace" summary "$root/examples/demo.trace" >/dev/null
phase "quick start (configure, build what scripts/quickstart.sh builds, first answer)"
bash "$root/scripts/build.sh"
phase "build"
(cd "${CUTRACE_BUILD_DIR:-$root/build}" && ctest --output-on-failure -j"$(nproc)" --timeout 600)
phase "tests"
bash "$root/scripts/python-test.sh"
phase "python (pip wheel ., pytest tests/python)"
if [[ ${CUTRACE_SANITIZERS:-1} != 0 ]]; then
  bash "$root/scripts/sanitize.sh"
  phase "sanitizers"
fi
