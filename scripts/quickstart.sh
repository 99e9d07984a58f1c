#!/usr/bin/env bash
# The main job: install what is missing, build only what it runs (the CLI,
# the injection library and the demo app: CMake target `quickstart`; the
# tests, benchmarks and other testapps are scripts/test.sh's), say how long
# that took, and profile the demo app on the GPU. Where there is no GPU, say
# so in one line and summarize the bundled example trace instead.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CUTRACE_BUILD_DIR:-$root/build}"
bash "$root/scripts/install-deps.sh"
start=$SECONDS
CUTRACE_TARGETS=quickstart bash "$root/scripts/build.sh"
echo "cutrace: built the CLI, the injection library and the demo app in $((SECONDS - start)) s" >&2
if nvidia-smi -L >/dev/null 2>&1 && [[ -x "$build/bin/ct_demo" ]]; then
  out="$(mktemp -d "${TMPDIR:-/tmp}/cutrace-demo.XXXXXX")"
  exec "$build/bin/cutrace" run --output "$out" -- "$build/bin/ct_demo"
fi
echo "cutrace: no GPU here; summarizing the bundled example trace examples/demo.trace" >&2
exec "$build/bin/cutrace" summary "$root/examples/demo.trace"
