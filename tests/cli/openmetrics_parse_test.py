#!/usr/bin/env python3
"""`cutrace summary --format openmetrics` passes prometheus_client's
OpenMetrics parser (openmetrics_check.py says what else it checks) over
every bundled example, the Kineto fixture imported, an imported trace of
PyTorch's long kernel names (two sharing a short name) and several files
at once; and the kernel name labels are the short names, told apart.
Exit 77 (skipped) without prometheus_client.

    openmetrics_parse_test.py CUTRACE SOURCE_DIR
"""
import glob
import os
import subprocess
import sys

from long_names import ADD, MUL, SHORT, long_names_kineto, tag
from temp_dir import run_in_temp_dir

CUTRACE, SOURCE = sys.argv[1], sys.argv[2]
CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "openmetrics_check.py")


def checks(tmp):
    kineto, long_json, long_trace = (os.path.join(tmp, n) for n in
                                     ("kineto.trace", "long.json", "long.trace"))
    long_names_kineto(long_json)
    for src, dst in ((os.path.join(SOURCE, "tests", "data", "kineto_small.json"), kineto),
                     (long_json, long_trace)):
        subprocess.run([CUTRACE, "import", src, "-o", dst], check=True, capture_output=True)
    inputs = [[t] for t in sorted(glob.glob(os.path.join(SOURCE, "examples", "*.trace")))]
    inputs += [[kineto], [long_trace], [kineto, long_trace]]
    failed = False
    for i, files in enumerate(inputs):
        out = os.path.join(tmp, f"{i}.txt")
        p = subprocess.run([CUTRACE, "summary", "--format", "openmetrics"] + files,
                           capture_output=True, timeout=120)
        if p.returncode != 0:
            print(f"FAIL: summary --format openmetrics {files}: exit {p.returncode}: {p.stderr!r}")
            failed = True
            continue
        with open(out, "wb") as f:
            f.write(p.stdout)
        c = subprocess.run([sys.executable, CHECK, out])
        if c.returncode == 77:
            return 77
        failed |= c.returncode != 0
    # The colliding names: short labels with their tags, full names in the info.
    text = open(os.path.join(tmp, f"{len(inputs) - 2}.txt"), encoding="utf-8").read()
    for full in (ADD, MUL):
        want = f'cutrace_kernel_info{{name="{SHORT} #{tag(full)[:4]}",full_name="{full}"}} 1'
        if want not in text:
            print(f"FAIL: no info line {want!r}")
            failed = True
    print("ok" if not failed else "failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run_in_temp_dir("openmetrics_parse_", checks))
