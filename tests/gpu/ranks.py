#!/usr/bin/env python3
"""Ranks of one job (issue 25), as far as the machine's GPUs allow.

  ranks.py --cutrace BIN --work DIR [--bin-dir DIR] [--json-out F] [--timeout S]
    1. windows: two ct_launch_storm processes in continuous mode (200 ms
       every 1 s, CUTRACE_LOG=debug), the second started 0.45 s after the
       first, each launching for about 4.5 s. Every window after a process's
       first must open at the same instant in both (their debug lines give
       CLOCK_MONOTONIC, one clock for all processes of a host) and on a whole
       second of the wall clock; `summary --format json` over each process's
       chunks gives the windows' start_realtime_ns, which must pair up.
    2. ddp: `python -m torch.distributed.run --nproc-per-node 2` of a small
       DDP loop under `cutrace run --output DIR/rank-%q{RANK}.trace`: NCCL with
       a GPU per rank where there are two GPUs or more, otherwise gloo with
       both ranks on cuda:0. Both traces are written with their rank in the
       header; `cutrace merge` gives one trace with two processes, ranks 0
       and 1; the same loop under torch.profiler (a second job, each rank
       writing its Chrome trace), imported, has exactly cutrace's kernel
       count per rank over the steps after the first two. With NCCL also:
       NCCL kernels are communication on each rank, and `cutrace ranks` names
       rank 1 (which sleeps 20 ms inside each step) as the one the others
       waited for. On one GPU those checks are SKIP lines (no NCCL there).
    3. peer (two GPUs): a PyTorch program moving a tensor from cuda:0 to
       cuda:1 200 times under `cutrace run`: two devices with their UUIDs,
       operations on both, exactly 200 device-to-device copies.
  ranks.py --workload --steps N [--profile FILE_PATTERN] [--slow-rank R]
    one rank of the DDP loop (RANK, WORLD_SIZE etc. from torch.distributed.run).
  ranks.py --workload-peer N
    the peer-copy program.

Exit 0 pass, 1 fail, 77 skipped (no GPU or no PyTorch). python3 stdlib only
(the workload itself imports torch).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import validate as v  # noqa: E402

SKIP = 77
WINDOW_PERIOD_NS = 1_000_000_000
SLEEP_S = 0.02
STEPS = 12
SKIP_STEPS = 2  # DDP rebuilds its buckets after the first step

checks: list[tuple[str, bool, str]] = []


def check(name: str, ok: bool, detail: str = "") -> bool:
    checks.append((name, ok, detail))
    print(f"{'PASS' if ok else 'FAIL'}  {name}{': ' + detail if detail else ''}", flush=True)
    return ok


def skip(name: str, why: str) -> None:
    print(f"SKIP  {name}: {why}", flush=True)


def workload(steps: int, profile: str | None, slow_rank: int) -> int:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    own_gpu = torch.cuda.device_count() >= world
    backend = "nccl" if own_gpu else "gloo"
    dev = torch.device("cuda", rank if own_gpu else 0)
    torch.cuda.set_device(dev)
    dist.init_process_group(backend)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 1024)).to(dev)
    ddp = DistributedDataParallel(model, device_ids=[dev.index])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = torch.randn(512, 1024, device=dev)

    def step(mark) -> None:
        with mark("step"):
            if rank == slow_rank:
                time.sleep(SLEEP_S)  # the straggler's own host work
            loss = ddp(x).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss.item()

    if profile:
        from torch.profiler import ProfilerActivity, profile as prof, record_function
        with prof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            for _ in range(steps):
                step(record_function)
            torch.cuda.synchronize()
        p.export_chrome_trace(profile.replace("%r", str(rank)))
    else:
        for _ in range(steps):
            step(torch.cuda.nvtx.range)
        torch.cuda.synchronize()
    dist.barrier()
    dist.destroy_process_group()
    return 0


PEER_COPIES = 200


def peer_workload(n: int) -> int:
    """Tensors moved from cuda:0 to cuda:1: n copies, an add on device 0 and
    a mul on device 1 each time."""
    import torch

    x = torch.ones(1 << 20, device="cuda:0")
    torch.cuda.synchronize("cuda:0")
    for _ in range(n):
        x.add_(1)
        y = x.to("cuda:1")
        y.mul_(2)
    torch.cuda.synchronize("cuda:0")
    torch.cuda.synchronize("cuda:1")
    return 0 if float(y[0]) == 2 * (n + 1) else 1


def run(cmd: list[str], timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
    """cmd in its own process group, killed whole on a timeout (a DDP job's
    workers would otherwise hold the GPU and the port for the next job)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def report(cutrace: str, *args: str) -> dict:
    p = run([cutrace, *args, "--format", "json"], 120)
    if p.returncode != 0:
        raise RuntimeError(f"cutrace {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    return json.loads(p.stdout)


def opens_of(stderr: str) -> list[int]:
    return [int(m) for m in re.findall(r"window opens at (\d+) ns \(monotonic\)", stderr)]


def windows_case(cutrace: str, bin_dir: Path, work: Path, timeout: float, figures: dict) -> None:
    app = str(bin_dir / "ct_launch_storm")
    lib = str(Path(cutrace).parent.parent / "lib" / "libcutrace_injection.so")
    procs = []
    for i in range(2):
        out = work / f"windows-{i}"
        out.mkdir(parents=True)
        env = dict(v.clean_env(), CUDA_INJECTION64_PATH=lib, CUTRACE_OUTPUT=f"{out}/",
                   CUTRACE_MODE="continuous", CUTRACE_WINDOW="200ms", CUTRACE_PERIOD="1s",
                   CUTRACE_LOG="debug")
        procs.append(subprocess.Popen([app, "--n", "20000", "--min-ms", "4500"], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
        if i == 0:
            time.sleep(0.45)
    errs = []
    for p in procs:
        try:
            errs.append(p.communicate(timeout=timeout)[1])
        except subprocess.TimeoutExpired:
            p.kill()
            errs.append(p.communicate()[1])
    if not check("windows: both processes exit 0", all(p.returncode == 0 for p in procs),
                 f"exit {[p.returncode for p in procs]}"):
        return
    # The wall clock's offset from CLOCK_MONOTONIC, as this host has it now.
    offset = time.clock_gettime_ns(time.CLOCK_REALTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    opens = [opens_of(e)[1:] for e in errs]  # the first opens with each process
    figures["window_opens_after_first"] = [len(o) for o in opens]
    if not check("windows: each process opened 3 or more windows after its first",
                 all(len(o) >= 3 for o in opens), f"{[len(o) for o in opens]}"):
        return
    # Each later window on a whole second (the loop wakes within a tick of it).
    phase = [((t + offset) % WINDOW_PERIOD_NS) for o in opens for t in o]
    late = [p if p < WINDOW_PERIOD_NS // 2 else p - WINDOW_PERIOD_NS for p in phase]
    figures["window_open_late_ms"] = [round(x / 1e6, 3) for x in late]
    check("windows: later windows open on the wall clock's whole seconds (within 20 ms)",
          all(abs(x) < 20_000_000 for x in late), f"off by {max(abs(x) for x in late) / 1e6:.3f} ms at most")
    # Pairs: the same second in both processes.
    by_second = [{(t + offset + WINDOW_PERIOD_NS // 2) // WINDOW_PERIOD_NS: t for t in o} for o in opens]
    common = sorted(set(by_second[0]) & set(by_second[1]))
    apart = [abs(by_second[0][s] - by_second[1][s]) for s in common]
    figures["window_pairs_apart_ms"] = [round(a / 1e6, 3) for a in apart]
    check("windows: the two processes open their common windows together (within 20 ms)",
          len(common) >= 3 and all(a < 20_000_000 for a in apart),
          f"{len(common)} common windows, {max(apart, default=0) / 1e6:.3f} ms apart at most")
    # summary's windows table: the same seconds, from each chunk's anchor.
    starts = []
    for i in range(2):
        chunks = sorted(str(p) for p in (work / f"windows-{i}").glob("*.trace"))
        rows = report(cutrace, "summary", *chunks).get("windows", [])
        starts.append({(r["start_realtime_ns"] + WINDOW_PERIOD_NS // 2) // WINDOW_PERIOD_NS:
                       r["start_realtime_ns"] for r in rows[1:] if r["start_realtime_ns"] > 0})
    both = sorted(set(starts[0]) & set(starts[1]))
    gaps = [abs(starts[0][s] - starts[1][s]) for s in both]
    check("windows: summary's UTC starts pair up across the processes (within 50 ms)",
          len(both) >= 3 and all(g < 50_000_000 for g in gaps),
          f"{len(both)} pairs, {max(gaps, default=0) / 1e6:.3f} ms apart at most")


def kernel_total(kernels: dict) -> int:
    return sum(int(k.get("count", 0)) for k in kernels.get("kernels", []))


def ddp_case(cutrace: str, work: Path, timeout: float, gpus: int, figures: dict) -> None:
    py = sys.executable
    launch = [py, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", "29533",
              str(HERE / "ranks.py"), "--workload", "--steps", str(STEPS), "--slow-rank", "1"]
    env = dict(v.clean_env(), NCCL_NVLS_ENABLE="0", OMP_NUM_THREADS="2")
    run_dir = work / "ddp"
    run_dir.mkdir()
    p = run([cutrace, "run", "--output", f"{run_dir}/rank-%q{{RANK}}.trace", "--no-summary", "--",
             *launch], timeout, env)
    if not check("ddp: the job exits 0 under cutrace run", p.returncode == 0,
                 f"exit {p.returncode}: {p.stderr.strip()[-300:]}" if p.returncode else ""):
        return
    traces = [run_dir / f"rank-{r}.trace" for r in (0, 1)]
    if not check("ddp: rank-0.trace and rank-1.trace written", all(t.exists() for t in traces),
                 ", ".join(sorted(x.name for x in run_dir.glob("*")))):
        return
    ranks = [report(cutrace, "info", str(t))["files"][0]["header"].get("rank", "") for t in traces]
    check("ddp: each trace's header names its rank", ranks == ["0", "1"], f"{ranks}")
    merged = work / "ddp-merged.trace"
    m = run([cutrace, "merge", "--output", str(merged), *map(str, traces)], 120)
    if check("ddp: cutrace merge exits 0", m.returncode == 0, m.stderr.strip()[-300:]):
        procs = report(cutrace, "info", str(merged))["files"][0]["header"].get("processes", [])
        check("ddp: the merged trace has two processes, ranks 0 and 1",
              sorted(p.get("rank", "") for p in procs) == ["0", "1"],
              f"{[(p.get('pid'), p.get('rank')) for p in procs]}")
    # The same job under torch.profiler, each rank's trace imported.
    prof_dir = work / "ddp-profile"
    prof_dir.mkdir()
    q = run(launch + ["--profile", f"{prof_dir}/rank-%r.json"], timeout, env)
    if not check("ddp: the torch.profiler job exits 0", q.returncode == 0, q.stderr.strip()[-300:]):
        return
    window = ["--range", "step", "--skip-first", str(SKIP_STEPS)]
    ours, theirs = [], []
    for r in (0, 1):
        imported = work / f"ddp-profile-rank-{r}.trace"
        i = run([cutrace, "import", str(prof_dir / f"rank-{r}.json"), "-o", str(imported)], 120)
        if not check(f"ddp: rank {r}'s torch.profiler trace imports", i.returncode == 0,
                     i.stderr.strip()[-300:]):
            return
        ours.append(kernel_total(report(cutrace, "kernels", *window, str(traces[r]))))
        theirs.append(kernel_total(report(cutrace, "kernels", *window, str(imported))))
    both = work / "ddp-profile-merged.trace"
    i = run([cutrace, "import", str(prof_dir / "rank-0.json"), str(prof_dir / "rank-1.json"),
             "-o", str(both)], 120)
    if check("ddp: both ranks' torch.profiler traces import as one merged trace", i.returncode == 0,
             i.stderr.strip()[-300:]):
        procs = report(cutrace, "info", str(both))["files"][0]["header"].get("processes", [])
        check("ddp: the merged import has two processes, ranks 0 and 1",
              sorted(p.get("rank", "") for p in procs) == ["0", "1"],
              f"{[(p.get('pid'), p.get('rank')) for p in procs]}")
    figures["ddp_kernels_per_rank"] = {"cutrace": ours, "torch.profiler": theirs,
                                       "steps": STEPS - SKIP_STEPS, "backend": "nccl" if gpus >= 2 else "gloo"}
    check(f"ddp: kernels per rank over steps {SKIP_STEPS + 1}-{STEPS} equal torch.profiler's",
          ours == theirs and min(ours) > 0, f"cutrace {ours}, torch.profiler {theirs}")
    if gpus < 2:
        # gloo reduces on the host: no communication kernels, so the report
        # has the steps but names nobody.
        r = report(cutrace, "ranks", "--range", "step", *map(str, traces))
        check("ddp: cutrace ranks has every step of both ranks and, without NCCL, names nobody",
              [x["steps"] for x in r["ranks"]] == [STEPS, STEPS]
              and all(s["waited_for_rank"] is None for s in r["steps"]),
              f"steps {[x['steps'] for x in r['ranks']]}")
        skip("ddp: NCCL kernels are communication on each rank", "one GPU: the job ran on gloo")
        skip("ddp: the straggler report names rank 1 as the one waited for", "one GPU: no NCCL kernels")
        return
    comm = [sum(int(d.get("comm_ns", 0)) for d in report(cutrace, "overlap", str(t))["devices"])
            for t in traces]
    figures["ddp_comm_ns"] = comm
    check("ddp: NCCL kernels are communication on each rank", all(c > 0 for c in comm), f"{comm}")
    ranks_report = report(cutrace, "ranks", "--range", "step", *map(str, traces))
    steps = ranks_report.get("steps", [])[SKIP_STEPS:]
    named = [s for s in steps if s.get("waited_for_rank") == 1]
    waits = sorted(s["wait_ns"] for s in named)
    figures["ddp_waited_for_rank1_steps"] = f"{len(named)} of {len(steps)}"
    figures["ddp_wait_ms"] = [round(w / 1e6, 2) for w in waits]
    check("ddp: the straggler report names rank 1 (20 ms sleep a step) as the one waited for",
          len(steps) > 0 and len(named) == len(steps) and waits[len(waits) // 2] > SLEEP_S * 1e9 / 2,
          f"{len(named)} of {len(steps)} steps, median wait {waits[len(waits) // 2] / 1e6 if waits else 0:.2f} ms")


def peer_case(cutrace: str, work: Path, timeout: float, figures: dict) -> None:
    out = work / "peer"
    out.mkdir()
    p = run([cutrace, "run", "--output", f"{out}/", "--no-summary", "--", sys.executable,
             str(HERE / "ranks.py"), "--workload-peer", str(PEER_COPIES)], timeout, v.clean_env())
    if not check("peer: the cuda:0 -> cuda:1 program exits 0 under cutrace run", p.returncode == 0,
                 p.stderr.strip()[-300:]):
        return
    traces = [str(t) for t in out.glob("*.trace")]
    info = report(cutrace, "info", *traces)["files"][0]
    uuids = sorted({d.get("uuid", "") for d in info.get("devices", [])})
    check("peer: two devices with their own UUIDs", len(uuids) >= 2 and "" not in uuids, f"{uuids}")
    devices = report(cutrace, "overlap", *traces)["devices"]
    compute = {d["device"]: d["compute_ns"] for d in devices}
    figures["peer_compute_ns_by_device"] = compute
    check("peer: kernels ran on both devices", len(compute) >= 2 and all(compute.values()),
          f"{compute}")
    kernels = kernel_total(report(cutrace, "kernels", *traces))
    figures["peer_kernels"] = kernels
    # torch.ones' fill, then an add on cuda:0 and a mul on cuda:1 per copy.
    check(f"peer: exactly {2 * PEER_COPIES + 1} kernels", kernels == 2 * PEER_COPIES + 1, f"{kernels}")
    copies = {c["kind"]: c["count"] for c in report(cutrace, "memcpy", *traces).get("copies", [])}
    figures["peer_copies"] = copies
    check(f"peer: exactly {PEER_COPIES} device-to-device copies, as their own kind",
          copies.get("PtoP", 0) + copies.get("DtoD", 0) == PEER_COPIES, f"{copies}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", action="store_true")
    ap.add_argument("--workload-peer", type=int)
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--profile")
    ap.add_argument("--slow-rank", type=int, default=1)
    ap.add_argument("--cutrace")
    ap.add_argument("--bin-dir")
    ap.add_argument("--work")
    ap.add_argument("--timeout", type=float, default=100)
    ap.add_argument("--json-out")
    args = ap.parse_args()
    if args.workload:
        return workload(args.steps, args.profile, args.slow_rank)
    if args.workload_peer:
        return peer_workload(args.workload_peer)
    if not v.has_gpu():
        print("skipped: no GPU")
        return SKIP
    cutrace = str(Path(args.cutrace).resolve())
    bin_dir = Path(args.bin_dir) if args.bin_dir else Path(cutrace).parent
    work = Path(args.work)
    subprocess.run(["rm", "-rf", str(work)])
    work.mkdir(parents=True)
    figures: dict = {}
    # The GPUs the programs will see (CUDA_VISIBLE_DEVICES included), as
    # PyTorch counts them; nvidia-smi's count where there is no PyTorch.
    counted = run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"], 120,
                  v.clean_env())
    have_torch = counted.returncode == 0
    gpus = (int(counted.stdout.strip().splitlines()[-1]) if have_torch else
            len([l for l in run(["nvidia-smi", "-L"], 30).stdout.splitlines() if l.startswith("GPU ")]))
    figures["gpus"] = gpus
    # Each case on its own: one that breaks (a report of an unexpected
    # shape included) is a failed check, and the others still run.
    cases = [("windows", lambda: windows_case(cutrace, bin_dir, work, args.timeout, figures))]
    if not have_torch:
        skip("ddp", "no PyTorch")
    else:
        cases.append(("ddp", lambda: ddp_case(cutrace, work, args.timeout, gpus, figures)))
        if gpus < 2:
            skip("peer: tensors moved between cuda:0 and cuda:1", "one GPU")
        else:
            cases.append(("peer", lambda: peer_case(cutrace, work, args.timeout, figures)))
    for name, case in cases:
        try:
            case()
        except Exception as e:  # noqa: BLE001 - reported as the case's failure
            check(name, False, f"{type(e).__name__}: {e}")
    print("FIGURE ranks " + json.dumps(figures), flush=True)
    if args.json_out:
        # Not "figures": the suite reads that key as one dict of figures per mode.
        Path(args.json_out).write_text(json.dumps({"ranks": figures, "checks": [
            {"name": n, "verdict": "PASS" if ok else "FAIL", "detail": d} for n, ok, d in checks]},
            indent=1))
    failed = [c for c in checks if not c[1]]
    print(f"ranks: {len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
