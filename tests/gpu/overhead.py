#!/usr/bin/env python3
"""Launch-storm overhead: ct_launch_storm bare vs under `cutrace run`, interleaved.

  overhead.py [--cutrace BIN] [--bin-dir DIR] [--n 100000] [--rounds 3] [--json-out F]

Runs A B A B ... (bare, traced) `--rounds` times so drift hits both, reads the
host time per launch each run measured itself (launch loop + final sync, from
its truth file), and prints the medians, the spread and their ratio. A figure,
not a test: it exits 0 unless a run failed, 77 without a GPU. python3 stdlib only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import validate as v  # noqa: E402


def one_run(cmd: list[str], truth: Path, timeout: int) -> float:
    truth.unlink(missing_ok=True)
    r = v.run(cmd, v.clean_env(), timeout)
    if r.status != 0 or not truth.exists():
        raise RuntimeError(f"{cmd[0]} exited {r.status}: {r.stderr.strip()[-300:]}")
    return float(json.loads(truth.read_text())["launch"]["us_per_launch"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cutrace", default=str(HERE.parents[1] / "build" / "bin" / "cutrace"))
    p.add_argument("--bin-dir", default=None)
    p.add_argument("--n", type=int, default=100000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--work", default="/tmp/cutrace-validate/overhead")
    p.add_argument("--timeout", type=int, default=120)
    p.add_argument("--json-out", default=None)
    args = p.parse_args()
    if not v.has_gpu():
        print("skipped: no GPU")
        return v.SKIP
    v.install_stop_handlers()
    cutrace = str(Path(args.cutrace).resolve())
    app = str(Path(args.bin_dir or Path(cutrace).parent) / "ct_launch_storm")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    truth = work / "truth.json"
    app_cmd = [app, "--n", str(args.n), "--truth", str(truth)]
    bare, traced = [], []
    try:
        one_run(app_cmd, truth, args.timeout)  # warm-up: driver load, page cache
        for i in range(args.rounds):
            bare.append(one_run(app_cmd, truth, args.timeout))
            out = work / f"traces-{i}"
            out.mkdir(exist_ok=True)
            for old in out.glob("*.trace"):
                old.unlink()
            traced.append(one_run([cutrace, "run", "--output", str(out), "--", *app_cmd], truth,
                                  args.timeout))
    except RuntimeError as e:
        print(f"FAIL overhead: {e}")
        return 1
    mb, mt = statistics.median(bare), statistics.median(traced)
    fig = {"n": args.n, "rounds": args.rounds, "bare_us_per_launch": bare,
           "traced_us_per_launch": traced, "bare_median": round(mb, 3),
           "traced_median": round(mt, 3), "ratio": round(mt / mb, 3)}
    print(f"FIGURE launch overhead: bare {mb:.2f} us/launch (runs {', '.join(f'{x:.2f}' for x in bare)}), "
          f"traced {mt:.2f} us/launch (runs {', '.join(f'{x:.2f}' for x in traced)}), "
          f"ratio {mt / mb:.3f} (median of {args.rounds}, A B interleaved, n={args.n})", flush=True)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(fig, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
