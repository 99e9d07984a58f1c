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
         DIR/torch_mlp.json (the importer's real-world input).
  idle_causes.py --workload mlp|gemm|profile [--steps N] [--json F]
      the programs themselves.

Exit 0 pass, 1 fail, 77 skipped (no GPU or no PyTorch).
"""
import argparse
import json
import os
import subprocess
import sys
import time


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
        loss.backward()
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
        gemm = traced(args.cutrace, out, "gemm", "gemm", 40)
        busy = gemm["busy_ns"] / gemm["span_ns"] if gemm["span_ns"] else 0
        print(f"FIGURE gemm: busy {100 * busy:.1f}% of span; idle by cause {gemm['idle_by_cause_ns']}")
        if busy < 0.9:
            failures.append(f"gemm: busy {100 * busy:.1f}% of the span, want over 90%")
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--workload", "profile",
                            "--steps", "20", "--json", os.path.join(out, "torch_mlp.json")],
                           capture_output=True, text=True, timeout=240)
        if p.returncode != 0:
            failures.append(f"torch.profiler run: exit {p.returncode}: {p.stderr[-300:]}")
    except (RuntimeError, subprocess.SubprocessError) as e:
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
