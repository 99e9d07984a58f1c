#!/usr/bin/env python3
"""bench/concurrent_pairs.py's own logic, without a GPU: two launch timelines
recorded at the same time, with per-launch costs the test sets, compared over
the stretch both launched in, split into a window and the time between
windows, and composed at one window every 60 s.

  concurrent_pairs_test.py SOURCE_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

from script_checks import expect, finish

def timeline(start_ns: int, end_ns: int, every: int, cost_ns) -> list[int]:
    """Times every `every` launches from start_ns, each launch costing cost_ns(t)."""
    t, out = start_ns, [start_ns]
    while t < end_ns:
        t += every * cost_ns(t)
        out.append(t)
    return out


def close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol


def main() -> int:
    sys.path.insert(0, str(Path(sys.argv[1]).resolve() / "bench"))
    import concurrent_pairs as p  # noqa: E402  (the module under test)

    every = 1000
    # The bare side from 1.0 s to 13 s at 4000 ns a launch; the other side
    # starts later (1.2 s) and costs 4040 ns (x1.01) between windows and
    # 4400 ns (x1.10) inside the window [5 s, 6 s).
    bare = {"launch": {"timeline_ns": timeline(1_000_000_000, 13_000_000_000, every, lambda t: 4000)}}
    window = (5_000_000_000, 6_000_000_000)
    other = {"launch": {"timeline_ns": timeline(
        1_200_000_000, 12_000_000_000, every,
        lambda t: 4400 if window[0] <= t < window[1] else 4040)}}
    c = p.compare(other, bare, every, [window], margin_ns=30_000_000)
    expect("between windows: x1.01", close(c["between"]["ratio"], 1.01, 1e-6), f"{c}")
    # The window part spans the window and its margins, where the cost is
    # 4400 inside and 4040 in the margins (60 ms of 1060 ms).
    want = (1000 / 1060) * 1.10 + (60 / 1060) * 1.01
    expect("the window: its mix", close(c["window"]["ratio"], want, 0.003), f"{c['window']} want {want}")
    expect("the window part's time", close(c["window"]["s"], 1.06, 0.02), f"{c['window']}")
    # Only the stretch both sides launched in: from 1.2 s to the other
    # side's last full step (before 12 s).
    expect("the common stretch", close(c["whole"]["s"], 10.8, 0.05), f"{c['whole']}")
    expect("launches split, none lost",
           c["window"]["launches"] + c["between"]["launches"] == (len(other["launch"]["timeline_ns"]) - 2) * every,
           f"{c}")

    # At 1 s every 60 s: one window's extra (the window part's extra over
    # the windows it holds) plus 58.94 s at x1.01.
    seen = c["window"]["s"] / 1.06
    avg = p.at_issue_period(c, seen, 1.0, 0.03)
    extra = c["window"]["extra_s"]
    want_avg = (extra / seen + (60 - 1.06) * 0.01) / 60
    expect("average at 60 s", avg is not None and close(avg, want_avg, 1e-9), f"{avg} want {want_avg}")
    expect("average at 60 s: its size", avg is not None and close(avg, 0.0113, 0.0005), f"{avg}")
    expect("no whole window seen: no average", p.at_issue_period(c, 0.2, 1.0, 0.03) is None)

    # The control: the same cost on both sides is x1 whatever the windows.
    same = {"launch": {"timeline_ns": timeline(1_100_000_000, 12_500_000_000, every, lambda t: 4000)}}
    c2 = p.compare(same, bare, every, [], margin_ns=30_000_000)
    expect("control pair: x1", close(c2["whole"]["ratio"], 1.0, 1e-3) and "window" not in c2, f"{c2}")

    # A profiler attached mid-loop: the other side is a slower process (x1.05
    # bare), attaches in [3.00 s, 3.05 s), then costs x1.01 between windows
    # and x1.10 inside [5 s, 6 s), all over its own bare speed.
    attach = (3_000_000_000, 3_050_000_000)

    def late_cost(t: int) -> int:
        if t < attach[0]:
            return 4200
        if t < attach[1]:
            return 100_000
        return 4620 if window[0] <= t < window[1] else 4242

    late = {"launch": {"timeline_ns": timeline(1_200_000_000, 12_000_000_000, every, late_cost),
                       "attach_ns": list(attach)}}
    c4 = p.compare(late, bare, every, [window], margin_ns=30_000_000, attach=attach)
    expect("late: the bare stretch before", close(c4["before"]["ratio"], 1.05, 1e-3), f"{c4}")
    expect("late: against the bare side, the process's own speed in",
           close(c4["between"]["ratio"], 1.05 * 1.01, 2e-3), f"{c4}")
    r4 = p.relative_to_before(c4)
    expect("late: between windows against itself before", r4 is not None
           and close(r4["between"]["ratio"], 1.01, 2e-3), f"{r4}")
    expect("late: the window against itself before", r4 is not None
           and close(r4["window"]["ratio"], (1000 / 1060) * 1.10 + (60 / 1060) * 1.01, 0.004), f"{r4}")
    expect("late: the attaching left out", c4["before"]["s"] + c4["window"]["s"] + c4["between"]["s"]
           < c4["whole"]["s"] + 1e-9 and c4["before"]["s"] < 1.81, f"{c4}")
    expect("no stretch before: nothing relative", p.relative_to_before(c) is None)

    # Sides that never overlap in time: nothing to compare.
    late = {"launch": {"timeline_ns": timeline(20_000_000_000, 21_000_000_000, every, lambda t: 4000)}}
    c3 = p.compare(late, bare, every, [], margin_ns=0)
    expect("no common stretch", "between" not in c3 and c3["whole"]["s"] == 0, f"{c3}")

    return finish("concurrent_pairs logic")


if __name__ == "__main__":
    sys.exit(main())
