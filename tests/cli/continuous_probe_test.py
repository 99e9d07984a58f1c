#!/usr/bin/env python3
"""bench/continuous_probe.py's own logic, without a GPU: reading the window
edges from the library's debug lines, and putting each step of a launch
timeline inside a window, near one or between windows, against timelines
whose true per-launch costs the test sets.

  continuous_probe_test.py SOURCE_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

from script_checks import expect, finish

def main() -> int:
    sys.path.insert(0, str(Path(sys.argv[1]).resolve() / "bench"))
    import continuous_probe as p  # noqa: E402  (the module under test)

    # 1. The debug lines injection/production/production_controller.cc and injection/session/detach.cc write.
    log = "\n".join([
        "cutrace: window opens at 1000000000 ns (monotonic): activity on with the session",
        "cutrace: some other line",
        "cutrace: window closes at 1016000000 ns (monotonic): activity off 240 us, flush 900 us",
        "cutrace: CUPTI detached at 1017000000 ns (monotonic): forced flush 120 us, cuptiFinalize 350 us; "
        "all 32 activity buffers back with cutrace",
        "cutrace: window opens at 2000000000 ns (monotonic): activity on 180 us",
        "cutrace: CUPTI attached again: 4200 us",
    ])
    windows, costs = p.parse_edges(log)
    expect("windows", windows == [(1_000_000_000, 1_016_000_000), (2_000_000_000, 1 << 62)], f"{windows}")
    expect("switching costs", costs == {"on": [180], "off": [240], "flush": [900]}, f"{costs}")
    expect("detach and attach lines",
           p.DETACH.findall(log) == [("120", "350")] and p.ATTACH.findall(log) == ["4200"],
           f"{p.DETACH.findall(log)} {p.ATTACH.findall(log)}")

    # 2. A timeline at 4 us/launch between windows and 6 us inside the one
    #    window [1000 ms, 1016 ms]; steps of 500 launches.
    every, t, timeline = 500, 0, [0]
    while t < 3_000_000_000:
        inside = 1_000_000_000 <= t < 1_016_000_000
        t += every * (6000 if inside else 4000)
        timeline.append(t)
    win = [(1_000_000_000, 1_016_000_000)]
    places = p.by_place(timeline, every, win, margin_ns=30_000_000)
    n_in, ns_in = places["in a window"]
    n_between, ns_between = places["between windows"]
    expect("inside: its cost", n_in > 0 and abs(ns_in / n_in - 6000) < 600, f"{places}")
    expect("between: its cost", n_between > 0 and ns_between / n_between == 4000, f"{places}")
    n_near, _ = places["near an edge"]
    # 30 ms on each side at 2 ms a step: about 30 steps near the edges.
    expect("near the edges", 25 * every <= n_near <= 32 * every, f"{places}")
    expect("every full step once", sum(n for n, _ in places.values()) == (len(timeline) - 2) * every,
           f"{places}")

    # 3. 100 ms buckets: 4 us/launch except where the window lies.
    b = p.buckets(timeline, every, 100_000_000)
    expect("buckets", len(b) >= 28 and min(b) == 4.0 and max(b) > 4.0, f"{b[:12]}")

    return finish("continuous_probe.py logic")


if __name__ == "__main__":
    sys.exit(main())
