#!/usr/bin/env python3
"""Where continuous mode's cost falls in a launch storm.

Usage: continuous_probe.py --cutrace BIN --bin-dir DIR [--rounds R] [--n N]
                           [--every K] [--cpus LIST] [--work DIR]

Runs ct_launch_storm with --timeline (the time every K launches) bare and
under continuous mode with CUTRACE_LOG=debug, whose lines give each window's
edges (CLOCK_MONOTONIC, like the timeline) and how long switching the activity
kinds and the flush took. Each step of the timeline is then put in one of
three places: inside a window, near one (within --margin-ms of its edges),
or between windows; the report gives the launches' cost in each place against
the bare run of the same round, and so says whether a cost is the windows',
the edges' or a steady one between windows. Figures, not pass/fail.
"""
from __future__ import annotations

import csv
import re
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead import SKIP, Variant, bench_parser, clean_env, run, start_bench  # noqa: E402

EDGE = re.compile(r"window (opens|closes) at (\d+) ns \(monotonic\): activity (on|off)(?: (\d+) us)?(?:, flush (\d+) us)?")
PLACES = ("in a window", "near an edge", "between windows")
DETACH = re.compile(r"CUPTI detached at \d+ ns \(monotonic\): forced flush (\d+) us, cuptiFinalize (\d+) us")
DETACH_AT = re.compile(r"CUPTI detached at (\d+) ns \(monotonic\)")  # when
ATTACH = re.compile(r"CUPTI attached again: (\d+) us")


def chunk_correlations(cutrace: str, out: Path, csv_dir: Path) -> list[str]:
    """Per chunk file of a run: its kernels and their correlation ids' range
    (whether ids start again after CUPTI attaches again)."""
    shutil.rmtree(csv_dir, ignore_errors=True)
    files = sorted(str(f) for f in out.rglob("*.trace"))
    if not files:
        return ["no chunk files"]
    r = run([cutrace, "export", "--format", "csv", "-o", str(csv_dir), *files], clean_env(), 120)
    if r.returncode != 0:
        return [f"export failed: {r.stderr.strip()[-200:]}"]
    per: dict[str, list[int]] = {}
    with open(csv_dir / "kernels.csv") as f:
        for row in csv.DictReader(f):
            per.setdefault(Path(row["file"]).name, []).append(int(row["correlation"]))
    return [f"{name}: {len(ids)} kernels, correlation {min(ids)}..{max(ids)}" for name, ids in sorted(per.items())]


def parse_edges(stderr: str) -> tuple[list[tuple[int, int]], dict[str, list[int]]]:
    """The windows ([open, close] ns) and the switching times (us) in a run's
    debug log. A window still open at the end closes at infinity."""
    windows, costs = [], {"on": [], "off": [], "flush": []}
    opened = None
    for m in EDGE.finditer(stderr):
        what, t = m.group(1), int(m.group(2))
        if m.group(4) is not None:  # the first window's line has no switching time
            costs[m.group(3)].append(int(m.group(4)))
        if m.group(5) is not None:
            costs["flush"].append(int(m.group(5)))
        if what == "opens":
            opened = t
        elif opened is not None:
            windows.append((opened, t))
            opened = None
    if opened is not None:
        windows.append((opened, 1 << 62))
    return windows, costs


def place(a: int, b: int, windows: list[tuple[int, int]], margin_ns: int) -> str:
    """Where the step [a, b] lies against the windows."""
    if any(a < close and b > start for start, close in windows):
        return PLACES[0]
    if any(a < close + margin_ns and b > start - margin_ns for start, close in windows):
        return PLACES[1]
    return PLACES[2]


def by_place(timeline: list[int], every: int, windows: list[tuple[int, int]],
             margin_ns: int) -> dict[str, tuple[int, int]]:
    """(launches, ns) in each place; the last step may be shorter than `every`
    (its launches are not known here, so it is left out)."""
    out = {p: (0, 0) for p in PLACES}
    for a, b in zip(timeline[:-2], timeline[1:-1]):
        p = place(a, b, windows, margin_ns)
        n, ns = out[p]
        out[p] = (n + every, ns + (b - a))
    return out


def buckets(timeline: list[int], every: int, bucket_ns: int) -> list[float]:
    """us per launch in consecutive stretches of about bucket_ns."""
    out, start, steps = [], timeline[0], 0
    for a, b in zip(timeline[:-2], timeline[1:-1]):
        steps += 1
        if b - start >= bucket_ns:
            out.append((b - start) / 1e3 / (steps * every))
            start, steps = b, 0
    return out


def main() -> int:
    p = bench_parser(__doc__, "/tmp/cutrace-probe")
    p.add_argument("--n", type=int, default=1000000)
    p.add_argument("--every", type=int, default=500)
    p.add_argument("--margin-ms", type=float, default=30)
    started = start_bench(p)
    if started is None:
        return SKIP
    args, bench = started
    work = Path(args.work)
    truth = work / "truth.json"
    app = [str(Path(args.bin_dir) / "ct_launch_storm"), "--n", str(args.n), "--timeline", str(args.every),
           "--truth", str(truth)]
    every_s = {"CUTRACE_WINDOW": "16ms", "CUTRACE_PERIOD": "1s", "CUTRACE_LOG": "debug"}
    variants = [Variant("bare", "bare"),
                Variant("continuous 16ms/1s, defaults (detached between windows)", "cutrace", every_s,
                        mode="continuous"),
                Variant("continuous 16ms/1s, CUTRACE_DETACH=0", "cutrace", {**every_s, "CUTRACE_DETACH": "0"},
                        mode="continuous"),
                Variant("trace", "cutrace")]

    def after_run(v: Variant, r, out: Path, data: dict) -> None:
        """The window edges and detach lines of a continuous run's debug log;
        the first run's chunks, while its folder is there."""
        data["windows"], data["costs"] = parse_edges(r.stderr)
        found = DETACH.findall(r.stderr)
        data["detach_flush_us"] = [int(f) for f, _ in found]
        data["detach_us"] = [int(d) for _, d in found]
        data["attach_us"] = [int(x) for x in ATTACH.findall(r.stderr)]
        if v.mode == "continuous" and not v.extra:
            data["chunk_lines"] = chunk_correlations(args.cutrace, out, work / "csv")

    bench.after_run = after_run
    try:
        bench.interleave(variants, app, truth, lambda d: float(d["launch"]["us_per_launch"]), 300)
    except RuntimeError as e:
        print(f"FAIL continuous probe: {e}")
        return 1
    results = {v.name: v.extra for v in variants}

    margin = int(args.margin_ms * 1e6)
    bare = results["bare"]
    print(f"\n=== continuous probe: {args.n} launches, a step every {args.every}, margin {args.margin_ms} ms")
    for name, runs in results.items():
        if not runs:
            continue
        print(f"{name}: us/launch median {statistics.median(x['launch']['us_per_launch'] for x in runs):.3f} "
              f"over {len(runs)} runs")
        for i, x in enumerate(runs):
            places = by_place(x["launch"]["timeline_ns"], args.every, x["windows"], margin)
            ref = None
            if i < len(bare):
                b = by_place(bare[i]["launch"]["timeline_ns"], args.every, [], margin)[PLACES[2]]
                ref = b[1] / b[0] / 1e3 if b[0] else None
            bits = []
            for pl in PLACES:
                n, ns = places[pl]
                if n == 0:
                    continue
                us = ns / 1e3 / n
                extra = f", +{(us - ref) * n / 1e3:.0f} ms over bare" if ref else ""
                bits.append(f"{pl} {n} launches at {us:.3f} us{extra}")
            c = x["costs"]
            sw = ""
            if c["on"]:
                sw = (f"; {len(x['windows'])} windows, switching on {statistics.median(c['on'])} us, "
                      f"off {statistics.median(c['off']) if c['off'] else '-'} us, "
                      f"flush {statistics.median(c['flush']) if c['flush'] else '-'} us (medians)")
            if x["detach_us"]:
                sw += (f"; detached {len(x['detach_us'])}x (forced flush median "
                       f"{statistics.median(x['detach_flush_us'])} us, cuptiFinalize median "
                       f"{statistics.median(x['detach_us'])} us), "
                       f"attached again {len(x['attach_us'])}x (median "
                       f"{statistics.median(x['attach_us']) if x['attach_us'] else '-'} us)")
            base = f" (bare in this round {ref:.3f} us)" if ref else ""
            print(f"  run {i + 1}: " + "; ".join(bits) + sw + base)
        x = runs[0]
        for line in x.get("chunk_lines", []):
            print("  first run's chunk " + line)
        timeline = x["launch"]["timeline_ns"]
        b = buckets(timeline, args.every, 100_000_000)
        print("  first run, us/launch per 100 ms: " + " ".join(f"{v:.2f}" for v in b))
        if x["windows"]:
            t0 = timeline[0]
            print("  its windows (ms from the loop's start): " + " ".join(
                f"[{(a - t0) / 1e6:.0f},{(z - t0) / 1e6:.0f}]" for a, z in x["windows"] if z < 1 << 61))
    return 0


if __name__ == "__main__":
    sys.exit(main())
