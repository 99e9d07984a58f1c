#!/usr/bin/env python3
"""Every table fits the terminal (issue 23).

Each report in table form, over every bundled example (examples/*.trace),
the Kineto fixture imported, and an imported Kineto trace with PyTorch's
long kernel names, prints no line wider than 100 columns when stdout is a
pipe and $COLUMNS is unset, nor wider than $COLUMNS or --width when given.

Kernel names: two PyTorch kernels whose short names collide
(`at::native::vectorized_elementwise_kernel<…>(…)`) are told apart by a tag,
the first 4 hex digits of the FNV-1a 64 hash of the full name, computed here
independently of the C++ code; `--names full` shows the full names; JSON
and CSV keep the full name and add the short one.

    table_width_test.py CUTRACE SOURCE_DIR
"""
import glob
import json
import os
import subprocess
import sys

from long_names import ADD, LAMBDA, LAMBDA_SHORT, MUL, SHORT, long_names_kineto, tag
from temp_dir import run_in_temp_dir

CUTRACE, SOURCE = sys.argv[1], sys.argv[2]

failures = []


def cutrace(args, env_columns=None):
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    if env_columns is not None:
        env["COLUMNS"] = str(env_columns)
    return subprocess.run([CUTRACE] + args, capture_output=True, timeout=120, env=env)


REPORTS = [["summary"], ["kernels"], ["kernels", "--sort", "count", "--top", "3"], ["memcpy"],
           ["gaps"], ["overlap"], ["nvtx"], ["api"], ["info"], ["diagnose"], ["metrics"],
           ["timeline"]]


def check_width(args, limit, env_columns=None):
    p = cutrace(args, env_columns)
    label = " ".join(args) + (f" (COLUMNS={env_columns})" if env_columns else "")
    if p.returncode != 0:
        failures.append(f"{label}: exit {p.returncode}: {p.stderr.decode()[:300]}")
        return ""
    text = p.stdout.decode()
    for line in text.splitlines():
        if len(line) > limit:
            failures.append(f"{label}: a line of {len(line)} columns > {limit}: {line[:120]!r}")
            break
    return text


def checks(tmp):
    kineto = os.path.join(tmp, "kineto.trace")
    long_json = os.path.join(tmp, "long.json")
    long_names = os.path.join(tmp, "long.trace")
    long_names_kineto(long_json)
    for src, dst in ((os.path.join(SOURCE, "tests", "data", "kineto_small.json"), kineto),
                     (long_json, long_names)):
        p = cutrace(["import", src, "-o", dst])
        if p.returncode != 0:
            print(f"FAIL: import {src}: {p.stderr.decode()}")
            return 1
    traces = sorted(glob.glob(os.path.join(SOURCE, "examples", "*.trace"))) + [kineto, long_names]
    for trace in traces:
        for report in REPORTS:
            check_width(report + [trace], 100)
        check_width(["kernels", trace], 80, env_columns=80)
        check_width(["summary", trace, "--width", "60"], 60)
    # Several files, and diff.
    check_width(["summary", kineto, long_names], 100)
    check_width(["kernels", kineto, long_names], 100)
    check_width(["diff", kineto, long_names], 100)

    # Colliding short names, told apart by their tags.
    text = check_width(["kernels", long_names], 100)
    for full in (ADD, MUL):
        want = f"{SHORT} #{tag(full)[:4]}"
        if want not in text:
            failures.append(f"kernels: no row shows {want!r}:\n{text}")
    if tag(ADD)[:4] == tag(MUL)[:4]:
        failures.append("the two test names share a 4-digit tag: pick other names")
    if LAMBDA_SHORT not in text or LAMBDA_SHORT + " #" in text:
        failures.append(f"kernels: the lambda kernel is not shown as {LAMBDA_SHORT!r}:\n{text}")
    full = cutrace(["kernels", long_names, "--names", "full", "--width", "1000"]).stdout.decode()
    for name in (ADD, MUL, LAMBDA):
        if name not in full:
            failures.append(f"kernels --names full: {name[:60]!r}... not shown whole")

    # JSON and CSV: the full name, and the short one beside it.
    p = cutrace(["kernels", long_names, "--format", "json"])
    got = {k["name"]: k.get("short_name") for k in json.loads(p.stdout)["kernels"]}
    want = {ADD: f"{SHORT} #{tag(ADD)[:4]}", MUL: f"{SHORT} #{tag(MUL)[:4]}",
            LAMBDA: LAMBDA_SHORT}
    if got != want:
        failures.append(f"kernels --format json: names {got!r}, want {want!r}")
    csv = cutrace(["kernels", long_names, "--format", "csv"]).stdout.decode().splitlines()
    if not csv or not csv[0].endswith(",name,short_name"):
        failures.append(f"kernels --format csv: header {csv[:1]!r} lacks name,short_name")

    for f in failures:
        print("FAIL:", f)
    print(f"{len(traces)} traces; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(run_in_temp_dir("table_width_", checks))
