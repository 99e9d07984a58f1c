#!/usr/bin/env python3
"""Capture ranges on the GPU (issue 20, point 1): execute, then validate
against truth the program knows or that bare runs establish.

  1. The per-step kernels of a PyTorch loop, from two full traces of the same
     loop with 30 and 20 steps (their difference is 10 steps' kernels; each
     step runs the same ops on the same shapes).
  2. `--capture-range cudaProfilerApi`, cudaProfilerStart before step 10 and
     cudaProfilerStop before step 20: one chunk whose kernels are exactly 10
     steps' (every name, every count), chunk 0 gone, `info` naming the start
     and the stop.
  3. `--capture-range nvtx:step --capture-range-end repeat:3`, every step in
     an NVTX range "step": exactly 3 chunks, each holding exactly one step's
     kernels.
  4. `--delay 2s --duration 1s` on ct_launch_storm launching for 4 s: one
     chunk whose kernels span 1 s +- 50 ms.
  5. `--capture-range nvtx:nosuch`: exit status the program's, no trace
     file, one `cutrace:` line saying the range never opened.
  6. API records (issue 20's bug: captured chunks held none, so idle-by-cause
     was all `unknown`): in the cudaProfilerApi chunk and in each nvtx chunk,
     every kernel has its launch call (an API record of the same correlation
     id) and no idle time is `unknown`; continuous mode with
     CUTRACE_KINDS=kernel,runtime on ct_launch_storm: every window's chunk
     has launch calls for at least 99% of its kernels.

  capture.py --cutrace BIN/cutrace --bin-dir BIN --work DIR [--json-out F]
  capture.py --workload plain|profiler|nvtx --steps N   (the PyTorch loop)

Exit 0 pass, 1 fail, 77 skipped (no GPU or no PyTorch).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import validate as v  # noqa: E402
from checklist import check, checks  # noqa: E402
from torch_operands import gpu_operands  # noqa: E402


def workload(kind, steps):
    torch, a, b, c = gpu_operands()

    def step():
        y = torch.relu(a @ b + c)
        return y.sum()

    # Warm-up outside the counted steps: cuBLAS and the caching allocator
    # start here, so every step below launches the same kernels.
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    for i in range(steps):
        if kind == "profiler" and i == 10:
            torch.cuda.profiler.start()
        if kind == "profiler" and i == 20:
            torch.cuda.profiler.stop()
        if kind == "nvtx":
            torch.cuda.nvtx.range_push("step")
        step()
        if kind == "nvtx":
            torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()


def run(cutrace, out, args, program, timeout=240):
    out.mkdir(parents=True, exist_ok=True)
    cmd = [cutrace, "run", "--output", str(out) + "/", "--no-summary", *args, "--", *program]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=v.clean_env())


def torch_program(kind, steps):
    return [sys.executable, os.path.abspath(__file__), "--workload", kind, "--steps", str(steps)]


def cli_json(cutrace, *args):
    r = subprocess.run([cutrace, *args, "--format", "json"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"cutrace {' '.join(args)}: {r.stderr.strip()[-300:]}")
    return json.loads(r.stdout)


def kernels_of(cutrace, trace):
    rows = cli_json(cutrace, "kernels", str(trace)).get("kernels", [])
    return Counter({r["name"]: int(r["count"]) for r in rows})


def info_of(cutrace, trace):
    return cli_json(cutrace, "info", str(trace))["files"][0]


def traces(d):
    return sorted(Path(d).glob("*.trace"))


def launch_calls(cutrace, trace, work):
    """(kernels, of them with an API record of their correlation id, API records)."""
    out = work / (trace.stem + "-csv")
    subprocess.run(["rm", "-rf", str(out)])
    r = subprocess.run([cutrace, "export", "--format", "csv", "-o", str(out), str(trace)],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"cutrace export {trace.name}: {r.stderr.strip()[-300:]}")

    def rows(name):
        p = out / name
        return list(csv.DictReader(open(p))) if p.exists() else []

    api = rows("api.csv")
    calls = {row["correlation"] for row in api}
    kernels = [row["correlation"] for row in rows("kernels.csv")]
    return len(kernels), sum(1 for c in kernels if c in calls), len(api)


def check_launch_calls(cutrace, trace, work, what, figures):
    """Issue 20: every kernel of a captured chunk has its launch call, and no
    idle time of the chunk is `unknown` (the cause needs the launch calls)."""
    n, matched, api = launch_calls(cutrace, trace, work)
    figures.setdefault("api_records", {})[trace.name] = api
    check(f"{what}: API records, every kernel's launch call among them",
          n > 0 and matched == n, f"{api} API records; {matched} of {n} kernels have their launch call")
    dev = cli_json(cutrace, "overlap", str(trace))["devices"][0]
    unknown = dev.get("idle_by_cause_ns", {}).get("unknown", -1)
    causes = {c: t for c, t in dev.get("idle_by_cause_ns", {}).items() if t}
    check(f"{what}: no idle time of unknown cause", unknown == 0, f"idle by cause (ns) {causes}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cutrace", default=str(HERE.parents[1] / "build" / "bin" / "cutrace"))
    p.add_argument("--bin-dir", default=None)
    p.add_argument("--work", default="/tmp/cutrace-validate/capture")
    p.add_argument("--json-out", default=None)
    p.add_argument("--workload", choices=["plain", "profiler", "nvtx"], default=None)
    p.add_argument("--steps", type=int, default=30)
    args = p.parse_args()
    if args.workload:
        workload(args.workload, args.steps)
        return 0
    if not v.has_gpu():
        print("skipped: no GPU")
        return v.SKIP
    cutrace = str(Path(args.cutrace).resolve())
    storm = str(Path(args.bin_dir or Path(cutrace).parent) / "ct_launch_storm")
    work = Path(args.work)
    subprocess.run(["rm", "-rf", str(work)])
    work.mkdir(parents=True)
    figures = {}

    # 1. Ten steps' kernels, from two full traces.
    base = {}
    for steps in (30, 20):
        r = run(cutrace, work / f"plain-{steps}", [], torch_program("plain", steps))
        if r.returncode == 77:
            print("skipped: no PyTorch with CUDA")
            return v.SKIP
        files = traces(work / f"plain-{steps}")
        if not check(f"full trace of {steps} steps", r.returncode == 0 and len(files) == 1,
                     f"exit {r.returncode}, {len(files)} files; {r.stderr.strip()[-300:]}"):
            return finish(figures, args.json_out)
        base[steps] = kernels_of(cutrace, files[0])
    ten = base[30] - base[20]
    per_step = Counter({k: n // 10 for k, n in ten.items()})
    figures["kernels_per_step"] = sum(per_step.values())
    if not check("the loop's steps launch the same kernels (10 steps' counts divide by 10)",
                 ten and all(n % 10 == 0 for n in ten.values()) and base[20] - base[30] == Counter(),
                 f"{len(ten)} names, counts {sorted(ten.values())}"):
        return finish(figures, args.json_out)
    print(f"FIGURE capture: {figures['kernels_per_step']} kernels per step ({len(per_step)} names)", flush=True)

    # 2. cudaProfilerStart at step 10, cudaProfilerStop at step 20.
    d = work / "profiler"
    r = run(cutrace, d, ["--capture-range", "cudaProfilerApi"], torch_program("profiler", 30))
    files = traces(d)
    check("cudaProfilerApi: exit 0, one chunk, chunk 0 gone",
          r.returncode == 0 and len(files) == 1 and files[0].name.endswith(".1.trace"),
          f"exit {r.returncode}, files {[f.name for f in files]}; {r.stderr.strip()[-300:]}")
    if files:
        got = kernels_of(cutrace, files[0])
        want = Counter({k: n * 10 for k, n in per_step.items()})
        figures["profiler_kernels"] = sum(got.values())
        check("cudaProfilerApi: exactly steps 10-19's kernels", got == want,
              f"{sum(got.values())} kernels, want {sum(want.values())}; extra {dict(got - want)}, "
              f"missing {dict(want - got)}")
        info = info_of(cutrace, files[0])
        opened = info["header"].get("chunk_reason", "")
        check("cudaProfilerApi: info says what opened and closed the chunk",
              "cudaProfilerStart" in opened and "cudaProfilerStop" in info.get("end_reason", ""),
              f"started by {opened!r}, ended by {info.get('end_reason')!r}")
        check_launch_calls(cutrace, files[0], work, "cudaProfilerApi", figures)
        print(f"FIGURE capture: cudaProfilerApi chunk {figures['api_records'][files[0].name]} API records",
              flush=True)

    # 3. nvtx:step, repeat:3.
    d = work / "nvtx"
    r = run(cutrace, d, ["--capture-range", "nvtx:step", "--capture-range-end", "repeat:3"],
            torch_program("nvtx", 30))
    files = traces(d)
    figures["nvtx_chunks"] = len(files)
    check("nvtx:step repeat:3: exit 0, 3 chunks", r.returncode == 0 and len(files) == 3,
          f"exit {r.returncode}, files {[f.name for f in files]}; {r.stderr.strip()[-300:]}")
    for f in files:
        got = kernels_of(cutrace, f)
        check(f"nvtx:step repeat:3: {f.name} holds one step's kernels", got == per_step,
              f"{sum(got.values())} kernels; extra {dict(got - per_step)}, missing {dict(per_step - got)}")
        opened = info_of(cutrace, f)["header"].get("chunk_reason", "")
        check(f"nvtx:step repeat:3: {f.name} opened by the step's push", "nvtx push 'step'" in opened, opened)
        check_launch_calls(cutrace, f, work, f"nvtx:step repeat:3: {f.name}", figures)

    # 4. --delay 2s --duration 1s on a launch storm of 4 s.
    d = work / "timed"
    r = run(cutrace, d, ["--delay", "2s", "--duration", "1s"],
            [storm, "--n", "1000", "--min-ms", "4000"])
    files = traces(d)
    if check("delay 2s duration 1s: exit 0, one chunk", r.returncode == 0 and len(files) == 1,
             f"exit {r.returncode}, files {[f.name for f in files]}; {r.stderr.strip()[-300:]}"):
        span = cli_json(cutrace, "overlap", str(files[0]))["devices"][0]["span_ns"]
        figures["timed_window_ms"] = round(span / 1e6, 2)
        print(f"FIGURE capture: --delay 2s --duration 1s window {span / 1e6:.2f} ms of kernels", flush=True)
        check("delay 2s duration 1s: the kernels span 1 s +- 50 ms", abs(span - 1e9) <= 50e6,
              f"{span / 1e6:.2f} ms")
        info = info_of(cutrace, files[0])
        check("delay 2s duration 1s: info says delay and duration",
              "delay 2000ms elapsed" in info["header"].get("chunk_reason", "") and
              "duration 1000ms elapsed" in info.get("end_reason", ""),
              f"{info['header'].get('chunk_reason')!r} / {info.get('end_reason')!r}")

    # 5. A range the program never opens.
    d = work / "never"
    r = run(cutrace, d, ["--capture-range", "nvtx:nosuch"], torch_program("nvtx", 5))
    lines = [l for l in r.stderr.splitlines() if "never opened" in l]
    check("never opened: exit 0, no trace, one line saying so",
          r.returncode == 0 and not traces(d) and len(lines) == 1 and "'nosuch'" in lines[0],
          f"exit {r.returncode}, files {[f.name for f in traces(d)]}, stderr {r.stderr.strip()[-300:]!r}")

    # 6. Continuous mode's windows with API records asked for: the same
    # switching (Session::SetActivity) as a capture range's.
    d = work / "continuous-api"
    d.mkdir(parents=True, exist_ok=True)
    env = v.clean_env()
    env.update({"CUTRACE_MODE": "continuous", "CUTRACE_WINDOW": "200ms", "CUTRACE_PERIOD": "700ms",
                "CUTRACE_KINDS": "kernel,runtime"})
    r = subprocess.run([cutrace, "run", "--output", str(d) + "/", "--no-summary", "--", storm, "--n", "1000",
                        "--min-ms", "2500"], capture_output=True, text=True, timeout=120, env=env)
    windows = []
    for f in traces(d):
        n, matched, api = launch_calls(cutrace, f, work)
        if n > 0:
            windows.append((f.name, n, matched, api))
    figures["continuous_api_windows"] = [list(w) for w in windows]
    print(f"FIGURE capture: continuous CUTRACE_KINDS=kernel,runtime windows (file, kernels, with launch "
          f"call, API records) {windows}", flush=True)
    check("continuous, CUTRACE_KINDS=kernel,runtime: exit 0, at least 2 windows with kernels",
          r.returncode == 0 and len(windows) >= 2, f"exit {r.returncode}, {windows}; {r.stderr.strip()[-300:]}")
    for name, n, matched, api in windows:
        check(f"continuous, CUTRACE_KINDS=kernel,runtime: {name} has launch calls for >= 99% of its kernels",
              matched >= 0.99 * n, f"{matched} of {n} kernels, {api} API records")
    return finish(figures, args.json_out)


def finish(figures, json_out):
    failed = [c for c in checks if c["verdict"] == "FAIL"]
    if json_out:
        Path(json_out).write_text(json.dumps({"case": "capture", "figures": figures, "checks": checks}, indent=1))
    print(f"capture: {len(checks) - len(failed)} of {len(checks)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
