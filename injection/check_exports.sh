#!/bin/sh
# Fails unless libcutrace_injection.so exports only its entry point and
# needs only the C/C++ runtime (no libcupti, libcuda, protobuf or fmt).
# Usage: check_exports.sh path/to/libcutrace_injection.so
set -eu
lib="$1"
status=0

exports=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u)
unexpected=$(printf '%s\n' "$exports" | grep -v -x -e InitializeInjection -e '' || true)
if [ -n "$unexpected" ]; then
  echo "unexpected exported symbols:"
  printf '  %s\n' $unexpected
  status=1
fi
if ! printf '%s\n' "$exports" | grep -q -x InitializeInjection; then
  echo "InitializeInjection is not exported"
  status=1
fi

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for n in $needed; do
  case "$n" in
    libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|ld-linux-x86-64.so.*|libdl.so.*|libpthread.so.*) ;;
    *) echo "unexpected NEEDED entry: $n"; status=1 ;;
  esac
done

echo "exports: $(printf '%s ' $exports)"
echo "needed:  $(printf '%s ' $needed)"
exit $status
