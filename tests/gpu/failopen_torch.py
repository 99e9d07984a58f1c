#!/usr/bin/env python3
"""A PyTorch program that profiles itself with torch.profiler (for failopen.py).

  failopen_torch.py profiler-first|cuda-first [--iters N]

profiler-first: torch.profiler (CUDA activities) is entered before the program
touches CUDA, so Kineto meets CUPTI before or while cutrace starts.
cuda-first: the program uses CUDA first (cutrace, if injected, is already
subscribed), then profiles. Either way it prints, deterministically, how many
`mul` kernels torch.profiler saw on the GPU: a tracer that takes CUPTI away from
torch.profiler changes that line. Exit 0 when the numbers are right, 1 if not.
"""

import sys

import torch
from torch.profiler import ProfilerActivity, profile


def main() -> int:
    order = sys.argv[1] if len(sys.argv) > 1 else "profiler-first"
    iters = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--iters" else 50
    if order not in ("profiler-first", "cuda-first"):
        print("usage: failopen_torch.py profiler-first|cuda-first [--iters N]", file=sys.stderr)
        return 2
    x = None
    if order == "cuda-first":
        x = torch.ones(1 << 12, device="cuda")
        torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        if x is None:
            x = torch.ones(1 << 12, device="cuda")
        for _ in range(iters):
            y = x * 3
        torch.cuda.synchronize()
    gpu_mul = sum(1 for e in prof.events()
                  if e.device_type == torch.autograd.DeviceType.CUDA and "mul" in e.name.lower())
    ok = bool((y == 3).all().item())
    print(f"{order}: {iters} multiplications, result {'ok' if ok else 'WRONG'}")
    print(f"torch.profiler saw {gpu_mul} mul kernels on the GPU")
    return 0 if ok and gpu_mul == iters else 1


if __name__ == "__main__":
    sys.exit(main())
