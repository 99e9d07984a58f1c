#!/usr/bin/env python3
"""Production modes on the GPU (issue 5), scaled down to fit the suite's budget.

  modes.py [--cutrace BIN] [--bin-dir DIR] [--n 1500000] [--rounds 2] [--json-out F]

The issue asks for minutes-long runs; this runs ct_launch_storm for about 6 s
per run (the suite gives the step ~120 s of GPU time), with the windows scaled
to match (continuous: 1 s window every 5 s instead of every 60 s):

 1. overhead: bare vs --mode summary (1 s intervals) vs --mode continuous
    (CUTRACE_WINDOW=1s, CUTRACE_PERIOD=5s), interleaved A B C A B C, median
    us/launch and the ratios to bare (figures), with the RSS of each run
    sampled from /proc every 0.2 s (first, middle, last, peak: flat or not);
 2. summary correctness: the summary trace counts every launched kernel
    (statistics and `cutrace kernels` on the summary packets);
 3. continuous: one self-contained chunk per window, each cleanly ended;
 4. disk cap: trace mode with CUTRACE_MAX_FILE_SIZE=2M, CUTRACE_MAX_DISK=8M:
    the chunks left on disk stay under the cap, the oldest were deleted, and
    `cutrace info` shows the chunk index and the deletions;
 5. flight recorder: continuous mode (1 s every 3 s) with
    CUTRACE_FLIGHT_RECORDER=30s; SIGUSR2 after the second window closed; the
    dump must hold every kernel of that window (by correlation id) while the
    program runs on and exits 0.

With --long-s S it runs the issue's minutes-long plan instead (the suite's
opt-in step modes_long), ct_launch_storm sized from its bare rate:

 bare (S/2) | continuous, 1 s window every 60 s (S) | bare (S/2) |
 [--long-summary: summary, 10 s intervals (S/2)] | trace mode rotating at
 16M under CUTRACE_MAX_DISK=48M | continuous with a 30 s flight recorder,
 1 s windows every side_s/3 | continuous between windows, without and with
 the flight recorder (each --side-s, default 30 s)

reporting each mode's us/launch against the two bare runs that bracket the
continuous one, RSS over time (flat: growth over the second half), disk use
against the cap, and a flight-recorder dump (SIGUSR2 once the third window
closed) that must hold every kernel of that window. The bracketing bare runs
and the continuous one also keep a timeline (ct_launch_storm --timeline,
about 10 ms a step): the continuous run's time beyond its own median step,
less the bare runs' (their jitter), is what its windows and their edges cost
within one process; and where the CPU's instruction counter is exposed, the
launching thread's instructions per launch compare the runs without the
host's speed in them. --cpus pins the storm.

Exit 0 when every check passed, 1 when one failed, 77 without a GPU.
python3 stdlib only.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import validate as v  # noqa: E402
from checklist import check, checks  # noqa: E402


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_app(app_cmd: list[str], env: dict[str, str], truth: Path, timeout: float,
            on_tick=None) -> dict:
    """Runs the app, sampling its RSS; returns truth, rss samples (KiB), wall."""
    truth.unlink(missing_ok=True)
    t0 = time.monotonic()
    proc = subprocess.Popen(app_cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    rss = []
    try:
        while proc.poll() is None:
            if time.monotonic() - t0 > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                raise RuntimeError(f"timed out after {timeout}s")
            r = rss_kib(proc.pid)
            if r:
                rss.append(r)
            if on_tick:
                on_tick(proc, time.monotonic() - t0)
            time.sleep(0.2)
    finally:
        out, err = proc.communicate()
    if proc.returncode != 0 or not truth.exists():
        raise RuntimeError(f"exited {proc.returncode}: {err.decode(errors='replace').strip()[-400:]}")
    return {"truth": json.loads(truth.read_text()), "rss": rss, "wall_s": time.monotonic() - t0,
            "stderr": err.decode(errors="replace")}


def cli_json(cutrace: str, *args: str) -> dict:
    r = subprocess.run([cutrace, *args, "--format", "json"], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"cutrace {' '.join(args)}: {r.stderr.strip()[-300:]}")
    return json.loads(r.stdout)


def kernel_correlations(cutrace: str, trace: Path, work: Path) -> set[int]:
    out = work / (trace.name + ".csv")
    subprocess.run([cutrace, "export", str(trace), "--format", "csv", "-o", str(out) + "/"],
                   capture_output=True, timeout=120, check=True)
    with open(out / "kernels.csv", newline="") as f:
        return {int(row["correlation"]) for row in csv.DictReader(f)}


def rss_figure(rss: list[int]) -> dict:
    if not rss:
        return {}
    half = rss[len(rss) // 2:]
    return {"first_mib": round(rss[0] / 1024, 1), "mid_mib": round(rss[len(rss) // 2] / 1024, 1),
            "last_mib": round(rss[-1] / 1024, 1), "peak_mib": round(max(rss) / 1024, 1),
            "second_half_growth_mib": round((max(half) - half[0]) / 1024, 1), "samples": len(rss)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cutrace", default=str(HERE.parents[1] / "build" / "bin" / "cutrace"))
    p.add_argument("--bin-dir", default=None)
    p.add_argument("--lib", default=None, help="libcutrace_injection.so (default: ../lib of cutrace)")
    p.add_argument("--n", type=int, default=1500000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--work", default="/tmp/cutrace-validate/modes")
    p.add_argument("--timeout", type=int, default=60)
    p.add_argument("--json-out", default=None)
    p.add_argument("--long-s", type=int, default=0,
                   help="run the minutes-long plan, the continuous run lasting about this long")
    p.add_argument("--us-per-launch", type=float, default=4.0,
                   help="bare launch cost used to size the long runs")
    p.add_argument("--long-summary", action="store_true", help="with --long-s: a summary-mode run too")
    p.add_argument("--side-s", type=int, default=30,
                   help="with --long-s: length of the rotation, flight-recorder and between-window runs")
    p.add_argument("--cpus", default=None,
                   help="with --long-s: run the launch storm pinned to these CPUs (taskset -c)")
    args = p.parse_args()
    args.pin = ["taskset", "-c", args.cpus] if args.cpus else []
    if not v.has_gpu():
        print("skipped: no GPU")
        return v.SKIP
    v.install_stop_handlers()
    cutrace = str(Path(args.cutrace).resolve())
    lib = str(Path(args.lib) if args.lib else Path(cutrace).parent.parent / "lib" / "libcutrace_injection.so")
    app = str(Path(args.bin_dir or Path(cutrace).parent) / "ct_launch_storm")
    work = Path(args.work)
    subprocess.run(["rm", "-rf", str(work)])
    work.mkdir(parents=True)
    truth = work / "truth.json"
    base_env = v.clean_env()

    def traced_env(out: Path, **extra: str) -> dict[str, str]:
        out.mkdir(parents=True, exist_ok=True)
        e = dict(base_env)
        e["CUDA_INJECTION64_PATH"] = lib
        e["CUTRACE_OUTPUT"] = str(out) + "/"
        e.update(extra)  # continuous mode's defaults detach CUPTI between windows
        return e

    variants = {
        "bare": lambda i: base_env,
        "summary": lambda i: traced_env(work / f"summary-{i}", CUTRACE_MODE="summary",
                                        CUTRACE_SUMMARY_INTERVAL="1s"),
        "continuous": lambda i: traced_env(work / f"continuous-{i}", CUTRACE_MODE="continuous",
                                           CUTRACE_WINDOW="1s", CUTRACE_PERIOD="5s"),
    }
    if args.long_s > 0:
        return long_plan(args, cutrace, app, work, truth, base_env, traced_env)
    app_cmd = [app, "--n", str(args.n), "--truth", str(truth)]
    # Continuous mode's runs are sized by time too: at least 6.5 s of launches,
    # so the second window (5 s after CUDA starts) always sees some, however
    # fast the host (a fast host once finished the n launches within one window).
    cont_cmd = app_cmd + ["--min-ms", "6500"]
    last_truth: dict[str, dict] = {}
    figures: dict = {"n": args.n, "rounds": args.rounds, "scaled": "~7 s runs, window 1 s / period 5 s"}
    us: dict[str, list[float]] = {k: [] for k in variants}
    rss: dict[str, list[dict]] = {k: [] for k in variants}
    try:
        # No warm-up run: the suite's overhead step ran the same app just before.
        for i in range(args.rounds):
            for name, env in variants.items():
                r = run_app(cont_cmd if name == "continuous" else app_cmd, env(i), truth, args.timeout)
                last_truth[name] = r["truth"]
                us[name].append(float(r["truth"]["launch"]["us_per_launch"]))
                rss[name].append(rss_figure(r["rss"]))
    except RuntimeError as e:
        check("overhead runs", False, str(e))
        return finish(figures, args.json_out)
    med = {k: statistics.median(x) for k, x in us.items()}
    figures["us_per_launch"] = us
    figures["median_us_per_launch"] = {k: round(x, 3) for k, x in med.items()}
    figures["ratio_to_bare"] = {k: round(med[k] / med["bare"], 4) for k in med if k != "bare"}
    figures["rss"] = rss
    print(f"FIGURE modes overhead: bare {med['bare']:.2f}, summary {med['summary']:.2f} "
          f"(x{med['summary'] / med['bare']:.3f}), continuous {med['continuous']:.2f} "
          f"(x{med['continuous'] / med['bare']:.3f}) us/launch (median of {args.rounds}, "
          f"A B C interleaved, n={args.n}; scaled: 1 s window every 5 s, not every 60 s)", flush=True)
    for name in variants:
        last = rss[name][-1]
        print(f"FIGURE rss {name}: {last}", flush=True)

    # 2. Summary: every kernel counted, and the reports read summary packets.
    total = args.n + 100  # the storm's warm-up launches
    sfiles = sorted((work / f"summary-{args.rounds - 1}").glob("*.trace"))
    if check("summary: one trace file", len(sfiles) == 1, ", ".join(f.name for f in sfiles)):
        info = cli_json(cutrace, "info", str(sfiles[0]))["files"][0]
        stats = info.get("statistics") or {}
        check("summary: statistics count every kernel", stats.get("kernels") == total,
              f"{stats.get('kernels')} of {total}")
        check("summary: no events stored", info["events_total"] == 0, f"{info['events_total']} events")
        check("summary: clean shutdown", info["clean_shutdown"])
        figures["summary_file_bytes"] = info["file_bytes"]
        try:
            k = cli_json(cutrace, "kernels", str(sfiles[0]))
            counted = sum(row.get("count", 0) for row in k.get("kernels", []))
            check("summary: cutrace kernels counts every kernel", counted == total,
                  f"{counted} of {total}")
            om = subprocess.run([cutrace, "summary", "--format", "openmetrics", str(sfiles[0])],
                                capture_output=True, text=True, timeout=60)
            check("summary: openmetrics export ends in # EOF",
                  om.returncode == 0 and om.stdout.endswith("# EOF\n"), om.stderr.strip()[-200:])
        except RuntimeError as e:
            check("summary: cutrace kernels reads summary packets", False, str(e))

    # 3. Continuous: one clean, self-contained chunk per window.
    cfiles = sorted((work / f"continuous-{args.rounds - 1}").glob("*.trace"))
    windows = []
    for f in cfiles:
        info = cli_json(cutrace, "info", str(f))["files"][0]
        windows.append({"file": f.name, "kernels": info["events"]["kernels"],
                        "clean": info["clean_shutdown"], "chunk": info["header"].get("chunk_index", 0),
                        "bytes": info["file_bytes"]})
    figures["continuous_windows"] = windows
    check("continuous: at least 2 windows", len(windows) >= 2, f"{len(windows)} chunks")
    check("continuous: every window's chunk is complete", all(w["clean"] for w in windows))
    check("continuous: every window has kernels", all(w["kernels"] > 0 for w in windows),
          ", ".join(str(w["kernels"]) for w in windows))
    cont_total = int(last_truth["continuous"]["launch"]["n"]) + 100  # the storm's warm-up launches
    traced_fraction = sum(w["kernels"] for w in windows) / cont_total
    figures["continuous_traced_fraction"] = round(traced_fraction, 3)
    check("continuous: traced only a fraction of the run", traced_fraction < 0.8,
          f"{traced_fraction:.2f} of the kernels")

    # 4. Disk cap with rotation.
    cap_dir = work / "cap"
    cap = 8 << 20
    try:
        run_app(app_cmd, traced_env(cap_dir, CUTRACE_MAX_FILE_SIZE="2M", CUTRACE_MAX_DISK="8M"),
                truth, args.timeout)
        left = sorted(cap_dir.glob("*.trace"))
        used = sum(f.stat().st_size for f in left)
        figures["disk_cap"] = {"cap_bytes": cap, "used_bytes": used, "chunks_left": len(left)}
        print(f"FIGURE disk: {used / 2**20:.1f} MiB in {len(left)} chunks, cap {cap >> 20} MiB",
              flush=True)
        check("disk cap: chunks on disk within the cap", used <= cap, f"{used} <= {cap}")
        last = max(left, key=lambda f: cli_json(cutrace, "info", str(f))["files"][0]["header"].get("chunk_index", 0))
        h = cli_json(cutrace, "info", str(last))["files"][0]["header"]
        figures["disk_cap"]["last_chunk_index"] = h.get("chunk_index", 0)
        figures["disk_cap"]["chunks_deleted"] = (h.get("rotation") or {}).get("chunks_deleted", 0)
        check("disk cap: rotated and deleted the oldest",
              h.get("chunk_index", 0) >= 2 and (h.get("rotation") or {}).get("chunks_deleted", 0) >= 1,
              f"last chunk {h.get('chunk_index')}, {(h.get('rotation') or {}).get('chunks_deleted')} deleted")
    except (RuntimeError, ValueError) as e:
        check("disk cap run", False, str(e))

    # 5. Flight recorder, triggered by SIGUSR2 after the second window closed.
    fr_dir = work / "flight"
    sent = {"at": None}

    def trigger(proc, _t):
        chunk1 = list(fr_dir.glob("*.1.trace"))
        if sent["at"] is None and chunk1 and time.time() - chunk1[0].stat().st_mtime < 60:
            # The second window (chunk 1) lasts 1 s from its creation; wait for its end marker.
            info = subprocess.run([cutrace, "info", str(chunk1[0]), "--format", "json"],
                                  capture_output=True, text=True)
            if info.returncode == 0 and json.loads(info.stdout)["files"][0]["clean_shutdown"]:
                os.kill(proc.pid, signal.SIGUSR2)
                sent["at"] = _t
    try:
        r = run_app([app, "--n", str(args.n * 3 // 2), "--truth", str(truth)],
                    traced_env(fr_dir, CUTRACE_MODE="continuous", CUTRACE_WINDOW="1s",
                               CUTRACE_PERIOD="3s", CUTRACE_FLIGHT_RECORDER="30s"),
                    truth, args.timeout * 2, on_tick=trigger)
        check("flight recorder: SIGUSR2 sent while the program ran", sent["at"] is not None,
              f"at {sent['at']:.1f} s" if sent["at"] else "chunk 1 never completed")
        dumps = sorted(fr_dir.glob("*.flight-*.trace"))
        if check("flight recorder: one dump written", len(dumps) == 1, ", ".join(d.name for d in dumps)):
            window = kernel_correlations(cutrace, next(fr_dir.glob("*.1.trace")), work)
            dumped = kernel_correlations(cutrace, dumps[0], work)
            figures["flight_recorder"] = {"window_kernels": len(window), "dump_kernels": len(dumped),
                                          "signal_at_s": round(sent["at"] or 0, 2)}
            check("flight recorder: the dump holds every kernel of the last window",
                  len(window) > 0 and window <= dumped,
                  f"{len(window & dumped)} of {len(window)} (dump holds {len(dumped)})")
            info = cli_json(cutrace, "info", str(dumps[0]))["files"][0]
            check("flight recorder: dump is a clean trace naming its trigger",
                  info["clean_shutdown"] and "SIGUSR2" in info["header"].get("chunk_reason", ""),
                  info["header"].get("chunk_reason", ""))
        check("flight recorder: the program ran on to the end", True,
              f"exit 0 after {r['wall_s']:.1f} s")
    except (RuntimeError, StopIteration, subprocess.CalledProcessError) as e:
        check("flight recorder run", False, str(e))
    return finish(figures, args.json_out)


def long_plan(args, cutrace: str, app: str, work: Path, truth: Path, base_env: dict,
              traced_env) -> int:
    """The issue's minutes-long runs (see the module docstring)."""
    rate = args.us_per_launch * 1e-6            # bare s per launch, sizes every run
    half = int(args.long_s / 2 / rate)
    full = 2 * half
    side = int(args.side_s / rate)              # the rotation and flight-recorder runs
    figures: dict = {"long_s": args.long_s, "n_half": half, "n_full": full, "n_side": side}
    flight = work / "long-flight"
    # The flight recorder gets a run of its own, with windows every side_s / 3;
    # SIGUSR2 once chunk 2 (the third window) has closed. (A first long run
    # with the recorder in the continuous run cost 1.27x bare: the
    # between-window runs below tell what the off time costs with and without it.)
    sent = {"at": None, "chunk": None}
    last_chunk = 2

    def trigger(proc, t):
        if sent["at"] is not None:
            return
        files = list(flight.glob(f"*.{last_chunk}.trace"))
        if not files:
            return
        info = subprocess.run([cutrace, "info", str(files[0]), "--format", "json"],
                              capture_output=True, text=True)
        if info.returncode == 0 and json.loads(info.stdout)["files"][0]["clean_shutdown"]:
            os.kill(proc.pid, signal.SIGUSR2)
            sent["at"], sent["chunk"] = t, files[0]

    plan = [
        # The rotation and flight-recorder runs first: they are checked as
        # soon as they end, so a step short of time still has their verdicts.
        ("trace", side, traced_env(work / "long-trace", CUTRACE_MAX_FILE_SIZE="16M",
                                   CUTRACE_MAX_DISK="48M"), None),
        ("flight", side, traced_env(flight, CUTRACE_MODE="continuous", CUTRACE_WINDOW="1s",
                                    CUTRACE_PERIOD=f"{max(3, args.side_s // 3)}s",
                                    CUTRACE_FLIGHT_RECORDER="30s"), trigger),
        ("bare-1", half, base_env, None),
        ("continuous", full, traced_env(work / "long-continuous", CUTRACE_MODE="continuous",
                                        CUTRACE_WINDOW="1s", CUTRACE_PERIOD="60s"), None),
        ("bare-2", half, base_env, None),
        # Between windows only (a 10 ms window at start, the next one after
        # the run), without and with the flight recorder: what the off time costs.
        ("between", side, traced_env(work / "long-between", CUTRACE_MODE="continuous",
                                     CUTRACE_WINDOW="10ms", CUTRACE_PERIOD="600s"), None),
        ("between+flight", side, traced_env(work / "long-between-flight", CUTRACE_MODE="continuous",
                                            CUTRACE_WINDOW="10ms", CUTRACE_PERIOD="600s",
                                            CUTRACE_FLIGHT_RECORDER="30s"), None),
    ]
    if args.long_summary:
        plan.insert(3, ("summary", half, traced_env(work / "long-summary", CUTRACE_MODE="summary",
                                                    CUTRACE_SUMMARY_INTERVAL="10s"), None))
    def disk_checks() -> None:
        # Disk within the cap, rotation seen by cutrace info.
        cap = 48 << 20
        left = sorted((work / "long-trace").glob("*.trace"))
        used = sum(f.stat().st_size for f in left)
        figures["disk"] = {"cap_bytes": cap, "used_bytes": used, "chunks_left": len(left)}
        check("long trace: disk within the 48 MiB cap", 0 < used <= cap,
              f"{used / 2**20:.1f} MiB in {len(left)} chunks")
        if left:
            heads = [cli_json(cutrace, "info", str(f))["files"][0]["header"] for f in left]
            last = max(heads, key=lambda h: h.get("chunk_index", 0))
            deleted = (last.get("rotation") or {}).get("chunks_deleted", 0)
            figures["disk"].update({"last_chunk_index": last.get("chunk_index", 0), "chunks_deleted": deleted})
            print(f"FIGURE long disk: {used / 2**20:.1f} MiB in {len(left)} chunks (cap 48 MiB), last "
                  f"chunk {last.get('chunk_index', 0)}, {deleted} deleted", flush=True)
            check("long trace: rotated, oldest chunks deleted", deleted >= 1, f"{deleted} deleted")

    def flight_checks() -> None:
        if check("long flight recorder: SIGUSR2 after a window closed", sent["at"] is not None,
                 f"at {sent['at']:.1f} s" if sent["at"] else f"chunk {last_chunk} never completed"):
            dumps = sorted(flight.glob("*.flight-*.trace"))
            if check("long flight recorder: one dump", len(dumps) == 1, ", ".join(d.name for d in dumps)):
                window = kernel_correlations(cutrace, sent["chunk"], work)
                dumped = kernel_correlations(cutrace, dumps[0], work)
                figures["flight_recorder"] = {"window_kernels": len(window), "dump_kernels": len(dumped),
                                              "signal_at_s": round(sent["at"], 1)}
                check("long flight recorder: the dump holds every kernel of the last window",
                      len(window) > 0 and window <= dumped,
                      f"{len(window & dumped)} of {len(window)} (dump holds {len(dumped)})")

    # The bracketing bare runs and the continuous one keep a timeline (the
    # time every ~10 ms of launches): the continuous run's cost inside its
    # windows and at their edges is then measured against its own steady
    # rate between windows, in the same process, apart from the process-to-
    # process spread that the ratios to bare carry.
    every = max(1, int(0.01 / rate))
    timelines: dict[str, list[int]] = {}
    runs: dict[str, dict] = {}
    for name, n, env, tick in plan:
        budget = max(60.0, 3 * n * rate * 1.6)
        cmd = [app, "--n", str(n), "--truth", str(truth)]
        if name in ("bare-1", "continuous", "bare-2"):
            cmd += ["--timeline", str(every)]
        try:
            r = run_app(args.pin + cmd, env, truth, budget, on_tick=tick)
        except RuntimeError as e:
            check(f"long {name} run", False, str(e))
            return finish(figures, args.json_out)
        launch = r["truth"]["launch"]
        if "timeline_ns" in launch:
            timelines[name] = launch["timeline_ns"]
        runs[name] = {"n": n, "us_per_launch": float(launch["us_per_launch"]),
                      "wall_s": round(r["wall_s"], 1), "rss": rss_figure(r["rss"]),
                      "stderr": r["stderr"].strip().splitlines()[-3:]}
        if "instructions_per_launch" in launch:
            # The launching thread's user-space instructions, where the CPU's
            # counter is exposed: the same work gives the same count from one
            # process to the next, so the runs compare without the host's speed.
            runs[name]["instructions_per_launch"] = float(launch["instructions_per_launch"])
        if launch.get("cpu_calibration_ns_before") and launch.get("cpu_calibration_ns_after"):
            # The process's CPU speed (ct_launch_storm's calibration loop).
            runs[name]["cpu_calibration_ns"] = (launch["cpu_calibration_ns_before"] +
                                                launch["cpu_calibration_ns_after"]) / 2
        print(f"FIGURE long {name}: {runs[name]['us_per_launch']:.3f} us/launch, "
              f"{runs[name]['wall_s']} s, rss {runs[name]['rss']}", flush=True)
        # Checked at once, so a step that runs out of time keeps what it saw.
        if name == "trace":
            disk_checks()
        elif name == "flight":
            flight_checks()
    figures["runs"] = runs
    bare = statistics.mean([runs["bare-1"]["us_per_launch"], runs["bare-2"]["us_per_launch"]])
    spread = abs(runs["bare-1"]["us_per_launch"] - runs["bare-2"]["us_per_launch"]) / bare
    ratios = {k: round(runs[k]["us_per_launch"] / bare, 4) for k in runs if not k.startswith("bare")}
    figures["ratio_to_bare"] = ratios
    figures["bare_spread"] = round(spread, 4)
    print(f"FIGURE modes long: bare {bare:.3f} us/launch (the two bare runs differ by "
          f"{100 * spread:.2f}%), " + ", ".join(f"{k} x{v:.4f}" for k, v in ratios.items()), flush=True)
    # The same per unit of each process's CPU speed, which moves from one
    # process to the next by more than the 1% judged here.
    judged, how = ratios["continuous"], f"x{ratios['continuous']} (bare runs differ by {100 * spread:.2f}%)"
    if all("cpu_calibration_ns" in x for x in runs.values()):
        per = {k: x["us_per_launch"] / x["cpu_calibration_ns"] for k, x in runs.items()}
        pbare = statistics.mean([per["bare-1"], per["bare-2"]])
        pspread = abs(per["bare-1"] - per["bare-2"]) / pbare
        pratios = {k: round(v / pbare, 4) for k, v in per.items() if not k.startswith("bare")}
        figures["ratio_to_bare_per_cpu_speed"] = pratios
        figures["bare_spread_per_cpu_speed"] = round(pspread, 4)
        print(f"FIGURE modes long per unit of CPU speed: the two bare runs differ by "
              f"{100 * pspread:.2f}%, " + ", ".join(f"{k} x{v:.4f}" for k, v in pratios.items()), flush=True)
        judged = pratios["continuous"]
        how = (f"x{judged} per unit of CPU speed (bare runs differ by {100 * pspread:.2f}%); "
               f"wall clock alone {how}")
    # A figure, not a check: two runs of one program differ here by more
    # than the 1% at stake (timings are not asserted). The < 1% target is
    # measured by bench/launch_instructions.py (SUITE_STEPS=launch_instructions).
    figures["continuous_judged"] = judged
    print(f"FIGURE long: continuous (1 s every 60 s) against bare: {how}; the < 1% target is "
          f"bench/launch_instructions.py's", flush=True)
    if all(k in timelines for k in ("bare-1", "continuous", "bare-2")):
        figures["in_run"] = in_run_figures(timelines, every)
    instructions = {k: x["instructions_per_launch"] for k, x in runs.items() if "instructions_per_launch" in x}
    if "bare-1" in instructions and "bare-2" in instructions:
        ib = (instructions["bare-1"] + instructions["bare-2"]) / 2
        figures["instructions_x_bare"] = {k: round(x / ib, 5) for k, x in instructions.items()}
        print("FIGURE modes long instructions: the launching thread's user-space instructions per "
              f"launch, bare {instructions['bare-1']:.1f} and {instructions['bare-2']:.1f}; " +
              ", ".join(f"{k} {x:.1f} (x{x / ib:.4f})" for k, x in instructions.items()
                        if not k.startswith("bare")), flush=True)
    else:
        print("FIGURE modes long instructions: no instruction counter on this machine", flush=True)
    # Flat memory: over the second half of each traced run RSS grows by at
    # most 16 MiB (the pool and queue are allocated up front or capped).
    for k in runs:
        # The flight recorder's ring fills for its first 30 s, as long as that run.
        if k.startswith("bare") or k == "flight":
            continue
        g = runs[k]["rss"].get("second_half_growth_mib")
        check(f"long {k}: memory flat over the second half", g is not None and g <= 16,
              f"{g} MiB growth; {runs[k]['rss']}")
    if "summary" in runs:
        total = half + 100
        sfiles = sorted((work / "long-summary").glob("*.trace"))
        if check("long summary: one trace file", len(sfiles) == 1, ", ".join(f.name for f in sfiles)):
            info = cli_json(cutrace, "info", str(sfiles[0]))["files"][0]
            stats = info.get("statistics") or {}
            check("long summary: every kernel counted", stats.get("kernels") == total,
                  f"{stats.get('kernels')} of {total}")
    # Continuous: one self-contained chunk per window.
    windows = sorted((work / "long-continuous").glob("*.trace"))
    wk = [cli_json(cutrace, "info", str(f))["files"][0] for f in windows]
    figures["continuous_windows"] = [{"kernels": i["events"]["kernels"], "clean": i["clean_shutdown"]}
                                     for i in wk]
    want_windows = (args.long_s - 5) // 60 + 1
    check("long continuous: one clean chunk per window, each with kernels",
          len(wk) >= want_windows and all(i["clean_shutdown"] and i["events"]["kernels"] > 0 for i in wk),
          f"{len(wk)} chunks (want {want_windows}): " + ", ".join(str(i["events"]["kernels"]) for i in wk))
    return finish(figures, args.json_out)


def steps_excess(timeline_ns: list[int]) -> tuple[float, float]:
    """A timeline's steady step (the median, ns) and the share of the run's
    time spent beyond it (the steps' sum over n x the median, less 1)."""
    steps = [b - a for a, b in zip(timeline_ns, timeline_ns[1:])]
    steady = statistics.median(steps)
    return steady, sum(steps) / (steady * len(steps)) - 1


def in_run_figures(timelines: dict[str, list[int]], every: int) -> dict:
    """The continuous run's time beyond its own steady rate (its windows, their
    edges, its jitter) less the bare runs' (their jitter alone): what the
    windows cost, measured within one process; and the steady rates' ratio
    (between windows against bare, across processes)."""
    fig = {"every": every}
    for k, t in timelines.items():
        steady, excess = steps_excess(t)
        fig[k] = {"steady_us_per_launch": round(steady / every / 1e3, 4), "excess_pct": round(excess * 100, 3),
                  "steps": len(t) - 1}
    jitter = (fig["bare-1"]["excess_pct"] + fig["bare-2"]["excess_pct"]) / 2
    bare_steady = (fig["bare-1"]["steady_us_per_launch"] + fig["bare-2"]["steady_us_per_launch"]) / 2
    fig["windows_pct"] = round(fig["continuous"]["excess_pct"] - jitter, 3)
    fig["steady_ratio"] = round(fig["continuous"]["steady_us_per_launch"] / bare_steady, 4)
    fig["bare_steady_spread_pct"] = round(abs(fig["bare-1"]["steady_us_per_launch"] -
                                              fig["bare-2"]["steady_us_per_launch"]) / bare_steady * 100, 3)
    print(f"FIGURE modes long in-run: continuous spends {fig['continuous']['excess_pct']:.3f}% of its "
          f"time beyond its own steady rate, the bare runs {fig['bare-1']['excess_pct']:.3f}% and "
          f"{fig['bare-2']['excess_pct']:.3f}% (their jitter): windows and edges {fig['windows_pct']:+.3f}%; "
          f"steady rate between windows x{fig['steady_ratio']:.4f} bare's (the bare runs' steady rates "
          f"{fig['bare_steady_spread_pct']:.2f}% apart; steps of {every} launches)", flush=True)
    return fig


def finish(figures: dict, json_out: str | None) -> int:
    failed = [c for c in checks if c["verdict"] == "FAIL"]
    if json_out:
        Path(json_out).write_text(json.dumps({"case": "modes", "figures": figures, "checks": checks},
                                             indent=1))
    print(f"modes: {len(checks) - len(failed)} of {len(checks)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
