#!/usr/bin/env python3
"""Imports tests/data/kineto_small.json with the built `cutrace` and checks the
JSON reports against numbers worked out by hand from the fixture.

Device 0 intervals, in ns (ts/dur in us, rounded half away from zero):
  K1 sgemm   [1020001, 1120002)   ts 1020.001, dur 100.0005 -> 100001
  M1 HtoD    [1019999, 1069999)   ts 1019.9994 -> 1019999, 1 MiB pageable
  K2 relu    [1125000, 1135123)   dur 10.123456 -> 10123
  S1 memset  [1140000, 1142500)   4096 bytes
  K3 sgemm   [1150000, 1250000)   dur 99.9995 -> 100000
  M2 DtoH    [1260000, 1285000)   512 KiB to pinned memory
span 1285000-1019999 = 265001; compute = 100001+10123+100000 = 210124;
copy = 50000+2500+25000 = 77500; overlap = K1 n M1 = 1069999-1020001 = 49998;
busy = 210124+77500-49998 = 237626; idle = 27375 = the gaps 4998 + 4877 +
7500 + 10000. Idle by cause: every launch call (1011.5 .. 1053 us) comes
before the gaps, so the first three (4998 + 4877 + 7500 = 17375) are queued;
the DtoH after the last has no launch call in the fixture: 10000 unknown. NVTX: "forward" (CPU, depth 1) encloses the five launches
(correlations 101-105), so its GPU projection is 1250000-1019999 = 230001.

The fixture's "baseTimeNanoseconds" (1700000000000000000) is its realtime
anchor (trace time 0), its host process pid 1234 ("python3"). Gzipped, it
imports to the same trace; two ranks of it (rank 1's base one second later)
import in one step into one trace with both devices, each with the numbers above;
a third rank recorded 38 hours later is refused (--max-skew, default 1h).

usage: import_roundtrip_test.py CUTRACE SOURCE_DIR
"""
import gzip
import json
import os
import subprocess
import sys

from script_checks import expect as check
from script_checks import finish, run_text
from temp_dir import run_in_temp_dir

CUTRACE, SOURCE = sys.argv[1], sys.argv[2]
FIXTURE = os.path.join(SOURCE, "tests", "data", "kineto_small.json")


def cutrace_json(*args):
    return json.loads(run_text(CUTRACE, *args, "--format", "json").stdout)


def expect(label, got, want):
    check(label, got == want, f"got {got!r}, want {want!r}")


def expect_close(label, got, want, tolerance=1e-9):
    check(label, abs(got - want) <= tolerance * max(1.0, abs(want)), f"got {got!r}, want {want!r}")


def main():
    return run_in_temp_dir("cutrace-roundtrip.", checks)


def checks(tmp):
    trace = os.path.join(tmp, "kineto.trace")
    report = cutrace_json("import", FIXTURE, "-o", trace)
    expect("import trace_events", report["trace_events"], 28)
    expect("import imported", report["imported"],
           {"kernels": 3, "memcpys": 2, "memsets": 1, "cpu_ranges": 5, "gpu_ranges": 1,
            "api_calls": 5, "syncs": 1})
    expect("import skipped", report["skipped"]["not_complete_events"], 7)
    expect("import skipped categories", report["skipped"]["categories"],
           {"cpu_op": 1, "python_function": 1, "Trace": 1})

    overlap = cutrace_json("overlap", trace)["devices"]
    expect("overlap", overlap, [{
        "device": 0, "span_ns": 265001, "busy_ns": 237626, "idle_ns": 27375,
        "compute_ns": 210124, "copy_ns": 77500, "overlap_ns": 49998,
        "compute_only_ns": 160126, "copy_only_ns": 27502,
        # No NCCL kernel in the fixture: no communication.
        "comm_ns": 0, "comm_only_ns": 0, "comm_compute_overlap_ns": 0, "comm_hidden_pct": 0.0,
        "idle_by_cause_ns": {"unknown": 10000, "host_sync": 0, "pageable_copy": 0,
                             "api_overhead": 0, "host_busy": 0, "launch_latency": 0,
                             "event_wait": 0, "queued": 17375}}])

    gaps = cutrace_json("gaps", trace)["devices"][0]
    expect("gaps idle", gaps["idle_ns"], 27375)
    expect("gaps count", gaps["gap_count"], 4)
    expect("gaps", [(g["start_ns"], g["duration_ns"]) for g in gaps["gaps"]],
           [(1120002, 4998), (1135123, 4877), (1142500, 7500), (1250000, 10000)])
    expect("gap 0 before", gaps["gaps"][0]["before"], "kernel:sgemm_128x64_nn")
    expect("gap 3 after", gaps["gaps"][3]["after"], "memcpy:DtoH")
    expect("gap causes", [g["cause"] for g in gaps["gaps"]], ["queued", "queued", "queued", "unknown"])
    gaps_min = cutrace_json("gaps", trace, "--min-gap", "7us")["devices"][0]
    expect("gaps --min-gap list", [g["duration_ns"] for g in gaps_min["gaps"]], [7500, 10000])
    expect("gaps --min-gap idle", gaps_min["idle_ns"], 27375)

    kernels = cutrace_json("kernels", trace)["kernels"]
    expect("kernel names", [k["name"][:15] for k in kernels],
           ["sgemm_128x64_nn", "void at::native"])
    k = kernels[0]
    expect("sgemm", (k["count"], k["total_ns"], k["min_ns"], k["max_ns"]),
           (2, 200001, 100000, 100001))
    expect_close("sgemm pct", k["pct"], 100.0 * 200001 / 210124)
    expect("relu", (kernels[1]["count"], kernels[1]["total_ns"]), (1, 10123))

    copies = {c["kind"]: c for c in cutrace_json("memcpy", trace)["copies"]}
    expect("HtoD", (copies["HtoD"]["count"], copies["HtoD"]["bytes"],
                    copies["HtoD"]["total_ns"], copies["HtoD"]["pageable_count"]),
           (1, 1048576, 50000, 1))
    expect_close("HtoD gbps", copies["HtoD"]["gbps"], 1048576 / 50000)
    expect("DtoH", (copies["DtoH"]["bytes"], copies["DtoH"]["total_ns"],
                    copies["DtoH"]["pageable_count"]), (524288, 25000, 0))
    expect("memset", (copies["memset"]["bytes"], copies["memset"]["total_ns"]), (4096, 2500))

    ranges = cutrace_json("nvtx", trace)["ranges"]
    cpu = {(r["name"], r["depth"]): r for r in ranges if not r.get("gpu_range")}
    expect("nvtx rows", sorted(cpu), sorted([("ProfilerStep#1", 0), ("forward", 1),
                                             ("inner", 2), ("backward", 1), ("loader", 0)]))
    fwd = cpu[("forward", 1)]
    expect("forward", (fwd["cpu_total_ns"], fwd["gpu_total_ns"], fwd["gpu_ops"]),
           (200250, 230001, 5))
    step = cpu[("ProfilerStep#1", 0)]
    expect("step", (step["cpu_total_ns"], step["gpu_total_ns"], step["gpu_ops"]),
           (500000, 230001, 5))
    expect("backward", (cpu[("backward", 1)]["gpu_ops"], cpu[("backward", 1)]["gpu_total_ns"]),
           (0, 0))

    api = {a["name"]: a for a in cutrace_json("api", trace)["api_calls"]}
    launch = api["cudaLaunchKernel"]
    expect("cudaLaunchKernel", (launch["count"], launch["total_ns"], launch["domain"]),
           (2, 8250, "runtime"))
    expect("cuLaunchKernel", (api["cuLaunchKernel"]["total_ns"], api["cuLaunchKernel"]["domain"]),
           (3000, "driver"))

    info = cutrace_json("info", trace)["files"][0]
    expect("info header", (info["header"]["source_format"], info["header"]["clock"],
                           info["header"]["rank"], info["header"]["magic"]),
           ("chrome-json", "CLOCK_DOMAIN_IMPORTED", "3", "cutrace"))
    expect("info producer", info["header"]["producer"].split()[0], "cutrace-import")
    expect("info events", info["events"], {"kernels": 3, "memcpys": 2, "memsets": 1,
                                           "ranges": 6, "api_calls": 5, "syncs": 1})
    expect("info shutdown", (info["clean_shutdown"], info["end_reason"], info["truncated"]),
           (True, "import", False))
    expect("info devices", [(d["id"], d["name"], d["sm_count"]) for d in info["devices"]],
           [(0, "NVIDIA H200", 132)])
    expect("info statistics", (info["statistics"]["kernels"], info["statistics"]["other_records"]),
           (3, 10))
    expect("info problems", info["problems"], [])
    h = info["header"]
    expect("info anchor", (h["start_anchor"]["trace_ns"], h["start_anchor"]["realtime_ns"],
                           h["clock_anchor_source"]), (0, 1700000000000000000, "baseTimeNanoseconds"))
    expect("info process", (h["pid"], h["command_line"]), (1234, ["python3"]))

    gz_checks(tmp, trace)
    ranks_checks(tmp, overlap[0])

    # The bare-array form of the same events imports to the same records.
    with open(FIXTURE) as f:
        events = json.load(f)["traceEvents"]
    bare = os.path.join(tmp, "bare.json")
    with open(bare, "w") as f:
        json.dump(events, f)
    bare_trace = os.path.join(tmp, "bare.trace")
    cutrace_json("import", bare, "-o", bare_trace)
    expect("bare overlap", cutrace_json("overlap", bare_trace)["devices"], overlap)

    return finish("import round trip")


def without_paths(value):
    """The report with every path-valued key removed (the inputs differ in name only)."""
    if isinstance(value, dict):
        return {k: without_paths(v) for k, v in value.items()
                if k not in ("path", "source_path", "input", "output", "file_bytes",
                             "bytes_per_event")}
    if isinstance(value, list):
        return [without_paths(v) for v in value]
    return value


def gz_checks(tmp, trace):
    gz = os.path.join(tmp, "kineto.json.gz")
    with open(FIXTURE, "rb") as f, gzip.open(gz, "wb") as g:
        g.write(f.read())
    gz_trace = os.path.join(tmp, "gz.trace")
    cutrace_json("import", gz, "-o", gz_trace)
    for report in ("kernels", "overlap", "api", "nvtx", "memcpy", "gaps", "info"):
        expect(f"gz {report}", without_paths(cutrace_json(report, gz_trace)),
               without_paths(cutrace_json(report, trace)))
    # Cut short: one line naming the file, no output left behind.
    cut = os.path.join(tmp, "cut.json.gz")
    with open(gz, "rb") as f, open(cut, "wb") as g:
        g.write(f.read()[:200])
    out = os.path.join(tmp, "cut.trace")
    p = subprocess.run([CUTRACE, "import", cut, "-o", out], capture_output=True, timeout=30)
    expect("cut gz exit", p.returncode, 1)
    expect("cut gz message", (cut.encode() in p.stderr, p.stderr.count(b"\n")), (True, 1))
    expect("cut gz output", os.path.exists(out), False)


def ranks_checks(tmp, device_overlap):
    with open(FIXTURE) as f:
        doc = json.load(f)
    paths = []
    for rank in (0, 1):
        doc["distributedInfo"]["rank"] = rank
        doc["baseTimeNanoseconds"] = 1700000000000000000 + rank * 1000000000
        paths.append(os.path.join(tmp, f"rank{rank}.json"))
        with open(paths[-1], "w") as f:
            json.dump(doc, f)
    merged = os.path.join(tmp, "all.trace")
    report = cutrace_json("import", *paths, "-o", merged)
    expect("ranks inputs", [(i["rank"], i["realtime_from"], i["imported_total"])
                            for i in report["inputs"]],
           [("0", "baseTimeNanoseconds", 18), ("1", "baseTimeNanoseconds", 18)])
    info = cutrace_json("info", merged)["files"][0]
    expect("ranks header", (info["header"]["rank"], info["header"]["source_format"]),
           ("0,1", "merge"))
    expect("ranks events", info["events"]["kernels"], 6)
    # Each rank's device keeps its own numbers; rank 1's was renumbered 1.
    devices = cutrace_json("overlap", merged)["devices"]
    expect("ranks devices", [d["device"] for d in devices], [0, 1])
    for d in devices:
        expect(f"rank device {d['device']} span", (d["span_ns"], d["busy_ns"], d["compute_ns"]),
               (device_overlap["span_ns"], device_overlap["busy_ns"],
                device_overlap["compute_ns"]))

    # A rank recorded 38 hours later is not the same run: refused (exit 1, one
    # line, nothing written) unless --max-skew allows it, then a warning.
    doc["distributedInfo"]["rank"] = 2
    doc["baseTimeNanoseconds"] = 1700000000000000000 + 38 * 3600 * 1000000000
    late = os.path.join(tmp, "rank2.json")
    with open(late, "w") as f:
        json.dump(doc, f)
    out = os.path.join(tmp, "skew.trace")
    p = subprocess.run([CUTRACE, "import", paths[0], late, "-o", out], capture_output=True,
                       timeout=30)
    expect("skew exit", p.returncode, 1)
    expect("skew message", (b"38.0 h" in p.stderr, b"--max-skew" in p.stderr,
                            p.stderr.count(b"\n")), (True, True, 1))
    expect("skew output", os.path.exists(out), False)
    p = subprocess.run([CUTRACE, "import", paths[0], late, "-o", out, "--max-skew", "40h"],
                       capture_output=True, timeout=30)
    expect("skew allowed", (p.returncode, b"do not overlap" in p.stderr), (0, True))


if __name__ == "__main__":
    sys.exit(main())
