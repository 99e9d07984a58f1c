#!/usr/bin/env python3
"""Writes a synthetic torch.profiler (Kineto) trace JSON of about N events, for
timing `cutrace import` on large inputs (bench/import_speed.sh).

    gen_kineto.py N OUT.json [--gzip] [--rank R] [--base-ns B]

Per step of 10 events: a cpu_op, a user_annotation, three cuda_runtime
launches with their kernels (grid/block/registers in args), a memcpy and its
runtime call, and a process_name metadata event every 1000 steps. Shaped
like Kineto's output (pid/tid, args.device/stream/correlation, fractional
microsecond timestamps relative to baseTimeNanoseconds); not a real run.
"""
import argparse
import gzip
import random


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("events", type=int)
    p.add_argument("out")
    p.add_argument("--gzip", action="store_true")
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--base-ns", type=int, default=1_696_000_000_000_000_000)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    pid = 4242 + a.rank
    opener = gzip.open if a.gzip else open
    with opener(a.out, "wt") as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "NVIDIA H200", '
                '"totalGlobalMem": 150000000000, "computeMajor": 9, "computeMinor": 0, '
                '"maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, '
                '"regsPerBlock": 65536, "warpSize": 32, "numSms": 132}],\n')
        f.write('  "cupti_version": 24, "cuda_runtime_version": 12080, "cuda_driver_version": 12080,\n')
        f.write('  "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": 8},\n' % a.rank)
        f.write('  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": %d,\n  "traceEvents": [\n'
                % a.base_ns)
        t = 1000.0
        corr = 1
        first = True
        steps = max(1, a.events // 10)
        names = ["void gemm_kernel<128, 64>(float const*, float*)", "elementwise_add_kernel",
                 "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "softmax_forward<float>"]

        def emit(s):
            nonlocal first
            f.write(s if first else ",\n" + s)
            first = False

        for step in range(steps):
            if step % 1000 == 0:
                emit('  {"name": "process_name", "ph": "M", "ts": 0, "pid": %d, "tid": 0, '
                     '"args": {"name": "python3 train.py"}}' % pid)
            emit('  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": %d, "tid": %d, '
                 '"ts": %.3f, "dur": %.3f, "args": {"External id": %d, "Sequence number": %d}}'
                 % (pid, pid, t, 40.0, step, step))
            emit('  {"ph": "X", "cat": "user_annotation", "name": "step#%d", "pid": %d, '
                 '"tid": %d, "ts": %.3f, "dur": %.3f, "args": {"External id": %d}}'
                 % (step, pid, pid, t, 45.0, step))
            for k in range(3):
                launch = t + 1 + k * 10
                emit('  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": %d, '
                     '"tid": %d, "ts": %.3f, "dur": %.3f, "args": {"cbid": 211, '
                     '"correlation": %d, "External id": %d}}' % (pid, pid, launch, 4.25, corr, step))
                kstart = launch + 6 + rng.random()
                emit('  {"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, '
                     '"ts": %.3f, "dur": %.3f, "args": {"queued": 0, "device": 0, "context": 1, '
                     '"stream": 7, "correlation": %d, "registers per thread": 128, '
                     '"shared memory": 49152, "blocks per SM": 1.5, "warps per SM": 12, '
                     '"grid": [132, 2, 1], "block": [256, 1, 1], '
                     '"est. achieved occupancy %%": 25}}'
                     % (names[(step + k) % 4], kstart, 5.0 + rng.random() * 3, corr))
                corr += 1
            emit('  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": %d, '
                 '"tid": %d, "ts": %.3f, "dur": %.3f, "args": {"cbid": 41, "correlation": %d}}'
                 % (pid, pid, t + 35, 3.0, corr))
            emit('  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", '
                 '"pid": 0, "tid": 7, "ts": %.3f, "dur": %.3f, "args": {"device": 0, '
                 '"context": 1, "stream": 7, "correlation": %d, "bytes": 4096, '
                 '"memory bandwidth (GB/s)": 1.2}}' % (t + 40, 2.5, corr))
            corr += 1
            t += 50.0
        f.write('\n  ],\n  "traceName": "gen_kineto"\n}\n')


if __name__ == "__main__":
    main()
