#!/usr/bin/env python3
"""`cutrace diff A B --fail-above SHARE` as a CI gate: B's kernels each run
10% longer than A's (an imported Kineto trace, durations scaled), so every
kernel's total, the total kernel time and the device's busy time grow by
more than 5% and less than 20%. --fail-above 5% (or 0.05) exits 3 and names
what grew on stderr after the report; 20% exits 0; a bare 5 is refused
(exit 2: is it 5% or 500%?).

    diff_gate_test.py CUTRACE
"""
import os
import subprocess
import sys

from long_names import long_names_kineto
from temp_dir import run_in_temp_dir

CUTRACE = sys.argv[1]


def checks(tmp):
    traces = []
    for name, scale in (("a", 1.0), ("b", 1.1)):
        src, dst = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + ".trace")
        long_names_kineto(src, scale)
        subprocess.run([CUTRACE, "import", src, "-o", dst], check=True, capture_output=True)
        traces.append(dst)
    failures = []

    def diff(*args):
        return subprocess.run([CUTRACE, "diff", *traces, *args], capture_output=True, text=True,
                              timeout=60)

    for share in ("5%", "0.05"):
        p = diff("--fail-above", share)
        if p.returncode != 3:
            failures.append(f"--fail-above {share}: exit {p.returncode}, want 3: {p.stderr!r}")
        lines = p.stderr.splitlines()
        # 3 kernels, the total kernel time and device 0's busy time: +10% each.
        want_first = f"cutrace: 5 slower by more than {share} from A to B:"
        if not lines or lines[0] != want_first:
            failures.append(f"--fail-above {share}: first stderr line {lines[:1]!r}, "
                            f"want {want_first!r}")
        if "total kernel time +10.0%" not in p.stderr or "device 0 busy time" not in p.stderr:
            failures.append(f"--fail-above {share}: stderr lacks the totals: {p.stderr!r}")
        if "kernels (B vs A" not in p.stdout:
            failures.append(f"--fail-above {share}: the report is missing: {p.stdout[:200]!r}")
    p = diff("--fail-above", "20%")
    if p.returncode != 0 or p.stderr:
        failures.append(f"--fail-above 20%: exit {p.returncode}, stderr {p.stderr!r}")
    p = diff("--fail-above", "5")
    if p.returncode != 2:
        failures.append(f"--fail-above 5: exit {p.returncode}, want 2 (a bare number above 1)")
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(run_in_temp_dir("diff_gate_", checks))
