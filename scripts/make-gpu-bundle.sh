#!/usr/bin/env bash
# Copies what the GPU machine needs into one folder (see ../shared/GPU.md):
#   bin/cutrace, lib/libcutrace_injection.so   (same layout, so cutrace finds ../lib)
#   bin/cutrace-check-metrics                  the metric checker `cutrace run --metrics` runs
#   bin/ct_*                                   the testapps
#   lib/libcutrace_fake_cupti_version.so       a libcupti of another version (failopen.py)
#   lib-asan/                                  the library built with ASan+UBSan, and the
#                                              libasan/libubsan it needs (from ASAN_BUILD_DIR,
#                                              default build-asan; left out if not built)
#   valgrind/                                  valgrind's launcher and callgrind, for
#                                              bench/launch_instructions.py (if installed here)
#   wheel/cutrace-*.whl                        the Python wheel (scripts/python-test.sh)
#   tests/gpu/*.py, scripts/gpu-suite.sh       the suite
# Then, on the GPU machine: bash scripts/gpu-suite.sh build/gpu-bundle
# (with carry: ["build/gpu-bundle"]).
#
# usage: scripts/make-gpu-bundle.sh [BUILD_DIR] [BUNDLE_DIR]
#        defaults: build, BUILD_DIR/gpu-bundle; ASAN_BUILD_DIR (default build-asan)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
bundle=${2:-$build/gpu-bundle}
limit_mib=56  # the device tool carries 64 MiB in all; leave room

[[ -d $build ]] || { echo "make-gpu-bundle: no build dir $build" >&2; exit 1; }
build=$(cd "$build" && pwd)

# The testapps the suite runs: one per case in tests/gpu/validate.py, which
# knows the list; ct_fork also needs ct_launch_storm beside it.
mapfile -t apps < <({ python3 "$root/tests/gpu/validate.py" --apps
                      python3 "$root/tests/gpu/failopen.py" --apps; } | sort -u)
((${#apps[@]} > 0)) || { echo "make-gpu-bundle: found no cases in tests/gpu/validate.py" >&2; exit 1; }
# tests/gpu/counters.py runs ct_known_work.
mapfile -t -O "${#apps[@]}" apps < <(python3 "$root/tests/gpu/counters.py" --apps)

missing=()
need=("$build/bin/cutrace" "$build/bin/cutrace-check-metrics" "$build/lib/libcutrace_injection.so")
for app in "${apps[@]}"; do need+=("$build/bin/ct_$app"); done
for f in "${need[@]}"; do [[ -f $f ]] || missing+=("$f"); done
if ((${#missing[@]})); then
  echo "make-gpu-bundle: not built (run: cmake --build $build):" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 1
fi

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/tests/gpu" "$bundle/scripts"
cp -p "$build/bin/cutrace" "$build/bin/cutrace-check-metrics" "$build/bin"/ct_* "$bundle/bin/"
cp -p "$build/lib/libcutrace_injection.so" "$bundle/lib/"
# Shared libraries of bin/cutrace that Debian has no static form of (simdjson,
# for `cutrace import`): the GPU machine may lack them; cutrace's RUNPATH is
# $ORIGIN/../lib.
while read -r lib; do
  cp -pL "$lib" "$bundle/lib/"
done < <(ldd "$build/bin/cutrace" | awk '$3 ~ /libsimdjson/ {print $3}')
# The overhead floor (bench/cupti_floor.cc) and the benchmarks that use it.
mkdir -p "$bundle/bench"
cp -p "$root"/bench/*.py "$bundle/bench/"
# The analysis-speed benchmark (issue 7): its trace generator and script, so
# the summary's events/s is also measured on the GPU machine's CPU.
if [[ -x $build/bin/gen_trace ]]; then
  cp -p "$build/bin/gen_trace" "$bundle/bin/"
  cp -p "$root/bench/analysis_speed.sh" "$bundle/bench/"
fi
# valgrind's launcher and callgrind (bench/launch_instructions.py), from this
# machine's Debian package: the GPU machine may have none. The tool binaries
# are static; the suite points VALGRIND_LIB at the folder.
vg_lib=/usr/libexec/valgrind
if [[ -x /usr/bin/valgrind.bin && -x $vg_lib/callgrind-amd64-linux ]]; then
  mkdir -p "$bundle/valgrind"
  cp -p /usr/bin/valgrind.bin "$vg_lib/callgrind-amd64-linux" "$vg_lib/vgpreload_core-amd64-linux.so" \
    "$vg_lib/default.supp" "$bundle/valgrind/"
else
  echo "make-gpu-bundle: no valgrind here: the suite's launch_instructions step will be skipped"
fi
if [[ -f $build/lib/libcutrace_floor.so ]]; then
  cp -p "$build/lib/libcutrace_floor.so" "$bundle/lib/"
else
  echo "make-gpu-bundle: no $build/lib/libcutrace_floor.so: the suite's overhead step will fail" >&2
fi
if [[ -f $build/lib/libcutrace_fake_cupti_version.so ]]; then
  cp -p "$build/lib/libcutrace_fake_cupti_version.so" "$bundle/lib/"
fi
# The ASan+UBSan library, with the sanitizer runtimes it was linked against
# (the GPU machine's may be another version). Debug sections are stripped from
# the copies (the symbol tables stay, so reports name functions); the
# unstripped library in ASAN_BUILD_DIR symbolizes a report's offsets here.
asan_build=${ASAN_BUILD_DIR:-$root/build-asan}
if [[ -f $asan_build/lib/libcutrace_injection.so ]]; then
  mkdir -p "$bundle/lib-asan"
  cp -p "$asan_build/lib/libcutrace_injection.so" "$bundle/lib-asan/"
  while read -r name _ path _; do
    [[ $name =~ ^lib(asan|ubsan)\.so && -f $path ]] && cp -L "$path" "$bundle/lib-asan/$name"
  done < <(ldd "$asan_build/lib/libcutrace_injection.so" 2>/dev/null | grep '=>')
  strip --strip-debug "$bundle/lib-asan"/*.so* 2>/dev/null || true
  [[ -f $bundle/lib-asan/libasan.so.8 ]] ||
    echo "make-gpu-bundle: $asan_build's library does not link libasan.so.8; failopen's asan cases will fail" >&2
else
  echo "make-gpu-bundle: no $asan_build/lib/libcutrace_injection.so: the suite skips the ASan runs"
fi
# The Python wheel (scripts/python-test.sh builds it into BUILD_DIR/wheel),
# for the suite's python step; left out when not built.
if compgen -G "$build/wheel/cutrace-*.whl" > /dev/null; then
  mkdir -p "$bundle/wheel"
  cp -p "$build"/wheel/cutrace-*.whl "$bundle/wheel/"
else
  echo "make-gpu-bundle: no $build/wheel/cutrace-*.whl (scripts/python-test.sh): the suite's python step will fail"
fi
cp -p "$root"/tests/gpu/*.py "$bundle/tests/gpu/"
# tests/gpu/idle_causes.py imports tests/cli/script_checks.py from beside it.
mkdir -p "$bundle/tests/cli"
cp -p "$root/tests/cli/script_checks.py" "$bundle/tests/cli/"
cp -p "$root/scripts/gpu-suite.sh" "$bundle/scripts/"
# Shared libraries beyond the C/C++ runtime that the binaries were linked with
# here (e.g. libfmt for cutrace) may be missing on the GPU machine: carry them
# in lib/deps, which gpu-suite.sh puts on LD_LIBRARY_PATH.
base='^(linux-vdso|libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libpthread|libdl|librt|libcuda|libcupti)\.so'
for bin in "$bundle/bin"/* "$bundle/lib"/*.so; do
  while read -r name _ path _; do
    [[ $name =~ $base || -z ${path:-} || ! -f $path ]] && continue
    mkdir -p "$bundle/lib/deps"
    if [[ ! -f $bundle/lib/deps/$name ]]; then
      cp -L "$path" "$bundle/lib/deps/$name"
      echo "make-gpu-bundle: carrying $name (needed by $(basename "$bin"); link it statically to drop this)"
    fi
  done < <(ldd "$bin" 2>/dev/null | grep '=>')
done

{
  echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
    git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built  $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n) from $build"
  echo "apps   ${apps[*]}"
} > "$bundle/MANIFEST"

bytes=$(du -sb "$bundle" | cut -f1)
mib=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "make-gpu-bundle: $bundle: $(find "$bundle" -type f | wc -l) files, $mib MiB"
if ((bytes > limit_mib * 1048576)); then
  echo "make-gpu-bundle: over $limit_mib MiB; the device tool carries 64 MiB in all" >&2
  exit 1
fi
