#!/usr/bin/env python3
"""Idle time by cause on real PyTorch programs (issue 19), and a torch.profiler
trace of the same loop for checking the Kineto import by hand.

  idle_causes.py --cutrace BIN --out DIR [--steps N]
      1. a host-bound MLP step loop (a 3 ms host pause, as data loading, then
         a small forward/backward/step, each step in an NVTX range "step"),
         under `cutrace run`: `cutrace overlap --format json` must put most
         of the idle time on the host (host_busy or host_sync), not on the
         GPU (queued/unknown);
      2. a large-GEMM loop under `cutrace run`: the GPU must be busy over 90%
         of its span (gpu-bound);
      3. the MLP loop under torch.profiler, its Chrome trace written to
         DIR/torch_mlp.json (the importer's real-world input);
      4. regions and the verdict (issue 19 points 2-4): on the MLP, `summary`
         shows the steady state of the "step" ranges and `diagnose` says
         host-bound with host_busy or host_sync the largest cause; on the
         GEMM loop (also in "step" ranges) `diagnose` says gpu-bound; the
         torch.profiler trace, imported, gives `summary --range
         'ProfilerStep*' --skip-first 1` a busy % within 0.1 points of a
         recomputation from the JSON here.
  idle_causes.py --workload mlp|gemm|profile [--steps N] [--json F]
      the programs themselves.

Exit 0 pass, 1 fail, 77 skipped (no GPU or no PyTorch).
"""
import argparse
import decimal
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

# tests/cli/script_checks.py (the GPU bundle carries it at the same place).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cli"))
from script_checks import union  # noqa: E402


def workload(kind, steps, json_out):
    import torch

    if not torch.cuda.is_available():
        sys.exit(77)
    dev = torch.device("cuda")
    if kind == "gemm":
        a = torch.randn(8192, 8192, device=dev)
        b = torch.randn(8192, 8192, device=dev)
        for _ in range(steps):
            torch.cuda.nvtx.range_push("step")
            c = a @ b
            a = c * 1e-4
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        return
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 512, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)

    def step():
        torch.cuda.nvtx.range_push("step")
        time.sleep(0.003)  # the host's share: data loading, Python
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        torch.cuda.nvtx.range_push("backward")  # its kernels: the autograd thread's
        loss.backward()
        torch.cuda.nvtx.range_pop()
        opt.step()
        loss.item()  # a host sync each step, as logging the loss does
        torch.cuda.nvtx.range_pop()

    if kind == "profile":
        from torch.profiler import ProfilerActivity, profile, schedule
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     schedule=schedule(wait=1, warmup=1, active=steps)) as prof:
            for _ in range(steps + 2):
                step()
                prof.step()
        prof.export_chrome_trace(json_out)
        return
    for _ in range(steps):
        step()
    torch.cuda.synchronize()


def traced(cutrace, out, name, kind, steps):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    cmd = [cutrace, "run", "--output", d, "--no-summary", "--", sys.executable,
           os.path.abspath(__file__), "--workload", kind, "--steps", str(steps)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if p.returncode == 77:
        return None
    if p.returncode != 0:
        raise RuntimeError(f"{name}: exit {p.returncode}: {p.stderr[-400:]}")
    traces = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".trace")]
    if not traces:
        raise RuntimeError(f"{name}: no trace written")
    overlap = json.loads(subprocess.run([cutrace, "overlap", "--format", "json"] + traces,
                                        capture_output=True, text=True, check=True).stdout)
    with open(os.path.join(out, name + "-overlap.json"), "w") as f:
        json.dump(overlap, f, indent=1)
    summary = subprocess.run([cutrace, "summary"] + traces, capture_output=True, text=True)
    with open(os.path.join(out, name + "-summary.txt"), "w") as f:
        f.write(summary.stdout)
    return overlap["devices"][0]


def trace_files(out, name):
    d = os.path.join(out, name)
    return [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".trace")]


def report_json(cutrace, *args):
    p = subprocess.run([cutrace, *args, "--format", "json"], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f"cutrace {' '.join(args)}: exit {p.returncode}: {p.stderr[-300:]}")
    return json.loads(p.stdout)


def profiler_busy_pct(path, skip):
    """Busy % of steps skip+1.. recomputed from a torch.profiler JSON: the
    window is the union of [step start, max(step end, end of the GPU work
    launched inside)], busy the union of GPU operations clipped to it."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    ns = lambda v: int(round(float(v) * 1000))
    steps, calls, ops = [], [], []
    for e in events:
        if e.get("ph") != "X":
            continue
        cat, args = e.get("cat", ""), e.get("args", {})
        s, d = ns(e["ts"]), ns(e.get("dur", 0))
        if cat == "user_annotation" and e["name"].startswith("ProfilerStep#"):
            steps.append((s, s + d))
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            calls.append((s, args["correlation"]))
        elif cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            ops.append((s, s + d, args.get("correlation")))
    end_of = {}
    for s, e, c in ops:
        end_of[c] = max(end_of.get(c, 0), e)
    parts = []
    for s, e in sorted(steps)[skip:]:
        ends = [end_of[c] for t, c in calls if s <= t <= e and c in end_of]
        parts.append((s, max([e] + ends)))
    window = union(parts)
    busy = 0
    for s, e in union([(s, e) for s, e, _ in ops]):
        for a, b in window:
            busy += max(0, min(e, b) - max(s, a))
    length = sum(b - a for a, b in window)
    return 100.0 * busy / length if length else 0.0


def kernel_durations(path):
    """Each kernel name's durations (ns) in a torch.profiler JSON."""
    with open(path) as f:
        # The numbers as the profiler wrote them (µs in decimal), not as
        # doubles: ns is the exact value rounded half up.
        events = json.load(f, parse_float=decimal.Decimal)["traceEvents"]
    by_name = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            ns = (decimal.Decimal(e.get("dur", 0)) * 1000).to_integral_value(decimal.ROUND_HALF_UP)
            by_name.setdefault(e["name"], []).append(int(ns))
    return by_name


def nearest_rank(values, pct):
    """The nearest-rank percentile: the ceil(p/100 * n)-th smallest value."""
    v = sorted(values)
    rank = min(max(math.ceil(pct / 100 * len(v) - 1e-9), 1), len(v))
    return v[rank - 1]


def coarse_quantile(values, pct):
    """The percentile as summary mode's histogram gives it, from the
    schema's words (DurationHistogram): d for d < 16, else with
    k = floor(log2 d) bucket (k - 2) * 8 + ((d >> (k - 3)) & 7), of width
    2^(k - 3); the value is the bucket's lower middle, clamped to [min, max];
    the first and last rank are min and max themselves."""
    v = sorted(values)
    rank = min(max(math.ceil(pct / 100 * len(v) - 1e-9), 1), len(v))
    d = v[rank - 1]
    if rank == 1 or rank == len(v):
        return d
    if d < 16:
        mid = d
    else:
        k = d.bit_length() - 1
        width = 1 << (k - 3)
        low = (d >> (k - 3)) << (k - 3)
        mid = low + (width - 1) // 2
    return min(max(mid, v[0]), v[-1])


def check_quantiles(cutrace, src, imported, failures):
    """kernels' p50/p99 and OpenMetrics' quantiles of the imported trace
    against a recomputation from the profiler's own events."""
    want = kernel_durations(src)
    got = {k["name"]: k for k in report_json(cutrace, "kernels", imported)["kernels"]}
    p = subprocess.run([cutrace, "summary", imported, "--format", "openmetrics"],
                       capture_output=True, text=True, timeout=120, check=True)
    full = dict(re.findall(r'cutrace_kernel_info\{[^}]*name="([^"]*)",full_name="([^"]*)"', p.stdout))
    quantiles = {}
    for short, q, v in re.findall(
            r'cutrace_kernel_duration_seconds\{[^}]*name="([^"]*)",[^}]*quantile="([^"]*)"\} (\S+)',
            p.stdout):
        quantiles[(full.get(short, short), q)] = float(v)
    compared = wrong = 0
    for name, durations in want.items():
        k = got.get(name)
        checks = []
        if k is not None and len(durations) <= 1024:  # exact there
            checks += [("p50", k["p50_ns"], nearest_rank(durations, 50)),
                       ("p99", k["p99_ns"], nearest_rank(durations, 99))]
        for q, pct in (("0.5", 50), ("0.99", 99)):
            if (name, q) in quantiles:
                checks.append((f"openmetrics {q}", round(quantiles[(name, q)] * 1e9),
                               coarse_quantile(durations, pct)))
        for what, g, w in checks:
            compared += 1
            if g != w:
                wrong += 1
                failures.append(f"{name[:60]}: {what} {g} ns, recomputed {w} ns")
    print(f"FIGURE torch.profiler kernel percentiles: {compared} compared with the raw events, "
          f"{wrong} differ ({len(want)} kernel names)")
    if compared == 0:
        failures.append("torch.profiler import: no kernel percentile to compare")


def check_diagnose(cutrace, src, imported, failures):
    """diagnose's per-kernel count, total time and launch-call average on
    the imported trace against the profiler's own events: kernels by name,
    each joined to the first cuda_runtime/cuda_driver event with its
    correlation id (ns as the profiler wrote them, rounded half up)."""
    with open(src) as f:
        events = json.load(f, parse_float=decimal.Decimal)["traceEvents"]
    ns = lambda v: int((decimal.Decimal(v) * 1000).to_integral_value(decimal.ROUND_HALF_UP))
    call_ns = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            c = e.get("args", {}).get("correlation")
            if c and c not in call_ns:
                call_ns[c] = ns(e.get("dur", 0))
    want = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            w = want.setdefault(e["name"], {"count": 0, "total": 0, "calls": []})
            w["count"] += 1
            w["total"] += ns(e.get("dur", 0))
            c = e.get("args", {}).get("correlation")
            if c in call_ns:
                w["calls"].append(call_ns[c])
    got = report_json(cutrace, "diagnose", imported, "--top", "0")["kernels"]
    compared = wrong = 0
    for k in got:
        w = want.get(k["name"])
        if w is None:
            failures.append(f"diagnose: kernel {k['name'][:60]} is not in the profiler's events")
            continue
        ev = k["evidence"]
        checks = [("count", ev["count"], w["count"]), ("total_ns", ev["total_ns"], w["total"])]
        if w["calls"]:
            avg = sum(w["calls"]) / len(w["calls"])
            checks.append(("launch_api_avg_ns", round(ev.get("launch_api_avg_ns", -1), 1), round(avg, 1)))
        for what, g, x in checks:
            compared += 1
            if abs(g - x) > 0.051:
                wrong += 1
                failures.append(f"diagnose {k['name'][:60]}: {what} {g}, recomputed {x}")
    print(f"FIGURE torch.profiler diagnose: {compared} numbers of {len(got)} kernels compared "
          f"with the raw events, {wrong} differ")
    if compared == 0:
        failures.append("torch.profiler import: diagnose gave no kernel to compare")


def check_regions(args, failures):
    out = args.out
    mlp = trace_files(out, "mlp")
    summary = report_json(args.cutrace, "summary", *mlp)
    steady = summary.get("steady_state")
    if not steady or steady.get("range") != "step":
        failures.append(f"mlp: summary shows no steady state of 'step': {steady}")
    else:
        print(f"FIGURE mlp steady state: busy {steady['busy_pct']:.1f}%, {steady['bound']}")
    program = report_json(args.cutrace, "diagnose", *mlp)["program"]
    print(f"FIGURE mlp diagnose: {program['bound']}, busy {program['busy_pct']:.1f}%, "
          f"largest {program['largest_cause']}")
    if program["bound"] != "host-bound":
        failures.append(f"mlp: diagnose says {program['bound']}")
    if program["largest_cause"] not in ("host_busy", "host_sync"):
        failures.append(f"mlp: diagnose's largest cause is {program['largest_cause']}")
    # Point 7: loss.backward()'s kernels are launched by PyTorch's autograd
    # thread, so the training thread's "backward" range sees few of them
    # under the default (same-thread) rule, which says so, and all of them
    # with --nvtx-projection process.
    def backward_ops(*extra):
        j = report_json(args.cutrace, "nvtx", *mlp, *extra)
        rows = [r for r in j["ranges"] if r["name"] == "backward"]
        return (rows[0]["gpu_ops"] if rows else 0), " ".join(j.get("notes", []))
    same, notes = backward_ops()
    process, _ = backward_ops("--nvtx-projection", "process")
    print(f"FIGURE mlp backward range: {same} GPU ops (own thread), {process} (process)")
    if process < max(2 * same, args.steps):
        failures.append(f"mlp: backward range has {process} ops with --nvtx-projection process, "
                        f"{same} without")
    if same < process and "--nvtx-projection process" not in notes:
        failures.append(f"mlp: nvtx does not point at --nvtx-projection process: {notes!r}")
    program = report_json(args.cutrace, "diagnose", *trace_files(out, "gemm"))["program"]
    print(f"FIGURE gemm diagnose: {program['bound']}, busy {program['busy_pct']:.1f}%")
    if program["bound"] != "gpu-bound":
        failures.append(f"gemm: diagnose says {program['bound']}")
    src = os.path.join(out, "torch_mlp.json")
    imported = os.path.join(out, "torch_mlp.trace")
    if os.path.exists(imported):
        os.remove(imported)
    subprocess.run([args.cutrace, "import", src, "-o", imported], capture_output=True,
                   check=True, timeout=120)
    s = report_json(args.cutrace, "summary", imported, "--range", "ProfilerStep*",
                    "--skip-first", "1")
    d = s["devices"][0]
    got = 100.0 * d["busy_ns"] / d["span_ns"]
    want = profiler_busy_pct(src, 1)
    print(f"FIGURE torch.profiler steps 2..: busy {got:.3f}% (recomputed {want:.3f}%)")
    if abs(got - want) > 0.1:
        failures.append(f"torch.profiler import: busy {got:.3f}% against {want:.3f}% recomputed")
    check_quantiles(args.cutrace, src, imported, failures)
    check_diagnose(args.cutrace, src, imported, failures)


def check(args):
    failures = []
    out = args.out
    os.makedirs(out, exist_ok=True)
    try:
        mlp = traced(args.cutrace, out, "mlp", "mlp", args.steps)
        if mlp is None:
            print("skipped: no GPU or no PyTorch")
            return 77
        causes = mlp["idle_by_cause_ns"]
        host = causes["host_busy"] + causes["host_sync"]
        print(f"FIGURE mlp: idle {mlp['idle_ns']} ns of span {mlp['span_ns']} ns; by cause {causes}")
        if host < mlp["idle_ns"] / 2:
            failures.append(f"mlp: host_busy + host_sync {host} ns is under half the idle time")
        largest = max(causes, key=causes.get)
        if largest not in ("host_busy", "host_sync"):
            failures.append(f"mlp: the largest cause is {largest}")
        gemm = traced(args.cutrace, out, "gemm", "gemm", 100)
        busy = gemm["busy_ns"] / gemm["span_ns"] if gemm["span_ns"] else 0
        print(f"FIGURE gemm: busy {100 * busy:.1f}% of span; idle by cause {gemm['idle_by_cause_ns']}")
        # The whole span includes start-up (cuBLAS's first call: ~0.1 s of
        # host work); the steady state of its "step" ranges is the loop.
        steady = report_json(args.cutrace, "summary", *trace_files(out, "gemm")).get("steady_state")
        print(f"FIGURE gemm steady state: {steady and round(steady['busy_pct'], 1)}% busy")
        if not steady or steady["busy_pct"] < 90:
            failures.append(f"gemm: steady state {steady and steady['busy_pct']}% busy, want over 90%")
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--workload", "profile",
                            "--steps", "20", "--json", os.path.join(out, "torch_mlp.json")],
                           capture_output=True, text=True, timeout=240)
        if p.returncode != 0:
            failures.append(f"torch.profiler run: exit {p.returncode}: {p.stderr[-300:]}")
        else:
            check_regions(args, failures)
    except (RuntimeError, subprocess.SubprocessError, KeyError, ValueError) as e:
        failures.append(str(e))
    for f in failures:
        print("FAIL:", f)
    print(f"idle_causes: {'FAIL' if failures else 'PASS'}")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutrace")
    ap.add_argument("--out", default="idle-causes")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--workload", choices=["mlp", "gemm", "profile"])
    ap.add_argument("--json", default="torch_mlp.json")
    args = ap.parse_args()
    if args.workload:
        workload(args.workload, args.steps, args.json)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
