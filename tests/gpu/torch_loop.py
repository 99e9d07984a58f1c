#!/usr/bin/env python3
"""A PyTorch program profiled by `cutrace run`, and its validator.

  torch_loop.py [--cutrace BIN] [--iters N] [--work DIR] [--timeout S] [--json-out F]
      runs the workload bare and under `cutrace run`, then checks the trace:
      exit status 0 both times, kernels >= the ops the loop launched, the NVTX
      ranges present with their exact counts, clean shutdown, zero drops. Also
      prints us/op bare and traced (one run each: a figure, not a check).
  torch_loop.py --workload [--iters N] [--truth FILE]
      the program itself: after a warm-up, N iterations of `y = x * 2 + 1` on a
      CUDA tensor (two elementwise kernels each), each inside a torch.cuda.nvtx
      range "iter", all inside one range "loop".

Exit 0 pass, 1 fail, 77 skipped (no GPU, or no PyTorch). python3 stdlib only
(the workload itself imports torch).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

WARMUP = 20


def workload(iters: int, truth_path: str | None) -> int:
    import torch

    x = torch.ones(1 << 16, device="cuda")
    for _ in range(WARMUP):
        y = x * 2 + 1
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    torch.cuda.nvtx.range_push("loop")
    for _ in range(iters):
        torch.cuda.nvtx.range_push("iter")
        y = x * 2 + 1
        torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    elapsed = time.perf_counter_ns() - t0
    ok = bool((y == 3).all().item())
    if truth_path:
        Path(truth_path).write_text(json.dumps({
            "app": "torch_loop", "pid": os.getpid(), "iters": iters, "warmup": WARMUP,
            # Each iteration launches two elementwise kernels (mul, add).
            "min_kernels": 2 * (iters + WARMUP), "ops_in_loop": 2 * iters,
            "us_per_op": elapsed / 1e3 / (2 * iters),
            "nvtx": [{"domain": "default", "name": "loop", "depth": 0, "count": 1,
                      "gpu_ops": 2 * iters},
                     {"domain": "default", "name": "iter", "depth": 1, "count": iters,
                      "gpu_ops": 2 * iters}],
        }))
    print(f"torch_loop: {iters} iterations, result {'ok' if ok else 'WRONG'}", flush=True)
    return 0 if ok else 1


def validate(args) -> int:
    import cutrace_checks as cc
    import validate as v

    if not v.has_gpu():
        print("skipped: no GPU")
        return v.SKIP
    v.install_stop_handlers()
    probe = v.run([sys.executable, "-c", "import torch; assert torch.cuda.is_available()"],
                  v.clean_env(), 120)
    if probe.status != 0:
        print(f"skipped: no PyTorch with CUDA ({probe.stderr.strip().splitlines()[-1:]})")
        return v.SKIP

    rep = v.Reporter()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    figures: dict = {}
    me = [sys.executable, str(Path(__file__).resolve()), "--workload", "--iters", str(args.iters)]

    bare = v.run([*me, "--truth", str(work / "bare-truth.json")], v.clean_env(), args.timeout)
    rep.add("bare", cc.Check("exit status", bare.status == 0,
                             f"{bare.status}; stderr {bare.stderr.strip()[-200:]!r}"
                             if bare.status else "0"))
    out_dir = work / "traces"
    for old in out_dir.glob("*.trace"):
        old.unlink()
    out_dir.mkdir(exist_ok=True)
    truth_path = work / "truth.json"
    r = v.run([args.cutrace, "run", "--output", str(out_dir), "--", *me, "--truth",
               str(truth_path)], v.clean_env(), args.timeout)
    (work / "stdout.txt").write_text(r.stdout)
    (work / "stderr.txt").write_text(r.stderr)
    rep.add("run", cc.Check("exit status", r.status == 0 and not r.timed_out,
                            f"{r.status}" + (" (timed out)" if r.timed_out else "") +
                            (f"; stderr {r.stderr.strip()[-300:]!r}" if r.status else "")))
    rep.add("run", cc.Check("stdout", r.stdout == bare.stdout,
                            f"traced {r.stdout.strip()[:120]!r}, bare {bare.stdout.strip()[:120]!r}"))
    try:
        truth = json.loads(truth_path.read_text())
        bare_truth = json.loads((work / "bare-truth.json").read_text())
    except (OSError, json.JSONDecodeError) as e:
        rep.fail("run", "truth", str(e))
        return finish(rep, figures, args)
    figures["us_per_op_bare"] = round(bare_truth["us_per_op"], 3)
    figures["us_per_op_traced"] = round(truth["us_per_op"], 3)
    figures["ratio"] = round(truth["us_per_op"] / bare_truth["us_per_op"], 3)
    print(f"FIGURE torch loop: {figures['us_per_op_bare']} us/op bare, "
          f"{figures['us_per_op_traced']} us/op traced, ratio {figures['ratio']} "
          f"(one run each)", flush=True)

    main = None
    for t in sorted(out_dir.glob("*.trace")):
        try:
            info = v.cutrace_json(args.cutrace, "info", t)
        except RuntimeError as e:
            rep.fail("run", f"info {t.name}", str(e))
            continue
        if cc.trace_pid(info) == truth["pid"]:
            main = (t, info)
    if main is None:
        rep.fail("run", "trace written", f"no trace for pid {truth['pid']} in {out_dir}")
        return finish(rep, figures, args)
    trace, info = main
    figures["trace_bytes"] = trace.stat().st_size
    for c in cc.check_info(info):
        rep.add("run", c)
    kernels = cc.info_events(info).get("kernels", 0)
    figures["kernels"] = kernels
    rep.add("run", cc.Check("kernels >= ops launched", kernels >= truth["min_kernels"],
                            f"{kernels} (at least {truth['min_kernels']})"))
    try:
        nvtx = v.cutrace_json(args.cutrace, "nvtx", trace)
    except RuntimeError as e:
        rep.fail("run", "nvtx report", str(e))
        return finish(rep, figures, args)
    # PyTorch may add ranges of its own: the loop's rows must be there, exact;
    # gpu_ops at least the kernels the loop launched.
    for c in cc.check_nvtx(truth["nvtx"], nvtx, exact_set=False, gpu_ops="at_least"):
        rep.add("run", c)
    return finish(rep, figures, args)


def finish(rep, figures: dict, args) -> int:
    verdict = "FAIL" if rep.failed else "PASS"
    print(f"{verdict} torch_loop: {len(rep.checks)} checks, {rep.failed} failed", flush=True)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(
            {"case": "torch_loop", "verdict": verdict, "figures": figures, "checks": rep.checks},
            indent=1))
    return 1 if rep.failed else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", action="store_true", help="run the PyTorch loop itself")
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--truth", default=None)
    p.add_argument("--cutrace", default=str(HERE.parents[1] / "build" / "bin" / "cutrace"))
    p.add_argument("--work", default="/tmp/cutrace-validate/torch_loop")
    p.add_argument("--timeout", type=int, default=240, help="seconds per run")
    p.add_argument("--json-out", default=None)
    args = p.parse_args()
    if args.workload:
        return workload(args.iters, args.truth)
    args.cutrace = str(Path(args.cutrace).resolve())
    return validate(args)


if __name__ == "__main__":
    sys.exit(main())
