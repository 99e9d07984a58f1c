#!/usr/bin/env bash
# The main job: install what is missing, build, and profile the demo app on
# the GPU. Where there is no GPU, say so in one line and summarize the bundled
# example trace instead.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CUTRACE_BUILD_DIR:-$root/build}"
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
if nvidia-smi -L >/dev/null 2>&1 && [[ -x "$build/bin/ct_demo" ]]; then
  out="$(mktemp -d "${TMPDIR:-/tmp}/cutrace-demo.XXXXXX")"
  exec "$build/bin/cutrace" run --output "$out" -- "$build/bin/ct_demo"
fi
echo "cutrace: no GPU here; summarizing the bundled example trace examples/demo.trace" >&2
exec "$build/bin/cutrace" summary "$root/examples/demo.trace"
