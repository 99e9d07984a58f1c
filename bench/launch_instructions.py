#!/usr/bin/env python3
"""Instructions per launch on the launch storm under valgrind's callgrind.

Every thread's user-space instructions over the storm's timed loop (the
testapp zeroes callgrind's counts as the loop begins and has them written
out at each --timeline step), for bare, the CUPTI floor and cutrace's modes.
Counts, not seconds: the same whatever else the host is doing, so a cost far
below the wall clock's noise on a shared host shows (issue 5 point 8 and
issue 7 point 1: continuous mode's average cost, and the default mode
against the floor). What a count leaves out: the kernel's side of a call
(ioctls), cache misses, and time a thread waits.

The runs go one at a time: runs sharing the GPU take other paths through
the driver's launch code, which moves the counts by up to 2%.
A continuous run counts only where the log's window edges say the loop was
(between windows, or inside one), and fails otherwise. One native
continuous run gives the edges' wall-clock cost (CUPTI attached again,
detached) that the composed average adds per period.
"""
from __future__ import annotations

import json
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from continuous_probe import ATTACH, DETACH, DETACH_AT, parse_edges  # noqa: E402
from overhead import SKIP, Variant, bench_parser, paired, start_bench  # noqa: E402

TOTALS = re.compile(r"^totals:\s+(\d+)", re.M)
PART = re.compile(r"\.(\d+)(?:-\d+)?")
TRIGGER = "desc: Trigger: Client Request: launch_storm step"
API = {"CUTRACE_KINDS": "default"}  # API records on: continuous mode stays attached
BETWEEN = {"CUTRACE_WINDOW": "20ms", "CUTRACE_PERIOD": "24h", "CUTRACE_LOG": "debug"}
INSIDE = {"CUTRACE_WINDOW": "3600s", "CUTRACE_PERIOD": "7200s", "CUTRACE_LOG": "debug"}  # the longest window
# The composed average: a 1 s window every 60 s, as issue 5 asks.
WINDOW_S, PERIOD_S = 1.0, 60.0


def variants() -> list[Variant]:
    # Two bare runs: how far counts of the same program differ is the
    # resolution of every difference below.
    return [Variant("bare", "bare"),
            Variant("bare (again)", "bare"),
            Variant("floor", "floor"),
            Variant("cutrace trace", "cutrace"),
            Variant("cutrace summary", "cutrace", mode="summary"),
            Variant("continuous, in a window", "cutrace", INSIDE, mode="continuous"),
            Variant("continuous, between windows", "cutrace", BETWEEN, mode="continuous"),
            Variant("continuous, between windows, API records (stays attached)", "cutrace",
                    {**BETWEEN, **API}, mode="continuous")]


def read_steps(prefix: Path) -> list[int]:
    """Each timeline step's instructions, in order, from callgrind's dumps:
    PREFIX.1, PREFIX.2, ... (with --separate-threads=yes, PREFIX.1-01, the
    dumping thread's only); the end-of-program dump, PREFIX, is not one."""
    parts: dict[int, int] = {}
    for f in prefix.parent.glob(prefix.name + ".*"):
        m = PART.fullmatch(f.name[len(prefix.name):])
        if not m:
            continue
        text = f.read_text(errors="replace")
        total = TOTALS.search(text)
        if TRIGGER in text and total:
            parts[int(m.group(1))] = parts.get(int(m.group(1)), 0) + int(total.group(1))
    return [v for _, v in sorted(parts.items())]


def where_the_loop_was(stderr: str, loop: tuple[int, int]) -> str:
    """'inside' when the loop ran within one window, 'between' when it ran
    after a window closed and before another opened, 'mixed' when a window
    edge fell in it, 'unknown' when the log has no window at all (cutrace
    did not start, or its debug lines are missing)."""
    windows, _ = parse_edges(stderr)
    a, b = loop
    if not windows:
        return "unknown"
    if any(start <= a and b <= close for start, close in windows):
        return "inside"
    overlaps = any(a < close and b > start for start, close in windows)
    if not overlaps and any(close <= a for _, close in windows):
        return "between"
    return "mixed" if overlaps else "unknown"


def detached_before(stderr: str, t_ns: int) -> bool:
    """Whether the log says CUPTI was detached before t_ns (monotonic)."""
    return any(int(t) < t_ns for t in DETACH_AT.findall(stderr))


def per_launch(steps: list[int], every: int) -> dict:
    """Instructions per launch: the mean over the loop (the figure), the
    median step's (a buffer's processing lands in some steps only)."""
    return {"per_launch": sum(steps) / (len(steps) * every),
            "median_step": statistics.median(steps) / every,
            "steps": len(steps)}


def edge_costs(bench, args) -> dict:
    """Attaching and detaching CUPTI, from a native continuous run's debug
    log: microseconds each (medians), the part a period pays on top of its
    window."""
    truth = bench.work / "edges-truth.json"
    app = [str(Path(args.bin_dir) / "ct_launch_storm"), "--n", str(args.edges_n), "--truth", str(truth)]
    v = Variant("edges", "cutrace", {"CUTRACE_WINDOW": "50ms", "CUTRACE_PERIOD": "250ms",
                                     "CUTRACE_LOG": "debug"}, mode="continuous")
    log = bench.one(v, app, truth, 300)["stderr"]
    attach = [int(x) for x in ATTACH.findall(log)]
    detach = [int(a) + int(b) for a, b in DETACH.findall(log)]
    windows, costs = parse_edges(log)
    if not attach or not detach:
        raise RuntimeError(f"edges run: {len(attach)} attach and {len(detach)} detach lines in its log")
    return {"windows": len(windows), "attach_us": statistics.median(attach),
            "detach_us": statistics.median(detach),
            "on_us": statistics.median(costs["on"]) if costs["on"] else 0,
            "off_and_flush_us": statistics.median([a + b for a, b in zip(costs["off"], costs["flush"])])
            if costs["off"] else 0}


def wall_in_window(bench, args) -> tuple[float, float, float] | None:
    """A window's own cost in time: natively, bare against a run that stays
    inside one window, interleaved (--wall-rounds), as a paired ratio with
    its 90% interval. The wall clock's noise on this host (a few %) is small
    against that cost, and a 1 s window in 60 s weighs it by 1/60."""
    truth = bench.work / "wall-truth.json"
    app = [str(Path(args.bin_dir) / "ct_launch_storm"), "--n", str(args.wall_n), "--truth", str(truth)]
    inside = {k: v for k, v in INSIDE.items() if k != "CUTRACE_LOG"}
    bare, win = Variant("bare", "bare"), Variant("continuous, in a window", "cutrace", inside, mode="continuous")
    bench.interleave([bare, win], app, truth, lambda d: float(d["launch"]["us_per_launch"]), 120,
                     rounds=args.wall_rounds)
    print(f"  native, {args.wall_n} launches: bare {statistics.median(bare.values):.3f} us/launch, "
          f"in a window {statistics.median(win.values):.3f} (medians of {len(bare.values)})", flush=True)
    return paired(win, bare)


def main() -> int:
    p = bench_parser(__doc__, "/tmp/cutrace-instructions")
    p.add_argument("--floor", required=True)
    p.add_argument("--valgrind", default="valgrind",
                   help="the valgrind launcher (with VALGRIND_LIB set for a carried one)")
    p.add_argument("--n", type=int, default=60000, help="launches in the timed loop")
    p.add_argument("--every", type=int, default=10000, help="launches per counted step")
    p.add_argument("--edges-n", type=int, default=2000000, help="launches of the native edges run")
    p.add_argument("--wall-n", type=int, default=1000000, help="launches of each native in-window run")
    p.add_argument("--wall-rounds", type=int, default=6, help="native rounds of bare and in-window runs")
    p.add_argument("--json-out", default=None)
    started = start_bench(p)
    if started is None:
        return SKIP
    args, bench = started
    if shutil.which(args.valgrind) is None:
        print(f"skipped: no valgrind ({args.valgrind})")
        return SKIP
    if args.n % args.every:
        print("FAIL --n must be a multiple of --every")
        return 1
    vs = variants()
    # Bench.one's runs keep their stderr: the window edges are in it.
    bench.after_run = lambda v, r, out, data: data.update(stderr=r.stderr)

    def one(v: Variant, threads: str) -> dict:
        """One callgrind run: every thread's count ("all"), or the launching
        thread's alone ("launching": callgrind then dumps only the thread
        that asks, the storm's main thread)."""
        cg = bench.work / "callgrind" / (re.sub(r"[^A-Za-z0-9]+", "_", v.name) + "-" + threads)
        shutil.rmtree(cg, ignore_errors=True)
        cg.mkdir(parents=True)
        truth = bench.work / "truth.json"
        app = [args.valgrind, "--tool=callgrind", f"--callgrind-out-file={cg}/cg", "--dump-line=no",
               f"--separate-threads={'yes' if threads == 'launching' else 'no'}",
               str(Path(args.bin_dir) / "ct_launch_storm"), "--n", str(args.n), "--warmup", "1000",
               "--timeline", str(args.every), "--truth", str(truth)]
        t = time.monotonic()
        left = bench.deadline - t if bench.deadline else 1800.0
        if left < 10:
            raise RuntimeError("not run, the deadline (--deadline-s) has passed")
        data = bench.one(v, app, truth, left)
        steps = read_steps(cg / "cg")
        shutil.rmtree(cg, ignore_errors=True)
        if len(steps) != args.n // args.every:
            raise RuntimeError(f"{len(steps)} counted steps, not {args.n // args.every}"
                               + (" (ct_launch_storm built without valgrind/callgrind.h?)" if not steps else ""))
        row = {**per_launch(steps, args.every), "wall_s": round(time.monotonic() - t, 1)}
        if v.mode == "continuous":
            tl = data["launch"]["timeline_ns"]
            row["loop_was"] = where_the_loop_was(data["stderr"], (tl[0], tl[-1]))
            row["detached"] = detached_before(data["stderr"], tl[0])
        return row

    print(f"launch storm under callgrind: {args.n} launches in steps of {args.every}, "
          f"{len(vs)} variants x (all threads, the launching thread), one at a time", flush=True)
    rows: dict[str, dict] = {}
    failed = []
    for v in vs:
        for threads in ("all", "launching"):
            try:
                rows.setdefault(v.name, {})[threads] = one(v, threads)
            except Exception as e:  # noqa: BLE001  (one run's failure is a line, not the end)
                failed.append(f"{v.name} ({threads}): {e}")
                print(f"FAIL {failed[-1]}", flush=True)
    if any(set(rows.get(b, {})) != {"all", "launching"} for b in ("bare", "bare (again)")):
        return 1
    # The reference: both bare runs' mean; their difference is the noise.
    ref = {t: (rows["bare"][t]["per_launch"] + rows["bare (again)"][t]["per_launch"]) / 2
           for t in ("all", "launching")}
    print(f"{'variant':58} {'all threads':>11} {'over bare':>10} {'launching':>10} {'over bare':>10}")
    for name, by in rows.items():
        cells = []
        for t in ("all", "launching"):
            if t in by:
                by[t]["over_bare"] = by[t]["per_launch"] / ref[t] - 1
                cells.append(f"{by[t]['per_launch']:{11 if t == 'all' else 10}.1f} "
                             f"{by[t]['over_bare'] * 100:+9.3f}%")
            else:
                cells.append(f"{'-':>21}")
        row = by.get("all") or by.get("launching")
        where = f"  (loop {row['loop_was']}{', CUPTI detached' if row.get('detached') else ''})" \
            if "loop_was" in row else ""
        print(f"{name:58} {' '.join(cells)}{where}")
    figures: dict = {"n": args.n, "every": args.every, "rows": rows}
    for name, place, detached in (("continuous, in a window", "inside", False),
                                  ("continuous, between windows", "between", True),
                                  ("continuous, between windows, API records (stays attached)", "between", False)):
        for t, row in rows.get(name, {}).items():
            if row["loop_was"] != place:
                failed.append(f"{name} ({t}): the loop was {row['loop_was']}, not {place}")
                print(f"FAIL {failed[-1]}")
            if row["detached"] != detached:
                failed.append(f"{name} ({t}): CUPTI was{'' if row['detached'] else ' not'} detached "
                              f"before the loop")
                print(f"FAIL {failed[-1]}")
    for t in ("all", "launching"):
        floor, trace = rows.get("floor", {}).get(t), rows.get("cutrace trace", {}).get(t)
        if floor and trace and floor["over_bare"] > 0:
            ratio = trace["over_bare"] / floor["over_bare"]
            figures[f"trace_over_floor_{t}"] = ratio
            print(f"FIGURE default mode's extra instructions over the floor's ({t} threads): "
                  f"x{ratio:.3f} (target <= 1.10)")
    inside = rows.get("continuous, in a window", {}).get("all")
    between = rows.get("continuous, between windows", {}).get("all")
    try:
        if inside and between and not failed:
            compose(bench, args, inside, between, figures)
    except (RuntimeError, OSError, KeyError, ValueError) as e:
        failed.append(str(e))
        print(f"FAIL {e}")
    finally:
        if args.json_out:
            Path(args.json_out).write_text(json.dumps({**figures, "failed": failed}, indent=1))
    return 1 if failed else 0


def compose(bench, args, inside: dict, between: dict, figures: dict) -> None:
    """The edges and a window's time natively, then the average at 1 s
    every 60 s, composed."""
    edges = edge_costs(bench, args)
    share = WINDOW_S / PERIOD_S
    # Switching on includes attaching again; off, the flush; then the detach.
    edges_s = (edges["on_us"] + edges["off_and_flush_us"] + edges["detach_us"]) / 1e6
    print(f"edges (native, median of {edges['windows']} windows): activity on {edges['on_us']:.0f} us "
          f"(of which attaching CUPTI again {edges['attach_us']:.0f} us), off and flush "
          f"{edges['off_and_flush_us']:.0f} us, detach {edges['detach_us']:.0f} us: "
          f"{edges_s * 1e3:.1f} ms per window, all counted as the program's")
    between_part = (1 - share) * between["over_bare"]
    avg = share * inside["over_bare"] + between_part + edges_s / PERIOD_S
    figures.update(edges=edges, composed_instructions=avg)
    print(f"FIGURE continuous, {WINDOW_S:.0f} s every {PERIOD_S:.0f} s, in instructions: {avg * 100:+.3f}% "
          f"= {share:.4f} x {inside['over_bare'] * 100:+.2f}% (in a window) + {1 - share:.4f} x "
          f"{between['over_bare'] * 100:+.3f}% (between) + {edges_s * 1e3:.1f} ms of edges per period")
    wall = wall_in_window(bench, args) if args.wall_rounds >= 3 else None
    if wall:
        mid, lo, hi = (share * (x - 1) + between_part + edges_s / PERIOD_S for x in wall)
        figures.update(in_window_wall_ratio=wall, composed=[mid, lo, hi])
        print(f"FIGURE continuous, {WINDOW_S:.0f} s every {PERIOD_S:.0f} s, composed: {mid * 100:+.3f}% "
              f"[{lo * 100:+.3f}, {hi * 100:+.3f}] (target < 1%) = {share:.4f} x (in a window, wall "
              f"clock x{wall[0]:.3f} [{wall[1]:.3f}, {wall[2]:.3f}] - 1) + between windows in "
              f"instructions {between_part * 100:+.3f}% + edges {edges_s / PERIOD_S * 100:.3f}%")
    else:
        why = ("the deadline cut the native rounds short" if bench.figures.get("rounds_cut")
               else "fewer than 3 native rounds (--wall-rounds)")
        raise RuntimeError(f"not composed: {why}")


if __name__ == "__main__":
    sys.exit(main())
