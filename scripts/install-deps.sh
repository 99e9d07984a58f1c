#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages cutrace builds with, skipping those
# already present. Safe to run repeatedly. Needs root (or sudo) only when
# something is missing.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config libprotobuf-dev protobuf-compiler libcli11-dev
          libfmt-dev nlohmann-json3-dev libgtest-dev libbenchmark-dev
          libsimdjson-dev zlib1g-dev  # the Kineto JSON reader; .json.gz imports
          python3 python3-venv binutils  # python3-venv: scripts/python-test.sh's fresh venv
          python3-prometheus-client  # tests: OpenMetrics output read by prometheus_client's parser
          prometheus  # promtool: the OpenMetrics export is checked with `promtool check metrics`
          valgrind)   # callgrind: bench/launch_instructions.py (and the launch storm's callgrind.h)
# clang brings libFuzzer for the fuzz targets (optional for a plain build).
if [[ "${CUTRACE_WITH_CLANG:-0}" == 1 ]]; then packages+=(clang libclang-rt-14-dev); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then exit 0; fi

echo "cutrace: installing ${missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) != 0 ]]; then
  if command -v sudo >/dev/null; then sudo_cmd=(sudo); else
    echo "cutrace: missing packages (${missing[*]}) and not root: install them and rerun" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
