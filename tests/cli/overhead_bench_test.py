#!/usr/bin/env python3
"""bench/overhead.py's own logic, without a GPU: the round scheduling (the
order rotates, a deadline stops rounds that cannot fit and keeps the ones
done) and the statistics its verdicts rest on (paired ratios to bare, the
overhead ratios and their intervals, the per-CPU-speed figures), against
runs whose true costs the test sets.

  overhead_bench_test.py SOURCE_DIR
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from script_checks import expect, finish

WORK = tempfile.mkdtemp(prefix="cutrace-overhead-test.")  # Bench makes its work dir


def args_for(o, *extra: str):
    """overhead.py's arguments as its main() parses them (only what Bench reads)."""
    ns = argparse.Namespace(cutrace="/bin/true", floor="/bin/true", bin_dir="/nonexistent",
                            work=WORK, rounds=4, torch_rounds=2,
                            n=1000, long_n=1000, long_period_ms=1000, torch_ops=10, cpus="",
                            deadline_s=0.0)
    for e in extra:
        k, v = e.split("=")
        setattr(ns, k, type(getattr(ns, k))(v))
    return ns


def main() -> int:
    source = Path(sys.argv[1]).resolve()
    sys.path.insert(0, str(source / "bench"))
    import overhead as o  # noqa: E402  (the module under test)

    # 1. Rotation: round r starts with variant r % 3; every variant runs once a
    #    round, so the per-round values stay aligned for pairing.
    bench = o.Bench(args_for(o, "rounds=4"))
    order: list[str] = []

    def one(v, app, result, timeout):
        order.append(v.name)
        return {"x": 1.0}

    bench.one = one
    vs = [o.Variant(n, "bare") for n in ("A", "B", "C")]
    bench.interleave(vs, [], Path("/nonexistent"), lambda d: d["x"], 10)
    want = ["A"] + list("ABC" "BCA" "CAB" "ABC")  # the warm-up, then four rounds
    expect("rotation", order == want, f"{order}")
    expect("rounds kept", all(len(v.values) == 4 for v in vs), f"{[len(v.values) for v in vs]}")

    # 2. Deadline: rounds of ~60 ms under a 0.2 s deadline stop early, keep the
    #    rounds done (at least one), and say so in the figures; a part that
    #    starts past the deadline is refused.
    bench = o.Bench(args_for(o, "rounds=50", "deadline_s=0.2"))

    def slow(v, app, result, timeout):
        time.sleep(0.02)
        return {"x": 1.0}

    bench.one = slow
    vs = [o.Variant(n, "bare") for n in ("A", "B", "C")]
    bench.interleave(vs, [], Path("/nonexistent"), lambda d: d["x"], 10)
    done = len(vs[0].values)
    expect("deadline stops rounds", 1 <= done < 50, f"{done} rounds")
    expect("deadline keeps rounds aligned", all(len(v.values) == done for v in vs),
           f"{[len(v.values) for v in vs]}")
    expect("deadline noted", bool(bench.figures.get("rounds_cut")), f"{bench.figures}")
    time.sleep(0.25)
    try:
        bench.interleave(vs, [], Path("/nonexistent"), lambda d: d["x"], 10)
        expect("past the deadline: refused", False, "ran")
    except RuntimeError as e:
        expect("past the deadline: refused", "deadline" in str(e), str(e))

    # 3. Paired ratio to bare: a variant that costs exactly 3% more than its
    #    round's bare run, whatever the round's speed, is x1.03 with a tight
    #    interval even though the rounds differ by 40%.
    speeds = [1.0, 1.4, 0.9, 1.2, 1.1, 0.8, 1.3]
    bare = o.Variant("bare", "bare")
    bare.values = [4.0 * s for s in speeds]
    v = o.Variant("cutrace trace", "cutrace")
    v.values = [4.0 * s * 1.03 for s in speeds]
    pr = o.paired(v, bare)
    expect("paired median", pr is not None and abs(pr[0] - 1.03) < 1e-9, f"{pr}")
    expect("paired interval", pr is not None and pr[1] <= 1.03 <= pr[2] and pr[2] - pr[1] < 1e-9,
           f"{pr}")
    short = o.Variant("x", "bare")
    short.values = [1.0, 2.0]
    expect("paired needs 3 rounds", o.paired(short, bare) is None, "")

    # 4. Overhead ratio: cutrace +3% and a reference +6% over bare in every
    #    round make 0.5; a reference that costs nothing makes it unbounded.
    ref = o.Variant("floor", "floor")
    ref.values = [4.0 * s * 1.06 for s in speeds]
    r = o.overhead_ratio(v, ref, bare)
    expect("overhead ratio", r is not None and abs(r[0] - 0.5) < 1e-6 and r[1] <= 0.5 <= r[2], f"{r}")
    free = o.Variant("free", "floor")
    free.values = list(bare.values)
    r = o.overhead_ratio(v, free, bare)
    expect("overhead ratio over nothing", r is not None and r[0] == float("inf"), f"{r}")

    # 5. Per unit of CPU speed: runs whose us/launch and calibration move
    #    together (a faster or slower process) come out equal; the one that
    #    really costs 2% more still does.
    def run(us: float, calib: float) -> dict:
        return {"launch": {"us_per_launch": us, "cpu_calibration_ns_before": calib,
                           "cpu_calibration_ns_after": calib}}

    b2 = o.Variant("bare", "bare")
    c2 = o.Variant("cutrace continuous", "cutrace")
    for s in speeds:
        b2.extra.append(run(4.0 * s, 1e7 * s))
        c2.extra.append(run(4.0 * s * 1.02, 1e7 * s))
    b2.values = [d["launch"]["us_per_launch"] for d in b2.extra]
    c2.values = [d["launch"]["us_per_launch"] for d in c2.extra]
    lines, fig = o.speed_table("storm", "us/launch", [b2, c2], {})
    runs = fig.get("bare", {}).get("runs", [])
    expect("per-speed bare runs equal", len(runs) == len(speeds) and max(runs) - min(runs) < 1e-3,
           f"{runs}")
    x = fig.get("cutrace continuous", {}).get("x_bare")
    expect("per-speed ratio", x is not None and abs(x - 1.02) < 1e-3, f"{x}")
    del c2.extra[0]["launch"]["cpu_calibration_ns_after"]
    expect("per-speed needs every run's calibration",
           o.speed_table("storm", "us/launch", [b2, c2], {}) == ([], {}), "")

    # 6. The continuous part's report: each continuous variant against both
    #    bare ones pooled, its < 1% verdicts and its windows' share.
    def cont(name: str, kind: str, cost: float, traced: int | None) -> o.Variant:
        v = o.Variant(name, kind)
        for s in speeds:
            d = run(4.0 * s * cost, 1e7 * s)
            d["launch"]["cpu_us_per_launch"] = 4.0 * s * cost
            d["launch"]["n"] = 100000
            if traced is not None:
                d["kernels_traced"], d["chunks"] = traced + o.WARMUP, 4
            v.extra.append(d)
        v.values = [d["launch"]["us_per_launch"] for d in v.extra]
        return v

    vs = [cont("bare", "bare", 1.0, None), cont("cutrace continuous", "cutrace", 1.30, 4000),
          cont("cutrace continuous, CUTRACE_DETACH=1, no API records", "cutrace", 1.005, 1700),
          cont("bare (again)", "bare", 1.0, None)]
    lines, fig = o.continuous_report(vs, {"CUTRACE_WINDOW": "16ms"})
    by = fig.get("average_overhead_pct_by_variant", {})
    expect("continuous: each variant's average", abs(by.get("cutrace continuous", 0) - 30) < 1e-6 and
           abs(by.get("cutrace continuous, CUTRACE_DETACH=1, no API records", 0) - 0.5) < 1e-6, f"{by}")
    expect("continuous: the figure line's is the default variant's",
           fig.get("average_overhead_pct") == by.get("cutrace continuous"), f"{fig.get('average_overhead_pct')}")
    shown = [x for x in lines if "< 1% shown" in x]
    not_shown = [x for x in lines if "< 1% not shown" in x]
    expect("continuous: < 1% shown three ways for the detached variant only",
           len(shown) == 3 and len(not_shown) == 3, "\n".join(lines))
    share = fig.get("window_launch_share", {}).get("cutrace continuous, CUTRACE_DETACH=1, no API records", [])
    expect("continuous: the windows' share", share and abs(share[0] - 0.017) < 1e-9, f"{share}")

    expect("continuous: no instructions table without the counter",
           not any("instructions" in x for x in lines) and "instructions" not in fig, "")

    # 7. Instructions per launch (where the CPU's counter is exposed): the
    #    table's ratio is the counts', whatever the runs' times did.
    for v in vs:
        for i, d in enumerate(v.extra):
            d["launch"]["instructions_per_launch"] = 20000.0 * (1.004 if "DETACH" in v.name else
                                                                1.0 if v.kind == "bare" else 1.2)
    lines, fig = o.continuous_report(vs, {"CUTRACE_WINDOW": "16ms"})
    ins = fig.get("instructions", {})
    expect("instructions: the detached variant's ratio",
           abs(ins.get("cutrace continuous, CUTRACE_DETACH=1, no API records", {}).get("x_bare", 0) - 1.004) < 1e-6,
           f"{ins}")
    expect("instructions: a table of its own", any("launching thread's instructions" in x for x in lines),
           "\n".join(lines))
    del vs[1].extra[0]["launch"]["instructions_per_launch"]
    expect("instructions: needs every run's count", o.instructions_table("x", vs, {}) == ([], {}), "")

    # 8. tests/gpu/modes.py's in-run figure: a continuous run that spends
    #    20% beyond its steady rate, beside bare runs with 5% of jitter,
    #    spent 15% in its windows; the steady rates' ratio is 1.03.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu"))
    import modes  # noqa: E402

    def timeline(step: int, slow: int, every: int) -> list[int]:
        t, out = 0, [0]
        for i in range(1000):
            t += step + (slow if i % every == 0 else 0)
            out.append(t)
        return out
    # 1000 steps; every 10th is twice as long (continuous) or half again (bare).
    fig = modes.in_run_figures({"bare-1": timeline(10000, 5000, 10), "bare-2": timeline(10000, 5000, 10),
                                "continuous": timeline(10300, 20600, 10)}, 10)
    expect("modes in-run: windows' share", abs(fig["windows_pct"] - 15.0) < 1e-6, f"{fig}")
    expect("modes in-run: steady ratio", abs(fig["steady_ratio"] - 1.03) < 1e-6, f"{fig}")

    return finish("overhead.py logic")


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(rc)
