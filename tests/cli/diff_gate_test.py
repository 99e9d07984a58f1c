#!/usr/bin/env python3
"""`cutrace diff A B --fail-above SHARE` as a CI gate, on traces whose truth
is known because this script wrote them (Kineto JSON, imported):

1. B's kernels each run 10% longer than A's (durations scaled): every
   kernel's total, the total kernel time, the device's busy time and its span
   grow by more than 5% and less than 20%. --fail-above 5% (or 0.05) exits 3
   and names what grew on stderr after the report; 20% exits 0; a bare 5 is
   refused (exit 2: is it 5% or 500%?).
2. The same step, 4 times in A and 8 in B: with --range the times and counts
   are per step (a note says so), nothing changed, exit 0; without --range
   the totals doubled (exit 3).
3. An added kernel of 320 us a step fails the gate; a 1 us kernel that
   doubles beside a 1 ms one does not (under --min-delta 1% of A's kernel
   time; a note counts it), and fails it with --min-delta 0%.
4. A kernel with launches of 0 ns in A and 50 us in B fails it; with
   --fail-above 1% and no --threshold, a +3% kernel is "slower" in the table
   as in the gate.
5. B cut between packets (no end-of-trace marker), a merge holding such a
   file, or a B with no kernels at all fails the gate whatever grew; the cut
   file gets a warning line.
6. Idle time added between kernels (the same kernels): the device's span
   grows and fails the gate.
7. Different GPU models: a note names both. A region missing from one side:
   the error names the side and its file.

    diff_gate_test.py CUTRACE
"""
import json
import os
import subprocess
import sys

from long_names import long_names_kineto
from temp_dir import run_in_temp_dir

CUTRACE = sys.argv[1]


def kineto(path, steps, kernels, idle_us=0.0, device_name="NVIDIA H200"):
    """`steps` ProfilerStep ranges, each launching `kernels` ((name, us) pairs)
    back to back on one stream, `idle_us` of GPU idle before each kernel but
    the step's first; 10 us of idle between steps."""
    events = [{"name": "process_name", "ph": "M", "ts": 0, "pid": 1, "tid": 0,
               "args": {"name": "python3"}}]
    gpu, correlation = 1000.0, 100
    for step in range(steps):
        start = gpu - 5
        for i, (name, dur) in enumerate(kernels):
            correlation += 1
            if i > 0:
                gpu += idle_us
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": 1, "tid": 1, "ts": start + 0.5 * i, "dur": 0.25,
                           "args": {"correlation": correlation}})
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                           "ts": gpu, "dur": dur,
                           "args": {"device": 0, "stream": 7, "correlation": correlation,
                                    "grid": [1, 1, 1], "block": [128, 1, 1]}})
            gpu += dur
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                       "pid": 1, "tid": 1, "ts": start, "dur": 0.5 * len(kernels) + 1,
                       "args": {}})
        gpu += 10
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events,
                   "baseTimeNanoseconds": 1_700_000_000_000_000_000,  # an anchor: merge takes it
                   "deviceProperties": [{"id": 0, "name": device_name, "totalGlobalMem": 1 << 37,
                                         "computeMajor": 9, "computeMinor": 0,
                                         "numSms": 132}]}, f)


def checks(tmp):
    failures = []

    def imported(name, write):
        src, dst = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + ".trace")
        write(src)
        subprocess.run([CUTRACE, "import", src, "-o", dst], check=True, capture_output=True)
        return dst

    def diff(a, b, *args):
        return subprocess.run([CUTRACE, "diff", a, b, *args], capture_output=True, text=True,
                              timeout=60)

    def expect(what, ok, p=None):
        if not ok:
            failures.append(what + (f": exit {p.returncode}, stdout {p.stdout[-600:]!r}, "
                                    f"stderr {p.stderr!r}" if p else ""))

    # 1. Every kernel 10% longer.
    a = imported("a", lambda p: long_names_kineto(p, 1.0))
    b = imported("b", lambda p: long_names_kineto(p, 1.1))
    for share in ("5%", "0.05"):
        p = diff(a, b, "--fail-above", share)
        lines = p.stderr.splitlines()
        # 3 kernels, the total kernel time, device 0's busy time and span.
        expect(f"--fail-above {share}: exit 3, 6 lines",
               p.returncode == 3 and lines[:1] == [f"cutrace: 6 slower by more than {share} from A to B:"], p)
        expect(f"--fail-above {share}: the totals named",
               "total kernel time +10.0%" in p.stderr and "device 0 busy time +10.0%" in p.stderr
               and "device 0 span (busy + idle)" in p.stderr, p)
        expect(f"--fail-above {share}: the report", "kernels (B vs A" in p.stdout, p)
    p = diff(a, b, "--fail-above", "20%")
    expect("--fail-above 20%: exit 0, nothing said", p.returncode == 0 and not p.stderr, p)
    p = diff(a, b, "--fail-above", "5")
    expect("--fail-above 5: exit 2 (a bare number above 1)", p.returncode == 2, p)

    # 2. 4 steps against 8 of the same step.
    step = [("gemm", 100.0), ("relu", 10.0)]
    s4 = imported("s4", lambda p: kineto(p, 4, step))
    s8 = imported("s8", lambda p: kineto(p, 8, step))
    p = diff(s4, s8, "--range", "ProfilerStep*", "--fail-above", "5%")
    expect("4 vs 8 steps per step: exit 0", p.returncode == 0 and not p.stderr, p)
    expect("4 vs 8 steps: the note", "A has 4 instances of 'ProfilerStep*' in its window, B 8" in
           " ".join(p.stdout.split()), p)
    p = diff(s4, s8, "--range", "ProfilerStep*", "--format", "json")
    j = json.loads(p.stdout)
    gemm = [k for k in j["kernels"] if k["name"] == "gemm"][0]
    expect("4 vs 8 steps: JSON per step",
           j.get("per_instance") == {"a": 4, "b": 8} and gemm["total_ns_a"] == 100000 and
           gemm["total_ns_b"] == 100000 and gemm["count_a"] == 1 and gemm["count_b"] == 1 and
           gemm["status"] == "unchanged" and j.get("total_ns_a") == 110000, p)
    p = diff(s4, s8, "--fail-above", "5%")
    expect("4 vs 8 steps, whole traces: doubled", p.returncode == 3 and
           "total kernel time +100.0%" in p.stderr, p)

    # 3. An added kernel; a tiny one doubling.
    r0 = imported("r0", lambda p: kineto(p, 4, [("gemm", 1000.0), ("tiny", 1.0)]))
    r1 = imported("r1", lambda p: kineto(p, 4, [("gemm", 1000.0), ("tiny", 2.0), ("extra", 320.0)]))
    p = diff(r0, r1, "--fail-above", "5%")
    expect("added kernel fails", p.returncode == 3 and "kernel extra added, 1.280 ms" in p.stderr and
           "kernel tiny" not in p.stderr, p)
    expect("tiny kernel under the floor noted",
           "1 kernel grew by more than 5% but by less than 1% of A's kernel time" in
           " ".join(p.stdout.split()), p)
    t1 = imported("t1", lambda p: kineto(p, 4, [("gemm", 1000.0), ("tiny", 2.0)]))
    p = diff(r0, t1, "--fail-above", "5%")
    expect("tiny kernel alone passes", p.returncode == 0 and not p.stderr, p)
    p = diff(r0, t1, "--fail-above", "5%", "--min-delta", "0%")
    expect("--min-delta 0%: the tiny kernel fails", p.returncode == 3 and "kernel tiny +100.0%" in p.stderr, p)

    # 4. A kernel of 0 ns in A; the threshold follows --fail-above.
    z0 = imported("z0", lambda p: kineto(p, 4, [("gemm", 100.0), ("zk", 0.0)]))
    z1 = imported("z1", lambda p: kineto(p, 4, [("gemm", 103.0), ("zk", 50.0)]))
    p = diff(z0, z1, "--fail-above", "1%", "--format", "json")
    j = json.loads(p.stdout)
    status = {k["name"]: k["status"] for k in j["kernels"]}
    expect("0 ns in A fails; +3% is slower at --fail-above 1%",
           p.returncode == 3 and "kernel zk 0 -> 200.0 us" in p.stderr and
           "kernel gemm +3.0%" in p.stderr and status == {"zk": "slower", "gemm": "slower"} and
           j.get("gate", {}).get("passed") is False, p)
    p = diff(z0, z1, "--fail-above", "1%", "--threshold", "5%", "--format", "json")
    status = {k["name"]: k["status"] for k in json.loads(p.stdout)["kernels"]}
    expect("an explicit --threshold stays", status["gemm"] == "unchanged", p)

    # 5. B cut short, B empty.
    whole = open(s4, "rb").read()
    cut = os.path.join(tmp, "cut.trace")
    found = False
    for drop in range(1, 400):  # the end-of-trace packet: cut just before it
        with open(cut, "wb") as f:
            f.write(whole[:len(whole) - drop])
        info = subprocess.run([CUTRACE, "info", cut], capture_output=True, text=True).stdout
        if "truncated         no" in info and "NOT clean" in info:
            found = True
            break
    expect("a cut between packets found", found)
    p = diff(s4, cut, "--fail-above", "5%")
    expect("B cut short fails the gate", p.returncode == 3 and
           "gate fails: B is incomplete (no end-of-trace marker)" in p.stderr and
           "cut.trace: warning: no end-of-trace marker" in p.stderr, p)
    p = subprocess.run([CUTRACE, "kernels", cut], capture_output=True, text=True, timeout=60)
    expect("kernels warns about the cut file", p.returncode == 0 and
           "warning: no end-of-trace marker" in p.stderr, p)
    # A merge holding the cut file: its warning says so, and the gate fails.
    both, with_cut = os.path.join(tmp, "both.trace"), os.path.join(tmp, "with_cut.trace")
    for out, second in ((both, s4), (with_cut, cut)):
        subprocess.run([CUTRACE, "merge", s4, second, "-o", out], check=True, capture_output=True)
    p = diff(both, with_cut, "--fail-above", "5%")
    expect("a merge with an input cut short fails the gate", p.returncode == 3 and
           "gate fails: B merges an input cut short (" in p.stderr, p)
    empty = imported("empty", lambda p: kineto(p, 0, []))
    p = diff(s4, empty, "--fail-above", "5%")
    expect("B without kernels fails the gate", p.returncode == 3 and
           "gate fails: B ran no kernels (A: 440.0 us)" in p.stderr, p)

    # 6. Idle between kernels: same kernels, a longer span.
    idle = imported("idle", lambda p: kineto(p, 4, step, idle_us=50.0))
    p = diff(s4, idle, "--fail-above", "5%")
    expect("idle added fails by the span", p.returncode == 3 and
           "device 0 span (busy + idle) +" in p.stderr and "busy time" not in p.stderr, p)

    # 7. Another GPU; a region on one side only.
    other = imported("other", lambda p: kineto(p, 4, step, device_name="NVIDIA A100-SXM4-80GB"))
    p = diff(s4, other)
    expect("different GPUs noted", p.returncode == 0 and
           "note: device 0 is NVIDIA H200 in A, NVIDIA A100-SXM4-80GB in B" in p.stdout, p)
    p = diff(s4, a, "--range", "ProfilerStep*")
    expect("a region B lacks: the error names B", p.returncode == 1 and
           p.stderr.startswith("cutrace: B (" + a + "): ") and len(p.stderr.splitlines()) == 1, p)

    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(run_in_temp_dir("diff_gate_", checks))
