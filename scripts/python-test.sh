#!/usr/bin/env bash
# The Python package's tests (issue 24): builds the wheel with `pip wheel .`
# in a fresh virtual environment, installs it there with numpy, pandas,
# pyarrow and pytest (from PyPI), and runs tests/python over the examples,
# including the 10 M-event load time (its FIGURE line).
#
# The wheel build reuses the CMake tree ($CUTRACE_BUILD_DIR, default build/,
# already built by scripts/build.sh), so nothing is compiled twice:
# scikit-build-core's build-dir points at it, with the tree's own compilers,
# launchers and options passed on, so that its compile commands stay the same
# and ninja has nothing to rebuild. It runs without build isolation
# (scikit-build-core installed in the venv first), since a new isolated
# environment makes scikit-build-core clear the tree's cache. Afterwards the
# settings scikit-build-core wrote into the cache (Python paths, install
# prefix, module path) are set back, so ctest's Python tests keep theirs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CUTRACE_BUILD_DIR:-$root/build}"
[[ -f $build/CMakeCache.txt ]] || { echo "python-test: build first (scripts/build.sh)" >&2; exit 1; }
build="$(cd "$build" && pwd)"
venv="$build/python-venv"
python3 -m venv --clear "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check numpy pandas pyarrow pytest \
  'scikit-build-core>=0.10'
if [[ -d /usr/local/cuda/bin && ":$PATH:" != *":/usr/local/cuda/bin:"* ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"  # as scripts/build.sh does: nvcc for the injection library
fi

cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt" | head -1; }
keep=(CMAKE_C_COMPILER CMAKE_CXX_COMPILER CMAKE_CUDA_COMPILER CMAKE_C_COMPILER_LAUNCHER
      CMAKE_CXX_COMPILER_LAUNCHER CMAKE_CUDA_COMPILER_LAUNCHER CUTRACE_BUILD_TESTS
      CUTRACE_BUILD_BENCH CUTRACE_BUILD_TESTAPPS CUTRACE_BUILD_GPU)
restore=(Python3_EXECUTABLE Python_EXECUTABLE PYTHON_EXECUTABLE CMAKE_INSTALL_PREFIX
         CMAKE_MODULE_PATH CMAKE_PREFIX_PATH)
defines=()
for key in "${keep[@]}"; do
  value=$(cache "$key")
  [[ -n $value ]] && defines+=(-C "cmake.define.$key=$value")
done
put_back=()
for key in "${restore[@]}"; do
  if grep -q "^$key:" "$build/CMakeCache.txt"; then put_back+=("-D$key=$(cache "$key")"); else put_back+=("-U$key"); fi
done
rm -rf "$build/wheel"
wheel_rc=0
"$venv/bin/python" -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation \
  -w "$build/wheel" "$root" -C build-dir="$build" "${defines[@]}" || wheel_rc=$?
rm -f "$build/CMakeInit.txt"
cmake -S "$root" -B "$build" "${put_back[@]}" >/dev/null
((wheel_rc == 0)) || { echo "python-test: pip wheel failed ($wheel_rc)" >&2; exit "$wheel_rc"; }
wheel=("$build"/wheel/cutrace-*.whl)
echo "python-test: built $(basename "${wheel[0]}") ($(du -h "${wheel[0]}" | cut -f1))"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall "${wheel[0]}"

export CUTRACE_EXAMPLES="$root/examples"
[[ -x $build/bin/gen_trace ]] && export CUTRACE_GEN_TRACE="$build/bin/gen_trace"
# From outside the source tree, so that the installed package is the one imported.
cd "$build"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/python"
