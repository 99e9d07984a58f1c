#!/usr/bin/env python3
"""Stand-ins for `cutrace` and the ct_* testapps, so validate_selftest.py can run
validate.py end to end on a machine without a GPU.

  fake_tools.py app NAME [--truth FILE] [app args]   behaves like ct_NAME: prints a
      line, writes a truth like the real app's, exits like it (status / signal).
  fake_tools.py cutrace run --output DIR -- APP ...   runs APP, then writes one fake
      trace per process into DIR, its reports derived from the app's truth.
  fake_tools.py cutrace REPORT FILE --format json     prints that report of a fake trace.

FAKE_TORCH is a stand-in `torch` module for torch_loop.py's workload.

A fake trace is a JSON file holding the reports themselves. It is a perfect
tracer unless FAKEBUG names one defect to inject (see BUGS); the self-test checks
that validate.py fails for each one and passes without.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

BUGS = ("kernel_count", "extra_kernel", "bytes", "pageable", "memset", "nvtx_depth",
        "nvtx_extra", "gpu_ops", "duration", "gap_short", "overlap_zero", "drops", "unclean",
        "no_trace", "stdout", "status", "hang", "stray_trace", "same_pid", "no_child_trace",
        "graph_ids")


def bug() -> str:
    return os.environ.get("FAKEBUG", "")


FAKE_TORCH = """
class _T:
    def __init__(self, v): self.v = v
    def __mul__(self, o): return _T(self.v * o)
    def __add__(self, o): return _T(self.v + o)
    def __eq__(self, o): return _T(self.v == o)
    def all(self): return self
    def item(self): return self.v
def ones(n, device=None): return _T(1)
class cuda:
    @staticmethod
    def is_available(): return True
    @staticmethod
    def synchronize(): pass
    class nvtx:
        @staticmethod
        def range_push(name): pass
        @staticmethod
        def range_pop(): pass
"""


# ---- the fake testapps ------------------------------------------------------------------------

def app_truth(name: str, args: dict[str, str]) -> dict:
    t: dict = {"app": name, "pid": os.getpid(), "kernels": {}, "copies": {},
               "memsets": {"count": 0, "bytes": 0}, "nvtx": []}
    if name == "demo":
        t["kernels"] = {"preprocess(float*, int)": 10, "matmul_naive(float*, float*, float*, int)": 10}
        t["copies"] = {"HtoD": {"count": 10, "bytes": 40960, "pageable_count": 0},
                       "DtoH": {"count": 20, "bytes": 40960 + 40, "pageable_count": 10}}
        t["memsets"] = {"count": 10, "bytes": 40}
        t["nvtx"] = [{"domain": "default", "name": "step", "depth": 0, "count": 10, "gpu_ops": 50},
                     {"domain": "default", "name": "compute", "depth": 1, "count": 10, "gpu_ops": 30}]
        t["timed_kernels"] = [{"name": "matmul_naive(float*, float*, float*, int)", "count": 10,
                               "event_avg_ns": 1_000_000, "event_min_ns": 990_000,
                               "event_max_ns": 1_010_000}]
    elif name == "idle_gaps":
        t["kernels"] = {"gap_kernel(unsigned long long)": 6}
        t["gaps"] = {"count": 5, "sleep_ns": 50_000_000, "slept_ns": [50_100_000] * 5}
    elif name == "overlap":
        t["kernels"] = {"spin_kernel(unsigned long long)": 2}
        t["copies"] = {"HtoD": {"count": 8, "bytes": 8 << 24, "pageable_count": 0}}
        t["overlap"] = {"min_fraction_of_copy": 0.5, "copy_event_ns": 5_000_000}
    elif name == "graph_replay":
        t["kernels"] = {"graph_kernel(float*, int)": 80, "direct_kernel(float*, int)": 1}
        t["graph"] = {"nodes": 8, "replays": 10, "graph_kernels": 80}
    elif name == "multi_gpu":
        t["device_count"] = 1
        t["skipped"] = "one GPU"
    elif name == "fork":
        t["kernels"] = {"parent_kernel(int*, int)": 40}
        t["children"] = [
            {"pid": os.getpid() + 100000, "kind": "fork_no_exec", "status": 0, "kernels": {}},
            {"pid": os.getpid() + 100001, "kind": "exec", "status": 0,
             "kernels": {"tiny_kernel(int*, int)": 1000}}]
    else:  # launch_storm, exit_thread, signal_self and the rest: just kernels
        n = int(args.get("n", "1000"))
        t["kernels"] = {"tiny_kernel(int*, int)": n}
        if name == "launch_storm":
            traced = bool(os.environ.get("CUTRACE_TRACED") or os.environ.get("LD_PRELOAD"))
            t["launch"] = {"n": n, "us_per_launch": 5.9 if traced else 4.5}
    if name == "exit_thread":
        t["exit_status"] = int(args.get("status", "0"))
    return t


def run_app(name: str, argv: list[str]) -> int:
    args, i = {}, 0
    while i < len(argv):
        key = argv[i][2:]
        args[key] = argv[i + 1] if i + 1 < len(argv) else ""
        i += 2
    truth = app_truth(name, args)
    traced = bool(os.environ.get("CUTRACE_TRACED") or os.environ.get("LD_PRELOAD"))
    if args.get("truth"):
        Path(args["truth"]).write_text(json.dumps(truth))
    print(f"{name}: done", flush=True)
    if traced and bug() == "stdout":
        print("extra line", flush=True)
    if traced and bug() == "hang":
        import time
        time.sleep(600)
    if os.environ.get("LD_PRELOAD") and os.environ.get("CUTRACE_OUTPUT"):
        write_traces(Path(os.environ["CUTRACE_OUTPUT"]), truth)
    if name == "signal_self":
        sig = signal.SIGINT if args.get("signal") == "INT" else signal.SIGTERM
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    status = int(args.get("status", "0"))
    if traced and bug() == "status":
        status += 1
    return status


# ---- the fake tracer --------------------------------------------------------------------------

def info_report(pid: int, kernels: int, copies: int, memsets: int, ranges: int) -> dict:
    stats = {"records_dropped_by_cupti": "0", "recordsDroppedQueueFull": 0, "invalid": []}
    if bug() == "drops":
        stats["records_dropped_by_cupti"] = "12"
    return {"files": [{"path": "x", "header": {"pid": pid}, "devices": [{}], "statistics": stats,
                       "events": {"kernels": kernels, "memcpys": copies, "memsets": memsets,
                                  "ranges": ranges, "api_calls": 0, "syncs": 0},
                       "clean_shutdown": bug() != "unclean", "truncated": False, "problems": []}]}


def reports_for(truth: dict) -> dict:
    kernels = dict(truth.get("kernels", {}))
    if "min_kernels" in truth:  # torch_loop: PyTorch launches a few more than the loop
        kernels["elementwise_kernel"] = truth["min_kernels"] + 3
    if kernels and bug() == "kernel_count":
        first = sorted(kernels)[0]
        kernels[first] -= 1
    if bug() == "extra_kernel":
        kernels["mystery_kernel()"] = 1
    timed = {t["name"]: t for t in truth.get("timed_kernels", [])}
    krows = []
    for name, count in kernels.items():
        avg = timed[name]["event_avg_ns"] - 2000 if name in timed else 5000
        if name in timed and bug() == "duration":
            avg = int(avg * 0.8)
        krows.append({"name": name, "count": count, "total_ns": avg * count, "avg_ns": avg,
                      "min_ns": avg - 1000, "max_ns": avg + 1000, "p50_ns": avg, "p99_ns": avg,
                      "stddev_ns": 10, "pct": 0.0})
    crows = []
    for kind, c in truth.get("copies", {}).items():
        row = {"kind": kind, "count": c["count"], "bytes": c["bytes"], "total_ns": 1000,
               "gbps": 1.0, "pageable_count": c["pageable_count"]}
        if kind == "HtoD" and bug() == "bytes":
            row["bytes"] += 1
        if kind == "DtoH" and bug() == "pageable":
            row["pageable_count"] = 0
        crows.append(row)
    m = truth.get("memsets", {"count": 0, "bytes": 0})
    if m["count"] or bug() == "memset":
        crows.append({"kind": "memset", "count": m["count"] + (bug() == "memset"),
                      "bytes": m["bytes"], "total_ns": 10, "gbps": 0.0, "pageable_count": 0})
    nrows = []
    for r in truth.get("nvtx", []):
        nrows.append({"domain": "default" if r["domain"] == "default" else r["domain"],
                      "name": r["name"], "depth": r["depth"] + (bug() == "nvtx_depth"),
                      "count": r["count"], "cpu_total_ns": 1, "cpu_avg_ns": 1, "cpu_min_ns": 1,
                      "cpu_max_ns": 1, "gpu_total_ns": 1,
                      "gpu_ops": r["gpu_ops"] - (bug() == "gpu_ops")})
    if bug() == "nvtx_extra":
        nrows.append({"domain": "default", "name": "phantom", "depth": 0, "count": 1, "gpu_ops": 0})
    devices = truth.get("devices_used") or [0]
    ov = truth.get("overlap")
    copy_ns = ov["copy_event_ns"] if ov else 0
    overlap_ns = 0 if (bug() == "overlap_zero" or not ov) else int(copy_ns * 0.95)
    orows = [{"device": d, "span_ns": 100, "busy_ns": 90, "idle_ns": 10, "compute_ns": 80,
              "copy_ns": copy_ns, "overlap_ns": overlap_ns, "compute_only_ns": 0,
              "copy_only_ns": 0} for d in devices]
    gaps = [{"start_ns": 0, "end_ns": 5000, "duration_ns": 5000, "before": "kernel:x",
             "after": "kernel:x", "cause": "unknown"}]
    g = truth.get("gaps")
    if g:
        long_ns = g["sleep_ns"] + 30_000 if bug() != "gap_short" else g["sleep_ns"] // 2
        gaps += [{"start_ns": 0, "end_ns": long_ns, "duration_ns": long_ns, "before": "kernel:x",
                  "after": "kernel:x", "cause": "host_sync"}] * g["count"]
    csv = None
    if "graph" in truth:
        n = truth["graph"]["graph_kernels"] - (bug() == "graph_ids")
        csv = "kind,name,graph_id\n" + "kernel,graph_kernel,7\n" * n + "kernel,direct_kernel,0\n"
    return {
        "info": info_report(truth["pid"], sum(kernels.values()),
                            sum(c["count"] for c in truth.get("copies", {}).values()),
                            m["count"], len(nrows)),
        "kernels": {"kernels": krows}, "memcpy": {"copies": crows}, "nvtx": {"ranges": nrows},
        "overlap": {"devices": orows},
        "gaps": {"devices": [{"device": 0, "idle_ns": 1, "gap_count": len(gaps), "gaps": gaps}]},
        "csv": csv,
    }


def write_traces(out_dir: Path, truth: dict) -> None:
    if bug() == "no_trace":
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"cutrace-fake-{truth['pid']}.trace").write_text(json.dumps(reports_for(truth)))
    for child in truth.get("children", []):
        if child["kind"] == "exec" and bug() != "no_child_trace":
            sub = {"pid": child["pid"], "kernels": child["kernels"]}
            (out_dir / f"cutrace-fake-{child['pid']}.trace").write_text(
                json.dumps(reports_for(sub)))
    if bug() == "same_pid":
        (out_dir / "cutrace-fake-dup.trace").write_text(json.dumps(reports_for(
            {"pid": truth["pid"], "kernels": {}})))
    if bug() == "stray_trace":
        stray = {"pid": 999999, "kernels": {}}
        (out_dir / "cutrace-fake-999999.trace").write_text(json.dumps(reports_for(stray)))


def run_cutrace(argv: list[str]) -> int:
    if argv[0] == "run":
        out_dir = Path(argv[argv.index("--output") + 1])
        cmd = argv[argv.index("--") + 1:]
        if "--truth" not in cmd:  # the real cutrace needs no truth; the fake derives from it
            cmd += ["--truth", str(out_dir / ".fake-truth.json")]
            out_dir.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, CUTRACE_TRACED="1")
        proc = subprocess.run(cmd, env=env)
        truth_path = Path(cmd[cmd.index("--truth") + 1])
        if truth_path.exists():
            write_traces(out_dir, json.loads(truth_path.read_text()))
        rc = proc.returncode
        return 128 - rc if rc < 0 else rc
    report, trace = argv[0], Path(argv[1])
    data = json.loads(trace.read_text())
    if report == "export":
        if data.get("csv") is None:
            return 1
        # Like the real `export --format csv -o DIR`: one CSV per event kind in DIR.
        out_dir = Path(argv[argv.index("-o") + 1])
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "kernels.csv").write_text(data["csv"])
        return 0
    if report == "summary":
        data["summary"] = {k: data[k] for k in ("kernels", "memcpy", "nvtx", "overlap")}
    print(json.dumps(data[report]))
    return 0


def main() -> int:
    role = sys.argv[1]
    if role == "app":
        return run_app(sys.argv[2], sys.argv[3:])
    return run_cutrace(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
