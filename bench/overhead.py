#!/usr/bin/env python3
"""cutrace's overhead, measured side by side with its peers (issue 7).

  overhead.py --cutrace BIN --bin-dir DIR --floor LIB [--rounds 3] [--parts storm,options,
              continuous,torch] [--deadline-s S] [--json-out F]

Every part runs its variants interleaved for --rounds rounds, each round
starting one variant later (A B C, B C A, C A B, ...), so drift and a slow
place in the round hit every variant alike, and reports each variant's median
and spread. Overheads are differences to the bare run of the same part; the
ratios are of those overheads (cutrace's over the floor's, over torch.profiler's).

 storm       ct_launch_storm (--n tiny kernels on one stream, host us/launch
             from its own clock): bare; the floor (bench/cupti_floor.cc, a
             CUPTI subscriber enabling cutrace's kinds that only counts
             records); cutrace trace (default), summary, and continuous mode
             between windows (a 10 ms window at start, then none for 60 s).
 options     the storm under cutrace with one CUTRACE_* option changed each:
             what each option costs (buffer size and count, per-thread
             buffers, the timestamp callback, API records, sync records,
             latency timestamps, flush period).
 continuous  continuous mode's average: a long storm (--long-n launches,
             about 4 s) with a window 1/60 of the period (the issue's 1 s
             every 60 s, scaled down to 16 ms every 1 s so the loop holds
             several windows; toggling then happens 60x as often as at 1 s
             every 60 s, a pessimistic scaling), bare vs continuous, and the
             share of the loop's launches the windows traced.
 torch       bench/torch_ops.py: PyTorch small ops (us/op) and bf16 8192^3
             GEMMs (ms each), bare; floor; cutrace trace, summary, continuous
             (between windows); torch.profiler (CUDA activities) in-process.
 capture     (opt-in) the storm under a capture range it never reaches
             (cudaProfilerApi, nvtx:step, a delay longer than the run): the
             uncaptured stretch's cost against two bare variants, at least 5
             rounds (issue 20).
 torch_sync  (opt-in) the PyTorch small ops bare, under cutrace's defaults, under
             CUTRACE_KINDS=all (sync records on) and under torch.profiler.
 kinds       (opt-in) CUPTI's OVERHEAD records on and off, under the floor and
             under cutrace, on the storm and on the PyTorch small ops (with
             torch.profiler beside them).
 breakdown   where CUPTI's cost goes (opt-in): the storm and the PyTorch small
             ops under the floor narrowed by CUTRACE_FLOOR_KINDS — attached
             with nothing enabled; kernels and API records; those plus each
             other kind alone (overhead, sync, nvtx, memcpy and memset);
             the floor as cutrace's defaults (no sync) — beside bare, cutrace
             trace, cutrace with sync records (CUTRACE_KINDS=all) and
             (PyTorch) torch.profiler.

The storm and continuous parts also report the launching thread's CPU time,
the same per unit of the process's CPU speed, and, where the CPU's
instruction counter is exposed to the process (perf_event_open; not on the
H200 machines, 2026-12-02, nor this project's VMs), its user-space
instructions per launch, which the host's speed does not move.

Targets (../shared/DESIGN.md): trace overhead <= 1.10 x the floor's and
<= 0.5 x torch.profiler's; continuous < 1% on average; GEMMs within noise.
A benchmark, not a test: it prints figures (FIGURE lines and one table) and
exits 0 unless a run failed; 77 without a GPU. python3 stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SKIP = 77
WARMUP = 100  # ct_launch_storm's warm-up launches (its --warmup default)
CUPTI_DIRS = ("/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/cuda/extras/CUPTI/lib64")



def has_gpu() -> bool:
    if not Path("/dev/nvidia0").exists():
        return False
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def find_cupti() -> str:
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d] + list(CUPTI_DIRS)
    for d in dirs:
        p = Path(d) / "libcupti.so.13"
        if p.exists():
            return str(p)
    return ""


def clean_env() -> dict[str, str]:
    """The environment without anything of cutrace's or CUDA injection's."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("CUTRACE_", "CUDA_INJECTION64", "NVTX_INJECTION64")) and k != "LD_PRELOAD"}


def communicate(proc: subprocess.Popen, timeout: float, what: str) -> tuple[str, str]:
    """proc's stdout and stderr once it ends; past `timeout` seconds its process
    group (start_new_session) is killed and RuntimeError names `what`."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise RuntimeError(f"{what} timed out after {timeout:.0f}s")


def run(cmd: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    out, err = communicate(proc, timeout, f"{' '.join(cmd[:3])} ...")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


class Variant:
    """One way of running the program: a name, an environment and a wrapper."""

    def __init__(self, name: str, kind: str, env: dict[str, str] | None = None,
                 mode: str | None = None):
        self.name, self.kind, self.env, self.mode = name, kind, env or {}, mode
        self.values: list[float] = []
        self.extra: list[dict] = []


class Bench:
    def __init__(self, args):
        self.args = args
        self.cutrace = str(Path(args.cutrace).resolve())
        self.floor = str(Path(args.floor).resolve()) if getattr(args, "floor", None) else ""
        # after_run(variant, completed process, output folder, result): more
        # figures from a run before its folder goes (bench/continuous_probe.py).
        self.after_run = None
        self.cupti = find_cupti()
        self.work = Path(args.work)
        self.work.mkdir(parents=True, exist_ok=True)
        self.figures: dict = {}
        self.deadline = time.monotonic() + args.deadline_s if args.deadline_s > 0 else 0.0

    def command(self, v: Variant, app_cmd: list[str], out: Path) -> tuple[list[str], dict]:
        env = clean_env()
        env.update(v.env)
        if v.kind == "floor":
            env["CUDA_INJECTION64_PATH"] = self.floor
            if self.cupti:  # NVTX reaches CUPTI the way `cutrace run` arranges it
                env["NVTX_INJECTION64_PATH"] = self.cupti
            env["CUTRACE_FLOOR_REPORT"] = str(out / "floor.json")
            return app_cmd, env
        if v.kind == "cutrace":
            cmd = [self.cutrace, "run", "--no-summary", "--output", str(out)]
            if v.mode:
                cmd += ["--mode", v.mode]
            return cmd + ["--", *app_cmd], env
        return app_cmd, env  # bare, and torch.profiler (a flag of the workload)

    def one(self, v: Variant, app_cmd: list[str], result: Path, timeout: float) -> dict:
        out = self.work / "runs" / v.name.replace(" ", "_")
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        result.unlink(missing_ok=True)
        cmd, env = self.command(v, app_cmd, out)
        if self.args.cpus:  # the same cores for every variant: less migration noise
            cmd = ["taskset", "-c", self.args.cpus, *cmd]
        r = run(cmd, env, timeout)
        if r.returncode != 0 or not result.exists():
            raise RuntimeError(f"{v.name}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
        data = json.loads(result.read_text())
        floor = out / "floor.json"
        if floor.exists():
            data["floor"] = json.loads(floor.read_text())
        traces = sorted(out.glob("*.trace"))
        data["trace_bytes"] = sum(t.stat().st_size for t in traces)
        if traces and v.kind == "cutrace":
            # The writer thread's evidence: queue high-water mark and drops; and
            # the kernels of every chunk (continuous mode: of every window).
            info = run([self.cutrace, "info", "--format", "json", *map(str, traces)], clean_env(), 60)
            if info.returncode == 0:
                files = json.loads(info.stdout)["files"]
                stats = files[-1].get("statistics") or {}
                data["stats"] = {k: int(stats.get(k, 0) or 0) for k in (
                    "queue_peak_batches", "queue_capacity_batches", "records_dropped_queue_full",
                    "records_dropped_by_cupti", "kernels")}
                data["kernels_traced"] = sum(int((f.get("statistics") or {}).get("kernels", 0) or 0)
                                             for f in files)
                data["chunks"] = len(files)
        if self.after_run:
            self.after_run(v, r, out, data)
        shutil.rmtree(out, ignore_errors=True)
        return data

    # -- parts -------------------------------------------------------------

    def interleave(self, variants: list[Variant], app_cmd: list[str], result: Path,
                   pick, timeout: float, rounds: int | None = None) -> None:
        """Runs the rounds; with --deadline-s, stops before a round that would end
        past the deadline (judged by the slowest round so far), keeping the rounds
        done, so a part that cannot fit still reports what it measured."""
        if self.deadline and time.monotonic() > self.deadline:
            raise RuntimeError("not run: the deadline (--deadline-s) had passed")
        self.one(variants[0], app_cmd, result, timeout)  # warm-up: driver load, page cache
        wanted = rounds or self.args.rounds
        slowest = 0.0
        for r in range(wanted):
            if r > 0 and self.deadline and time.monotonic() + slowest > self.deadline:
                print(f"  deadline: {r} of {wanted} rounds done, stopping here", flush=True)
                self.figures.setdefault("rounds_cut", []).append(f"{variants[0].name}..: {r}/{wanted}")
                break
            t = time.monotonic()
            # Each round starts one variant later (A B C, B C A, C A B, ...): a
            # place in the round that is slower (on the H200 the second run of
            # a round was ~5% slower than the first, both bare) then costs
            # every variant alike instead of always the same one.
            k = r % len(variants)
            for v in variants[k:] + variants[:k]:
                data = self.one(v, app_cmd, result, timeout)
                v.values.append(pick(data))
                v.extra.append(data)
            slowest = max(slowest, time.monotonic() - t)
            print(f"  round {r + 1}/{wanted} ({slowest:.0f} s at most): "
                  + ", ".join(f"{v.name} {v.values[-1]:.3f}" for v in variants), flush=True)

    def storm(self, options: bool) -> list[Variant]:
        between = {"CUTRACE_WINDOW": "10ms", "CUTRACE_PERIOD": "60s"}
        vs = [Variant("bare", "bare"), Variant("floor", "floor"), Variant("cutrace trace", "cutrace"),
              Variant("cutrace summary", "cutrace", mode="summary"),
              Variant("cutrace continuous, between windows", "cutrace", between, mode="continuous")]
        if options:
            vs = [vs[0], vs[2]] + [Variant(f"trace {k}={val}", "cutrace", {k: val}) for k, val in (
                ("CUTRACE_BUFFER_SIZE", "1M"), ("CUTRACE_BUFFER_SIZE", "8M"),
                ("CUTRACE_BUFFER_COUNT", "8"), ("CUTRACE_PER_THREAD_BUFFERS", "0"),
                ("CUTRACE_TIMESTAMP_CALLBACK", "0"), ("CUTRACE_KINDS", "kernel,memcpy,memset,nvtx"),
                ("CUTRACE_KINDS", "all"),
                ("CUTRACE_LATENCY_TIMESTAMPS", "1"), ("CUTRACE_FLUSH_PERIOD_MS", "10"),
                ("CUTRACE_FLUSH_PERIOD_MS", "200"))]
        return self.run_storm(vs)

    def run_storm(self, vs: list[Variant]) -> list[Variant]:
        """The launch storm (--n launches) under each variant, by us/launch."""
        truth = self.work / "storm-truth.json"
        app = [str(Path(self.args.bin_dir) / "ct_launch_storm"), "--n", str(self.args.n),
               "--truth", str(truth)]
        self.interleave(vs, app, truth, lambda d: float(d["launch"]["us_per_launch"]), 120)
        return vs

    def continuous(self) -> list[Variant]:
        truth = self.work / "long-truth.json"
        app = [str(Path(self.args.bin_dir) / "ct_launch_storm"), "--n", str(self.args.long_n),
               "--truth", str(truth)]
        # 1/60 of the period, like 1 s every 60 s. The first window opens when
        # CUDA starts, before the timed loop; the period is a fraction of the
        # loop, so that later windows fall inside it (a period as long as the
        # run left the loop between windows: what it then measured). The part
        # reports the share of the loop's launches that windows traced.
        period_ms = self.args.long_period_ms
        env = {"CUTRACE_WINDOW": f"{max(10, period_ms // 60)}ms", "CUTRACE_PERIOD": f"{period_ms}ms"}
        # A second bare variant in the same rotation: the bare-to-bare difference
        # is the noise any average below it drowns in.
        # The default (no API records, CUPTI detached between windows) beside
        # continuous mode with API records, which keeps CUPTI attached.
        vs = [Variant("bare", "bare"), Variant("cutrace continuous", "cutrace", env, mode="continuous"),
              Variant("cutrace continuous, API records (stays attached)", "cutrace",
                      {**env, "CUTRACE_KINDS": "default"}, mode="continuous"),
              Variant("bare (again)", "bare")]
        self.interleave(vs, app, truth, lambda d: float(d["launch"]["us_per_launch"]), 180)
        self.figures["continuous_env"] = env
        return vs

    def capture(self) -> list[Variant]:
        """Issue 20: the storm never reaches its capture range, so all of it is the
        uncaptured stretch: CUPTI attached with only the trigger's callbacks on
        (the profiler API's, or NVTX's) or none (a delay longer than the run),
        no activity kind ever enabled. Two bare variants give the noise."""
        vs = [Variant("bare", "bare"),
              Variant("cutrace, capture range cudaProfilerApi, not reached", "cutrace",
                      {"CUTRACE_CAPTURE_RANGE": "cudaProfilerApi"}),
              Variant("cutrace, capture range nvtx:step, not reached", "cutrace",
                      {"CUTRACE_CAPTURE_RANGE": "nvtx:step"}),
              Variant("cutrace, --delay 600s, not reached", "cutrace", {"CUTRACE_DELAY": "600s"}),
              Variant("bare (again)", "bare")]
        truth = self.work / "storm-truth.json"
        app = [str(Path(self.args.bin_dir) / "ct_launch_storm"), "--n", str(self.args.n),
               "--truth", str(truth)]
        self.interleave(vs, app, truth, lambda d: float(d["launch"]["us_per_launch"]), 120,
                        rounds=max(5, self.args.rounds))
        return vs

    @staticmethod
    def floor_breakdown() -> list[Variant]:
        """The floor narrowed (CUTRACE_FLOOR_KINDS): kernels and API records, then
        each other kind added to those alone; cutrace with and without sync records."""
        api = "kernel,runtime,driver"
        return [Variant("floor: attached, nothing enabled", "floor", {"CUTRACE_FLOOR_KINDS": "none"}),
                Variant("floor: kernels + API", "floor", {"CUTRACE_FLOOR_KINDS": api}),
                Variant("floor: kernels + API + overhead", "floor", {"CUTRACE_FLOOR_KINDS": api + ",overhead"}),
                Variant("floor: kernels + API + sync", "floor", {"CUTRACE_FLOOR_KINDS": api + ",sync"}),
                Variant("floor: kernels + API + nvtx", "floor", {"CUTRACE_FLOOR_KINDS": api + ",nvtx"}),
                Variant("floor: kernels + API + memcpy, memset", "floor",
                        {"CUTRACE_FLOOR_KINDS": api + ",memcpy,memset"}),
                Variant("floor", "floor"),
                Variant("cutrace trace", "cutrace"),
                Variant("cutrace trace, with sync records", "cutrace", {"CUTRACE_KINDS": "all"})]

    @staticmethod
    def overhead_records() -> list[Variant]:
        """CUPTI's OVERHEAD records on and off, in the floor and in cutrace, with
        everything else at cutrace's defaults (the CUTRACE_KINDS word "overhead")."""
        base = "kernel,memcpy,memset,nvtx,runtime,driver"
        return [Variant("floor, overhead records on", "floor",
                        {"CUTRACE_FLOOR_KINDS": base + ",device,overhead"}),
                Variant("floor, overhead records off", "floor", {"CUTRACE_FLOOR_KINDS": base + ",device"}),
                Variant("cutrace trace, overhead records on", "cutrace",
                        {"CUTRACE_KINDS": "default,overhead"}),
                Variant("cutrace trace, overhead records off", "cutrace",
                        {"CUTRACE_KINDS": "kernel,memcpy,memset,nvtx,api"})]

    def storm_kinds(self) -> list[Variant]:
        return self.run_storm([Variant("bare", "bare")] + self.overhead_records())

    def storm_breakdown(self) -> list[Variant]:
        return self.run_storm([Variant("bare", "bare")] + self.floor_breakdown())

    def torch(self, breakdown: bool = False, sync: bool = False, kinds: bool = False) -> list[Variant]:
        result = self.work / "torch.json"
        app = [sys.executable, str(HERE / "torch_ops.py"), "--ops", str(self.args.torch_ops),
               "--out", str(result)]
        between = {"CUTRACE_WINDOW": "10ms", "CUTRACE_PERIOD": "60s"}
        if sync:  # what sync records cost cutrace: default (none) against all kinds
            app += ["--gemms", "2"]
            vs = [Variant("bare", "bare"), Variant("cutrace trace", "cutrace"),
                  Variant("cutrace trace, with sync records", "cutrace", {"CUTRACE_KINDS": "all"}),
                  Variant("torch.profiler (CUDA)", "torch")]
        elif kinds:  # CUPTI's overhead records on and off
            app += ["--gemms", "2"]
            vs = [Variant("bare", "bare")] + self.overhead_records() + [Variant("torch.profiler (CUDA)", "torch")]
        elif breakdown:  # the small ops only: two GEMMs keep each run short
            app += ["--gemms", "2"]
            vs = [Variant("bare", "bare")] + self.floor_breakdown() + [Variant("torch.profiler (CUDA)", "torch")]
        else:
            vs = [Variant("bare", "bare"), Variant("floor", "floor"), Variant("cutrace trace", "cutrace"),
                  Variant("cutrace summary", "cutrace", mode="summary"),
                  Variant("cutrace continuous, between windows", "cutrace", between, mode="continuous"),
                  Variant("torch.profiler (CUDA)", "torch")]
        prof = vs[-1]
        orig = self.command

        def command(v, app_cmd, out):  # torch.profiler is a flag of the workload itself
            return orig(v, app_cmd + (["--profiler"] if v is prof else []), out)

        self.command = command
        try:
            self.interleave(vs, app, result, lambda d: float(d["us_per_op"]), 240,
                            rounds=self.args.torch_rounds)
        finally:
            self.command = orig
        return vs


def torch_available() -> bool:
    try:
        r = subprocess.run([sys.executable, "-c", "import torch; assert torch.cuda.is_available()"],
                           capture_output=True, timeout=120)
        return r.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def med(v: Variant) -> float:
    return statistics.median(v.values)


def spread(v: Variant) -> str:
    return f"{min(v.values):.2f}..{max(v.values):.2f}"


def paired(v: Variant, bare: Variant, resamples: int = 2000) -> tuple[float, float, float] | None:
    """The median over rounds of v / bare of the same round (drift between rounds
    cancels), with a 90% bootstrap interval; None with fewer than 3 rounds."""
    ratios = [a / b for a, b in zip(v.values, bare.values) if b > 0]
    if len(ratios) < 3:
        return None
    rng = random.Random(len(ratios))  # reproducible for the same figures
    boot = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(resamples))
    return statistics.median(ratios), boot[int(0.05 * resamples)], boot[int(0.95 * resamples) - 1]


def overhead_ratio(v: Variant, ref: Variant, bare: Variant,
                   resamples: int = 2000) -> tuple[float, float, float] | None:
    """v's overhead over ref's, each the median over rounds of run / same round's
    bare run, minus 1; with a 90% bootstrap interval (rounds resampled together,
    so a round's drift stays paired). None with fewer than 3 rounds. A resample
    where ref costs nothing counts as +inf (v's ratio unbounded)."""
    n = min(len(v.values), len(ref.values), len(bare.values))
    if n < 3:
        return None

    def ratio(rounds: list[int]) -> float:
        a = statistics.median(v.values[i] / bare.values[i] for i in rounds) - 1
        b = statistics.median(ref.values[i] / bare.values[i] for i in rounds) - 1
        return a / b if b > 0 else float("inf")

    rng = random.Random(n)
    boot = sorted(ratio(rng.choices(range(n), k=n)) for _ in range(resamples))
    return ratio(list(range(n))), boot[int(0.05 * resamples)], boot[int(0.95 * resamples) - 1]


def table(title: str, unit: str, vs: list[Variant], refs: dict[str, str]) -> tuple[list[str], dict]:
    """Median, spread, overhead over bare, the overhead's ratio to each reference
    variant, and the paired ratio to bare (each round against its own bare run)
    with its 90% interval: the figure to judge a few-percent target by."""
    bare = med(vs[0])
    by_name = {v.name: v for v in vs}
    lines = [f"{title} ({unit}; median of {len(vs[0].values)}, interleaved, order rotated)",
             f"  {'variant':44} {'median':>8} {'spread':>14} {'overhead':>9} {'x bare':>7}"
             + "".join(f" {'ovh/' + r:>14}" for r in refs) + f" {'paired x bare [90%]':>24}"]
    fig = {}
    for v in vs:
        m = med(v)
        ovh = m - bare
        row = f"  {v.name:44} {m:8.3f} {spread(v):>14} {ovh:+9.3f} {m / bare:7.3f}"
        f = {"median": round(m, 4), "runs": [round(x, 4) for x in v.values], "overhead": round(ovh, 4),
             "x_bare": round(m / bare, 4)}
        pr = paired(v, vs[0]) if v is not vs[0] else None
        if pr is not None:
            f["paired_x_bare"] = [round(x, 4) for x in pr]
        for label, ref in refs.items():
            ref_ovh = med(by_name[ref]) - bare
            ratio = ovh / ref_ovh if ref_ovh > 0 and v.name != vs[0].name else None
            row += f" {ratio:14.3f}" if ratio is not None else f" {'-':>14}"
            f[f"overhead_vs_{label}"] = round(ratio, 4) if ratio is not None else None
        row += f" {pr[0]:8.3f} [{pr[1]:.3f}, {pr[2]:.3f}]" if pr is not None else f" {'-':>24}"
        lines.append(row)
        fig[v.name] = f
    # The targets are ratios of overheads: their intervals, for cutrace's variants.
    bits = []
    for v in vs:
        if not v.name.startswith("cutrace"):
            continue
        for label, ref in refs.items():
            if ref == v.name:
                continue
            r = overhead_ratio(v, by_name[ref], vs[0])
            if r is not None:
                fig[v.name][f"overhead_vs_{label}_paired"] = [round(x, 4) for x in r]
                bits.append(f"{v.name} / {label} {r[0]:.2f} [{r[1]:.2f}, {r[2]:.2f}]")
    if bits:
        lines.append("  overhead ratios, paired, 90% interval: " + "; ".join(bits))
    return lines, fig


def below_one_percent(label: str, pr) -> str | None:
    """The < 1% verdict on a paired ratio and its interval (paired()'s triple,
    or None): shown only when the interval's top is below 1.01."""
    if not pr:
        return None
    shown = "shown" if pr[2] < 1.01 else "not shown"
    return (f"  {label}: x{pr[0]:.4f}, 90% interval [{pr[1]:.4f}, {pr[2]:.4f}]: < 1% {shown} "
            "(needs the interval's top below 1.01)")


def continuous_report(vs: list[Variant], env: dict[str, str]) -> tuple[list[str], dict]:
    """The continuous part's tables (wall, CPU time, per CPU speed) and, for
    each continuous variant, its < 1% verdicts and the share of the loop's
    launches its windows traced."""
    title = "continuous mode's average"
    lines, fig = table(f"{title} ({env})", "us/launch", vs, {})
    clines, cfig = cpu_table(title, "us/launch", vs, "cpu_us_per_launch", {})
    slines, sfig = speed_table(title, "us/launch", vs, {})
    ilines, ifig = instructions_table(title, vs, {})
    fig["cpu"], fig["per_cpu_speed"] = cfig, sfig
    if ifig:
        fig["instructions"] = ifig
    bares = [v for v in vs if v.kind == "bare"]
    # Against both bare variants pooled; their own difference is the noise.
    bare = statistics.median(bares[0].values + bares[1].values)
    noise = (med(bares[1]) / med(bares[0]) - 1) * 100
    fig["bare_vs_bare_pct"] = round(noise, 3)
    lines.append(f"  bare vs bare {noise:+.2f}% (the noise)")
    for v in (v for v in vs if v.kind != "bare"):
        pct = (med(v) / bare - 1) * 100
        fig.setdefault("average_overhead_pct_by_variant", {})[v.name] = round(pct, 3)
        lines.append(f"  {v.name}: average overhead {pct:+.2f}% against both bare variants pooled "
                     "(target < 1%)")
        verdicts = [below_one_percent("paired", paired(v, bares[0])),
                    below_one_percent("launching thread's CPU time, paired",
                                      cfig.get(v.name, {}).get("paired_x_bare")),
                    below_one_percent("per unit of CPU speed, paired",
                                      sfig.get(v.name, {}).get("paired_x_bare"))]
        lines += ["  " + x for x in verdicts if x]
        # What the windows covered: kernels traced beyond the warm-up's (the
        # first window, at CUDA start), against the loop's launches.
        if all("kernels_traced" in d for d in v.extra):
            share = [max(0, d["kernels_traced"] - WARMUP) / float(d["launch"]["n"]) for d in v.extra]
            chunks = [d.get("chunks", 0) for d in v.extra]
            fig.setdefault("window_launch_share", {})[v.name] = [round(x, 5) for x in share]
            lines.append(f"    windows traced {statistics.median(share) * 100:.2f}% of the loop's "
                         f"launches (median; {min(share) * 100:.2f}..{max(share) * 100:.2f}%; "
                         f"the duty cycle is {100 / 60:.2f}%), in {statistics.median(chunks):.0f} "
                         "chunks per run")
    # The figure line's: the default variant's.
    fig["average_overhead_pct"] = fig["average_overhead_pct_by_variant"]["cutrace continuous"]
    return lines + clines + slines + ilines, fig


def derived_table(title: str, unit: str, vs: list[Variant], value, refs: dict[str, str]):
    """The same variants by another figure of each run, value(run's result):
    lines and figures, or ([], {}) when some run has none (value gives None)."""
    dvs = []
    for v in vs:
        d = Variant(v.name, v.kind, v.env, v.mode)
        d.values = [value(x) for x in v.extra]
        if not d.values or None in d.values:
            return [], {}
        dvs.append(d)
    return table(title, unit, dvs, refs)


def field(d: dict, key: str) -> float | None:
    """key of a run's result, or of its "launch" object (ct_launch_storm's truth)."""
    v = d.get(key, d.get("launch", {}).get(key))
    return None if v is None else float(v)


def cpu_table(title: str, unit: str, vs: list[Variant], key: str, refs: dict[str, str]):
    """The variants by the launching thread's CPU time (`key`)."""
    return derived_table(title + ", launching thread's CPU time", unit, vs, lambda d: field(d, key), refs)


def instructions_table(title: str, vs: list[Variant], refs: dict[str, str]):
    """The variants by the launching thread's user-space instructions per
    launch (ct_launch_storm counts them where the CPU's counter is exposed):
    the same work gives the same count, so this one holds still where time
    moves with the host's speed. ([], {}) without the counter."""
    return derived_table(title + ", launching thread's instructions", "instructions/launch", vs,
                         lambda d: field(d, "instructions_per_launch"), refs)


def speed_table(title: str, unit: str, vs: list[Variant], refs: dict[str, str],
                key: str = "us_per_launch"):
    """A run's `key` divided by the process's CPU speed (ct_launch_storm's and
    torch_ops.py's calibration loops, before CUDA starts and after the timed
    loops), scaled by the part's median calibration: what is left when
    process-to-process CPU speed, which moves these runs by more than the
    overheads, is taken out."""
    def calib(d: dict) -> float | None:
        a, b = field(d, "cpu_calibration_ns_before"), field(d, "cpu_calibration_ns_after")
        return None if not a or not b else (a + b) / 2

    all_calib = [calib(d) for v in vs for d in v.extra]
    if not all_calib or None in all_calib:
        return [], {}
    ref = statistics.median(all_calib)
    return derived_table(title + ", per unit of the process's CPU speed", unit, vs,
                         lambda d: field(d, key) * ref / calib(d), refs)


def storm_and_torch(title: str, storm, torch_part, refs: dict[str, str]) -> tuple[list[str], dict]:
    """A part of two tables: the storm's variants (storm()), then the PyTorch
    loop's (torch_part(), torch.profiler beside them) where PyTorch has CUDA."""
    lines, fig = table(f"{title}: launch storm", "us/launch", storm(), refs)
    if not torch_available():
        return lines + ["  PyTorch part skipped (no PyTorch with CUDA)"], {"storm": fig}
    tlines, tfig = table(f"{title}: PyTorch small ops", "us/op", torch_part(),
                         {**refs, "torch.profiler": "torch.profiler (CUDA)"})
    return lines + [""] + tlines, {"storm": fig, "torch": tfig}


def start_bench(p: argparse.ArgumentParser):
    """The arguments and a Bench over an emptied work folder; None (after
    saying so) where there is no GPU, for the caller to exit 77."""
    args = p.parse_args()
    if not has_gpu():
        print("skipped: no GPU")
        return None
    shutil.rmtree(Path(args.work), ignore_errors=True)
    return args, Bench(args)  # Bench makes the work folder


def bench_parser(doc: str, work: str) -> argparse.ArgumentParser:
    """The arguments every benchmark here takes: the binaries, the rounds, the
    deadline, the cores and the work folder."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--cutrace", required=True)
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--deadline-s", type=float, default=0,
                   help="stop starting rounds that would end later than this many seconds from "
                        "the start (0: no deadline); the parts report the rounds they did")
    p.add_argument("--cpus", default="", help="taskset -c list for every run (e.g. 2-5)")
    p.add_argument("--work", default=work)
    return p


def main() -> int:
    p = bench_parser(__doc__, "/tmp/cutrace-overhead")
    p.add_argument("--floor", required=True)
    p.add_argument("--n", type=int, default=200000)
    p.add_argument("--long-n", type=int, default=1000000)
    p.add_argument("--long-period-ms", type=int, default=1000)
    p.add_argument("--torch-ops", type=int, default=40000)
    # Each torch run repeats its loops 3 times in-process (bench/torch_ops.py),
    # and starting Python with PyTorch costs seconds: fewer process rounds.
    p.add_argument("--torch-rounds", type=int, default=2)
    p.add_argument("--parts", default="storm,options,continuous,torch",
                   help="comma list of storm, options, continuous, torch, torch_sync, kinds, breakdown")
    p.add_argument("--json-out", default=None)
    args = p.parse_args()
    if not has_gpu():
        print("skipped: no GPU")
        return SKIP
    bench = Bench(args)
    parts = [x.strip() for x in args.parts.split(",") if x.strip()]
    report: list[str] = []
    failed = False
    t0 = time.monotonic()
    for part in parts:
        try:
            if part == "storm":
                vs = bench.storm(options=False)
                lines, fig = table("launch storm", "us/launch", vs, {"floor": "floor"})
                clines, cfig = cpu_table("launch storm", "us/launch", vs, "cpu_us_per_launch",
                                         {"floor": "floor"})
                slines, sfig = speed_table("launch storm", "us/launch", vs, {"floor": "floor"})
                ilines, ifig = instructions_table("launch storm", vs, {"floor": "floor"})
                lines += clines + slines + ilines
                fig["cpu"] = cfig
                fig["per_cpu_speed"] = sfig
                if ifig:
                    fig["instructions"] = ifig
                kernels = [d.get("floor", {}).get("kernels", 0) for d in vs[1].extra]
                fig["floor_kernels_seen"] = kernels
                tb = [d["trace_bytes"] for d in vs[2].extra]
                fig["trace_bytes_per_launch"] = round(statistics.median(tb) / args.n, 2)
                lines.append(f"  the floor saw {min(kernels)}..{max(kernels)} kernels per run "
                             f"(the app launched {args.n} + its warm-up); cutrace's trace "
                             f"{fig['trace_bytes_per_launch']} B per launch")
                st = [d.get("stats", {}) for d in vs[2].extra]
                if st and all(st):
                    peak = max(x["queue_peak_batches"] for x in st)
                    drops = sum(x["records_dropped_queue_full"] + x["records_dropped_by_cupti"] for x in st)
                    fig["writer_queue_peak_batches"] = peak
                    fig["records_dropped"] = drops
                    lines.append(f"  writer queue peak {peak} of {st[0]['queue_capacity_batches']} "
                                 f"batches over {len(st)} runs, {drops} records dropped")
            elif part == "options":
                vs = bench.storm(options=True)
                lines, fig = table("launch storm, one CUTRACE_* option changed", "us/launch", vs,
                                   {"default": "cutrace trace"})
            elif part == "continuous":
                lines, fig = continuous_report(bench.continuous(), bench.figures["continuous_env"])
            elif part == "torch":
                if not torch_available():
                    report += ["torch: skipped (no PyTorch with CUDA)"]
                    continue
                vs = bench.torch()
                refs = {"floor": "floor", "torch.profiler": "torch.profiler (CUDA)"}
                lines, fig = table("PyTorch small ops", "us/op", vs, refs)
                clines, cfig = cpu_table("PyTorch small ops", "us/op", vs, "cpu_us_per_op", refs)
                slines, sfig = speed_table("PyTorch small ops", "us/op", vs, refs, key="us_per_op")
                lines += clines + slines
                fig["cpu"] = cfig
                fig["per_cpu_speed"] = sfig
                for v in vs:
                    v.values = [float(d["ms_per_gemm"]) for d in v.extra]
                glines, gfig = table("PyTorch bf16 8192^3 GEMMs", "ms/GEMM", vs, {})
                lines += glines
                fig = {"ops": fig, "gemm": gfig,
                       "profiler_kernels": [d.get("profiler_kernels") for d in vs[-1].extra],
                       "profiler_stop_s": [d.get("profiler_stop_s") for d in vs[-1].extra]}
            elif part == "torch_sync":
                if not torch_available():
                    report += ["torch_sync: skipped (no PyTorch with CUDA)"]
                    continue
                vs = bench.torch(sync=True)
                lines, fig = table("PyTorch small ops, sync records", "us/op", vs,
                                   {"torch.profiler": "torch.profiler (CUDA)"})
            elif part == "capture":
                vs = bench.capture()
                lines, fig = table("launch storm, uncaptured stretch (capture range never reached)",
                                   "us/launch", vs, {})
            elif part == "kinds":
                lines, fig = storm_and_torch(
                    "CUPTI overhead records", bench.storm_kinds, lambda: bench.torch(kinds=True),
                    {"floor on": "floor, overhead records on", "floor off": "floor, overhead records off"})
            elif part == "breakdown":
                lines, fig = storm_and_torch("where the cost goes", bench.storm_breakdown,
                                             lambda: bench.torch(breakdown=True), {"floor": "floor"})
            else:
                print(f"unknown part {part!r}")
                return 2
        except RuntimeError as e:
            print(f"FAIL overhead {part}: {e}", flush=True)
            failed = True
            continue
        bench.figures[part] = fig
        report += lines + [""]
        print("\n".join(lines), flush=True)
    print(f"\n=== overhead: {time.monotonic() - t0:.0f} s\n" + "\n".join(report))
    s = bench.figures.get("storm", {})
    t = bench.figures.get("torch", {}).get("ops", {})
    c = bench.figures.get("continuous", {})
    bits = []
    if s:
        bits.append(f"storm trace/floor overhead {s['cutrace trace']['overhead_vs_floor']}")
    if t:
        bits.append(f"torch trace/floor {t['cutrace trace']['overhead_vs_floor']}, "
                    f"trace/torch.profiler {t['cutrace trace']['overhead_vs_torch.profiler']}")
    if c:
        bits.append(f"continuous average {c['average_overhead_pct']:+.2f}%")
    cap = bench.figures.get("capture", {})
    if cap:
        bits.append("uncaptured stretch paired x bare: " + ", ".join(
            f"{name.split(', ')[1]} {f['paired_x_bare'][0]}" for name, f in cap.items()
            if name.startswith("cutrace") and f.get("paired_x_bare")))
    print("FIGURE overhead: " + "; ".join(bits), flush=True)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(bench.figures, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
