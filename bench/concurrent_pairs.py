#!/usr/bin/env python3
"""Continuous mode's average cost, measured against a bare run at the same time.

Usage: concurrent_pairs.py --cutrace BIN --bin-dir DIR [--rounds R] [--n N]
                           [--every K] [--window-ms W] [--period-s P]
                           [--cpus-a LIST] [--cpus-b LIST] [--work DIR]

Why: on the H200 hosts the launch storm's rate steps by up to 25% within one
process and 15% between processes run one after the other, bare or not
(docs/production.md), so a 1% average is below what sequential runs resolve.
Here the storm runs twice *at once*, on two disjoint sets of cores and the same
GPU: one bare, one under cutrace (or bare again, the control pair), each
recording the time every K launches (--timeline, CLOCK_MONOTONIC in both). A
change of the host's speed then hits both sides alike, and the two timelines
are compared over the same wall-clock stretches: over a stretch where both
launched, the bare side's launches over cutrace's side's launches is cutrace's
cost per launch relative to bare. The sides swap cores every round.

Continuous mode runs with a window of --window-ms (default 1000, the issue's 1 s)
every --period-s (default 15; the issue's period is 60 s, which would need runs
of minutes). Its debug log gives each window's edges; the cutrace side's
timeline steps are split into those inside a window or within --margin-ms of
its edges (the window: its tracing, switching, flush, detach and attach) and
those between windows. The report gives each part's cost against the bare side
over the same stretches, and composes them at 1 s every 60 s:

  average = (extra time of one window + (60 s - window time) x (between - 1)) / 60 s

where "extra time of one window" is the windows' measured extra (time beyond
what the bare side's rate needed for the same launches) divided by the windows
seen, and "window time" is the window with its margins. It also prints the
whole-run ratio as run (windows at 1/period, so 4x the issue's duty at the
default 15 s). The control pair (bare and bare) shows what this method's own
noise is.

The "late" pairs take out what makes one process faster than another (the
control pairs differ by up to +-4-6%): the cutrace side runs bare for
--attach-after launches, then dlopens the library and calls its
InitializeInjection() (ct_launch_storm --attach), so continuous mode starts
mid-loop; each part after that is taken against the same process's bare
stretch before it (both against the bare side beside it). "late_control"
marks the same point and attaches nothing: the method's own noise.
Figures, not pass/fail; python3 stdlib only; 77 without a GPU.
"""
from __future__ import annotations

import bisect
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from continuous_probe import parse_edges  # noqa: E402
from overhead import SKIP, Variant, bench_parser, clean_env, communicate, start_bench  # noqa: E402


def cumulative(timeline: list[int], every: int):
    """Launches done by time t (linear within a step), for t in the timeline's span;
    None outside it."""
    def at(t: int) -> float | None:
        if t < timeline[0] or t > timeline[-2]:  # the last step may be short: left out
            return None
        i = bisect.bisect_right(timeline, t) - 1
        i = min(i, len(timeline) - 2)
        a, b = timeline[i], timeline[i + 1]
        return every * (i + (t - a) / (b - a if b > a else 1))
    return at


def compare(cut: dict, bare: dict, every: int, windows: list[tuple[int, int]], margin_ns: int,
            attach: tuple[int, int] | None = None) -> dict:
    """The cutrace (or second) side's timeline steps against the bare side's
    launches over the same times: per part (window or between), launches on
    each side, the time, and the cost ratio (bare launches / cutrace launches).
    With `attach` (the [start, end] ns of a profiler attached mid-loop), the
    steps before it are a part of their own ("before"), and those within
    margin_ns of it are left out."""
    tl = cut["launch"]["timeline_ns"]
    bare_at = cumulative(bare["launch"]["timeline_ns"], every)
    parts = {"before": [0.0, 0.0, 0], "window": [0.0, 0.0, 0], "between": [0.0, 0.0, 0]}  # cut, bare, ns
    for a, b in zip(tl[:-2], tl[1:-1]):
        ba, bb = bare_at(a), bare_at(b)
        if ba is None or bb is None:
            continue  # outside the stretch both sides launched in
        if attach is not None and b <= attach[0]:
            part = "before"
        elif attach is not None and a < attach[1] + margin_ns:
            continue  # the attaching itself
        else:
            near = any(a < close + margin_ns and b > start - margin_ns for start, close in windows)
            part = "window" if near else "between"
        p = parts[part]
        p[0] += every
        p[1] += bb - ba
        p[2] += b - a
    out = {}
    for name, (n_cut, n_bare, ns) in parts.items():
        if n_cut == 0 or n_bare == 0:
            continue
        ratio = n_bare / n_cut
        out[name] = {"launches": n_cut, "bare_launches": round(n_bare), "s": ns / 1e9,
                     "ratio": ratio, "extra_s": ns / 1e9 * (1 - 1 / ratio)}
    n_cut = sum(p[0] for p in parts.values())
    n_bare = sum(p[1] for p in parts.values())
    out["whole"] = {"ratio": n_bare / n_cut if n_cut else float("nan"),
                    "s": sum(p[2] for p in parts.values()) / 1e9}
    return out


def relative_to_before(cmp: dict) -> dict | None:
    """The window and between parts of a mid-loop attach, each against the same
    process's own bare stretch before the attach (its ratio divided by that
    stretch's ratio), so that what makes one process faster than the other
    cancels; None without a stretch before."""
    before = cmp.get("before")
    if before is None:
        return None
    out = {"before": before}
    for name in ("window", "between"):
        if name in cmp:
            c = dict(cmp[name])
            c["ratio"] = cmp[name]["ratio"] / before["ratio"]
            c["extra_s"] = c["s"] * (1 - 1 / c["ratio"])
            out[name] = c
    return out


def at_issue_period(cmp: dict, windows_seen: float, window_s: float, margin_s: float,
                    period_s: float = 60.0) -> float | None:
    """The average cost (fraction) at one window every period_s, from the parts."""
    between = cmp.get("between")
    if between is None or windows_seen < 0.5:
        return None  # a run without a whole window in it says nothing about the windows
    extra_window = cmp["window"]["extra_s"] / windows_seen if "window" in cmp else 0.0
    span = window_s + 2 * margin_s
    return (extra_window + (period_s - span) * (between["ratio"] - 1)) / period_s


def main() -> int:
    p = bench_parser(__doc__, "/tmp/cutrace-pairs")
    p.add_argument("--n", type=int, default=8000000, help="launches per run (~30 s bare on the H200)")
    p.add_argument("--every", type=int, default=1000)
    p.add_argument("--window-ms", type=int, default=1000)
    p.add_argument("--period-s", type=int, default=15)
    p.add_argument("--margin-ms", type=float, default=30)
    p.add_argument("--cpus-a", default="2-4")
    p.add_argument("--cpus-b", default="5-7")
    p.add_argument("--pairs", default="control,default,attached",
                   help="comma list of control (bare, bare), default (continuous mode's defaults: "
                        "no API records, CUPTI detached between windows), attached (continuous with "
                        "API records and CUTRACE_DETACH=0, as before 2026-12-02), trace (default mode), "
                        "late (continuous mode attached mid-loop, measured against the same process "
                        "before), late_control (the same with nothing attached)")
    p.add_argument("--attach-after", type=int, default=2000000,
                   help="late pairs: launches before the library is attached (a multiple of --every)")
    p.add_argument("--lib", default="",
                   help="late pairs: the injection library (default: ../lib/libcutrace_injection.so "
                        "beside --cutrace's bin/)")
    p.add_argument("--json-out", default=None)
    started = start_bench(p)
    if started is None:
        return SKIP
    args, bench = started
    work = Path(args.work)
    if not args.lib:
        args.lib = str(Path(args.cutrace).resolve().parent.parent / "lib" / "libcutrace_injection.so")
    windowed = {"CUTRACE_WINDOW": f"{args.window_ms}ms", "CUTRACE_PERIOD": f"{args.period_s}s",
                "CUTRACE_LOG": "debug"}
    known = {
        "control": Variant("bare (again)", "bare"),
        "default": Variant("continuous, defaults (detached between windows)", "cutrace", windowed,
                           mode="continuous"),
        "attached": Variant("continuous, API records, CUTRACE_DETACH=0 (stays attached)", "cutrace",
                            {**windowed, "CUTRACE_DETACH": "0", "CUTRACE_KINDS": "default"}, mode="continuous"),
        "trace": Variant("trace (default mode)", "cutrace"),
        # The same process bare, then under continuous mode's defaults from
        # the attach on (ct_launch_storm --attach), against itself before.
        "late": Variant("continuous, defaults, attached mid-loop, against its own bare stretch", "late",
                        {**windowed, "CUTRACE_MODE": "continuous"}, mode="continuous"),
        "late_control": Variant("bare, a mark mid-loop (nothing attached), against its own stretch before",
                                "late_control"),
    }
    names = [x.strip() for x in args.pairs.split(",") if x.strip()]
    bad = [x for x in names if x not in known]
    if bad:
        print(f"concurrent_pairs: unknown pair {bad[0]!r} (known: {', '.join(known)})", file=sys.stderr)
        return 2
    bare = Variant("bare", "bare")
    results: dict[str, list[dict]] = {n: [] for n in names}
    deadline = time.monotonic() + args.deadline_s if args.deadline_s > 0 else 0.0
    margin_ns = int(args.margin_ms * 1e6)
    slowest = 0.0

    def launch(v: Variant, side: str, cpus: str):
        out = work / "runs" / side
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        truth = out / "truth.json"
        app = [str(Path(args.bin_dir) / "ct_launch_storm"), "--n", str(args.n),
               "--timeline", str(args.every), "--truth", str(truth)]
        (out / "trace").mkdir()
        if v.kind in ("late", "late_control"):
            lib = str(Path(args.lib).resolve()) if v.kind == "late" else "mark"
            cmd = app + ["--attach", lib, "--attach-after", str(args.attach_after)]
            env = clean_env()
            env.update(v.env)
            env["CUTRACE_OUTPUT"] = str(out / "trace")
        else:
            cmd, env = bench.command(v, app, out / "trace")
        proc = subprocess.Popen(["taskset", "-c", cpus, *cmd], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        return proc, truth

    def finish(proc, truth: Path, name: str, timeout: float) -> tuple[dict, str]:
        _, err = communicate(proc, timeout, name)
        if proc.returncode != 0 or not truth.exists():
            raise RuntimeError(f"{name}: exit {proc.returncode}: {err.strip()[-300:]}")
        return json.loads(truth.read_text()), err

    try:
        for r in range(args.rounds):
            if r > 0 and deadline and time.monotonic() + slowest > deadline:
                print(f"  deadline: {r} of {args.rounds} rounds done, stopping here", flush=True)
                break
            t = time.monotonic()
            # The sides swap cores every round; the pairs' order rotates.
            swap = r % 2 == 1
            k = r % len(names)
            for name in names[k:] + names[:k]:
                v = known[name]
                cpus_bare, cpus_v = (args.cpus_b, args.cpus_a) if swap else (args.cpus_a, args.cpus_b)
                pb, tb = launch(bare, "bare", cpus_bare)
                pv, tv = launch(v, "other", cpus_v)
                timeout = 40 + args.n * 20e-6
                db, _ = finish(pb, tb, "bare", timeout)
                dv, err = finish(pv, tv, v.name, timeout)
                windows, _ = parse_edges(err) if v.mode == "continuous" else ([], {})
                attach = dv["launch"].get("attach_ns")
                cmp = compare(dv, db, args.every, windows, margin_ns, tuple(attach) if attach else None)
                if attach:  # against the same process before the attach
                    cmp = {**cmp, **(relative_to_before(cmp) or {})}
                # Windows seen: the window part's time over one window's span.
                span_s = args.window_ms / 1e3 + 2 * args.margin_ms / 1e3
                seen = cmp["window"]["s"] / span_s if "window" in cmp else 0.0
                row = {"round": r + 1, "swapped": swap, "bare_us": db["launch"]["us_per_launch"],
                       "other_us": dv["launch"]["us_per_launch"], "windows_seen": round(seen, 2),
                       "parts": cmp, "windows": len(windows),
                       "avg_at_60s": at_issue_period(cmp, seen, args.window_ms / 1e3, args.margin_ms / 1e3)
                       if v.mode == "continuous" else None}
                results[name].append(row)
                bits = [f"whole x{cmp['whole']['ratio']:.4f} over {cmp['whole']['s']:.1f} s"]
                for part in ("before", "between", "window"):
                    if part in cmp and (v.mode == "continuous" or attach):
                        c = cmp[part]
                        bits.append(f"{part} x{c['ratio']:.4f} ({c['s']:.1f} s, extra {c['extra_s'] * 1e3:+.0f} ms)")
                if row["avg_at_60s"] is not None:
                    bits.append(f"at 1 s every 60 s {row['avg_at_60s'] * 100:+.2f}%")
                print(f"  round {r + 1} {name}{' (sides swapped)' if swap else ''}: "
                      f"bare {row['bare_us']:.3f} us/launch, {v.name} {row['other_us']:.3f}; "
                      + "; ".join(bits), flush=True)
            slowest = max(slowest, time.monotonic() - t)
    except RuntimeError as e:
        print(f"FAIL concurrent pairs: {e}")
        return 1

    print(f"\n=== concurrent pairs: the storm ({args.n} launches) twice at once, cores "
          f"{args.cpus_a} / {args.cpus_b} swapped each round; window {args.window_ms} ms every "
          f"{args.period_s} s, margin {args.margin_ms} ms")
    figures = {}
    for name in names:
        rows = results[name]
        if not rows:
            continue
        whole = [x["parts"]["whole"]["ratio"] for x in rows]
        line = (f"{known[name].name}: whole run x{statistics.median(whole):.4f} "
                f"(rounds {', '.join(f'{w:.4f}' for w in whole)})")
        fig = {"whole": [round(w, 5) for w in whole]}
        between = [x["parts"]["between"]["ratio"] for x in rows if "between" in x["parts"]]
        avg = [x["avg_at_60s"] for x in rows if x["avg_at_60s"] is not None]
        if (known[name].mode == "continuous" or known[name].kind == "late_control") and between:
            label = "after the mark" if known[name].kind == "late_control" else "between windows"
            line += (f"; {label} x{statistics.median(between):.4f} (rounds "
                     + ", ".join(f"{b:.4f}" for b in between) + ")")
            fig["between"] = [round(b, 5) for b in between]
        if avg:
            m = statistics.median(avg)
            line += (f"; at 1 s every 60 s {m * 100:+.2f}% (rounds "
                     + ", ".join(f"{a * 100:+.2f}%" for a in avg) + ")")
            fig["avg_at_60s_pct"] = [round(a * 100, 3) for a in avg]
            verdict = "shown" if max(avg) < 0.01 else "not shown"
            line += f": < 1% {verdict} (needs every round below 1%)"
        print("FIGURE " + line)
        figures[name] = {"variant": known[name].name, **fig, "rounds": rows}
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
