#!/usr/bin/env python3
"""The PyTorch workload of bench/overhead.py: small ops, then large GEMMs.

  torch_ops.py [--ops N] [--gemms N] [--repeats R] [--profiler] --out FILE

1. Small ops (launch-bound): after a warm-up, N/2 iterations of `y = x * 2 + 1`
   on a 64 Ki-element CUDA tensor (two elementwise kernels each), timed from
   the first launch to the final synchronize; repeated R times in-process, so
   the figure is the median of R loops of one process.
2. Large GEMMs (compute-bound): N bf16 8192 x 8192 matmuls (about 1.1 TFLOP
   each), timed the same way, median of R.

With --profiler, both timed parts run inside torch.profiler with CUDA
activities only (what torch.profiler costs when it records the GPU); the
profiler's post-processing after the loops is timed apart. Writes one JSON
object to FILE: us_per_op, ms_per_gemm, their per-repeat values, the kernel
count torch.profiler saw (with --profiler), and the post-processing time.
cpu_us_per_op is the main thread's CPU time per op over the same loops (the
wall time less waiting: what profilers' callbacks add on that thread);
cpu_calibration_ns_before/_after the process's CPU speed (cpu_calibration_ns).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time


def cpu_calibration_ns(reps: int = 5) -> int:
    """ns for a fixed amount of interpreter work (median of reps): how fast this
    process's CPU is now. The small ops' cost is mostly Python and PyTorch's
    dispatcher on the host, and that speed moves from one process to the next
    by more than the overheads measured (bench/overhead.py divides by it)."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        acc, d = 0, {}
        for i in range(100_000):
            acc = (acc * 31 + i) & 0xFFFFFFFF
            d[i & 1023] = acc
        times.append(time.perf_counter_ns() - t0)
    return sorted(times)[len(times) // 2]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--ops", type=int, default=40000)
    p.add_argument("--gemms", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--profiler", action="store_true")
    p.add_argument("--out", required=True)
    args = p.parse_args()

    calibration_before = cpu_calibration_ns()  # before CUDA starts (and a profiler with it)
    import torch

    x = torch.ones(1 << 16, device="cuda")
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(200):  # warm-up: allocator, kernels' modules, cuBLAS handles
        y = x * 2 + 1
    for _ in range(3):
        c = a @ b
    torch.cuda.synchronize()

    prof = None
    if args.profiler:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CUDA])
    iters = max(1, args.ops // 2)
    op_us, op_cpu_us, gemm_ms = [], [], []
    with prof if prof is not None else contextlib.nullcontext():
        for _ in range(args.repeats):
            c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
            for _ in range(iters):
                y = x * 2 + 1
            torch.cuda.synchronize()
            op_us.append((time.perf_counter_ns() - t0) / 1e3 / (2 * iters))
            op_cpu_us.append((time.thread_time_ns() - c0) / 1e3 / (2 * iters))
        for _ in range(args.repeats):
            t0 = time.perf_counter_ns()
            for _ in range(args.gemms):
                c = a @ b
            torch.cuda.synchronize()
            gemm_ms.append((time.perf_counter_ns() - t0) / 1e6 / args.gemms)
        t_stop = time.perf_counter_ns()
    post_s = (time.perf_counter_ns() - t_stop) / 1e9
    calibration_after = cpu_calibration_ns()
    result = {"us_per_op": statistics.median(op_us), "us_per_op_runs": op_us,
              "cpu_us_per_op": statistics.median(op_cpu_us),
              "cpu_calibration_ns_before": calibration_before,
              "cpu_calibration_ns_after": calibration_after,
              "ms_per_gemm": statistics.median(gemm_ms), "ms_per_gemm_runs": gemm_ms,
              "ok": bool((y == 3).all().item()) and bool(torch.isfinite(c).all().item())}
    if prof is not None:
        t0 = time.perf_counter_ns()
        events = prof.events()
        result["profiler_kernels"] = sum(
            1 for e in events if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA)
        result["profiler_stop_s"] = round(post_s, 3)
        result["profiler_events_s"] = round((time.perf_counter_ns() - t0) / 1e9, 3)
    with open(args.out, "w") as f:
        json.dump(result, f)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
