#!/usr/bin/env python3
"""bench/launch_instructions.py's own logic, without a GPU: callgrind's
dumps read back as steps (a real callgrind run of a C program whose steps
do known multiples of the same work, zeroed and dumped by the launch
storm's client requests), a loop placed against the window edges of a debug
log, and instructions per launch.

  launch_instructions_test.py SOURCE_DIR
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from script_checks import expect, finish

PROGRAM = r"""
#include <valgrind/callgrind.h>
volatile long sink;
static void work(long n) { for (long i = 0; i < n; ++i) sink += i; }
int main(void) {
  work(500000);                  /* before the loop: zeroed away */
  CALLGRIND_ZERO_STATS;
  for (int s = 1; s <= 4; ++s) {
    work(100000L * s);           /* step s: s times step 1's work */
    CALLGRIND_DUMP_STATS_AT("launch_storm step");
  }
  CALLGRIND_DUMP_STATS_AT("something else");  /* not a step */
  work(300000);                  /* after: in the end-of-program dump only */
  return 0;
}
"""


def callgrind_part(li) -> bool:
    """False (after saying why) where valgrind, its header or a C compiler
    is missing (scripts/install-deps.sh installs valgrind)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not (shutil.which("valgrind") and cc and Path("/usr/include/valgrind/callgrind.h").exists()):
        print("callgrind part skipped: no valgrind, callgrind.h or C compiler")
        return False
    with tempfile.TemporaryDirectory() as d:
        src, exe = Path(d) / "steps.c", Path(d) / "steps"
        src.write_text(PROGRAM)
        subprocess.run([cc, "-O1", str(src), "-o", str(exe)], check=True)
        # Every thread's counts in one file per dump (cg.1), or each
        # thread's in its own (cg.1-01): read back the same either way.
        for threads in ("no", "yes"):
            out = Path(d) / threads
            out.mkdir()
            r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg",
                                "--dump-line=no", f"--separate-threads={threads}", str(exe)],
                               capture_output=True, text=True, timeout=100)
            expect(f"callgrind ran ({threads})", r.returncode == 0, r.stderr[-300:])
            names = sorted(f.name for f in out.iterdir())
            steps = li.read_steps(out / "cg")
            expect(f"four steps, in order ({threads}: {names})", len(steps) == 4, f"{steps}")
            if len(steps) != 4:
                continue
            unit = steps[0]
            for s, v in enumerate(steps, 1):
                # The same loop s times: within the few instructions a dump's
                # client request costs.
                expect(f"step {s} is {s} x step 1 ({threads})", abs(v - s * unit) < 0.001 * s * unit, f"{steps}")
            expect(f"a step counts the loop ({threads})", 400000 <= unit <= 1200000, f"{unit}")
            pl = li.per_launch(steps, 1000)
            expect("per launch: the mean", abs(pl["per_launch"] - sum(steps) / 4000) < 1e-9, f"{pl}")
            expect("median step", pl["median_step"] == (steps[1] + steps[2]) / 2 / 1000, f"{pl}")
    return True


def main() -> int:
    sys.path.insert(0, str(Path(sys.argv[1]).resolve() / "bench"))
    import launch_instructions as li  # noqa: E402  (the module under test)

    ran = callgrind_part(li)

    # Where the loop lies against the edges injection/production/production_controller.cc logs.
    log = "\n".join([
        "cutrace: window opens at 1000 ns (monotonic): activity on with the session",
        "cutrace: window closes at 2000 ns (monotonic): activity off 240 us, flush 900 us",
        "cutrace: CUPTI detached at 2100 ns (monotonic): forced flush 120 us, cuptiFinalize 350 us",
        "cutrace: window opens at 9000 ns (monotonic): activity on 180 us",
        "cutrace: window closes at 9500 ns (monotonic): activity off 200 us, flush 800 us",
    ])
    expect("between windows", li.where_the_loop_was(log, (3000, 8000)) == "between")
    expect("inside a window", li.where_the_loop_was(log, (1200, 1900)) == "inside")
    expect("across an edge", li.where_the_loop_was(log, (1500, 3000)) == "mixed")
    expect("across a later window", li.where_the_loop_was(log, (3000, 9200)) == "mixed")
    open_log = "cutrace: window opens at 1000 ns (monotonic): activity on with the session"
    expect("inside a window still open", li.where_the_loop_was(open_log, (5000, 10 ** 15)) == "inside")
    expect("no windows at all: unknown", li.where_the_loop_was("", (1, 2)) == "unknown")
    expect("before the first window: unknown", li.where_the_loop_was(log, (100, 900)) == "unknown")
    expect("detached before the loop", li.detached_before(log, 3000) and not li.detached_before(log, 2000))

    # When the rest passed, ctest shows the callgrind part skipped.
    return finish("launch_instructions logic") or (0 if ran else 77)


if __name__ == "__main__":
    sys.exit(main())
