#!/usr/bin/env python3
"""Communication kernels apart from compute (issue 21 point 1), end to end.

The test writes a Kineto JSON such as torch.profiler records for one rank of
a data-parallel job: per step, gemm kernels on the compute stream, an NCCL
all-reduce on its own stream that starts under the last gemms and runs on
past them, and now and then a copy. It imports it with `cutrace import` and
checks, against a recomputation from the JSON done here (unions of the
intervals, no cutrace code):

- `overlap --format json`: comm_ns = |union of the NCCL kernels|,
  comm_compute_overlap_ns = |comm ∩ compute|, comm_only_ns, compute_ns =
  |union of the other kernels|, busy_ns = |union of everything|, and
  comm_hidden_pct; the table shows the comm columns.
- `summary`: the program's comm figures and the "communication:" line, which
  says "mostly exposed" exactly when the exposed part is over half.
- `diagnose`: the same line; `diff A A`: comm on both sides.
- `timeline`: a comm row, and the comm fractions of the bins add up to comm_ns.
- `summary --format openmetrics`: cutrace_device_comm_seconds_total.
- `--comm-pattern sgemm`: the gemms are communication too (compute 0).
- a pattern that is no regex: exit 2, one line.
- `ranks` over this rank and a second one whose gemms last 20 us longer: 10
  steps, rank 1 the slowest in each, by compute.

usage: comm_test.py CUTRACE
"""
import functools
import json
import os
import random
import re
import sys

from script_checks import expect, finish, intersection, length, run_text
from temp_dir import run_in_temp_dir

CUTRACE = sys.argv[1]
run = functools.partial(run_text, CUTRACE)
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def us(ns):  # a Kineto timestamp (us, three decimals) for an integer ns
    return f"{ns // 1000}.{ns % 1000:03d}"


def make_trace(rank=0, slower_gemm_ns=0, longer_comm_ns=0):
    """The JSON text and the GPU ops as (kind, start_ns, end_ns); `rank`'s gemms
    last `slower_gemm_ns` longer, its all-reduces `longer_comm_ns` (the same
    steps otherwise)."""
    rng = random.Random(21)
    events, ops = [], []
    t = 2_000_000_000
    corr = 0
    pid, tid = 4321, 4321
    for step in range(1, 11):
        start = t
        cursor = t + 10_000
        gemm_free = cursor
        for _ in range(rng.randint(3, 5)):
            corr += 1
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": pid, "tid": tid, "ts": us(cursor), "dur": us(3_000),
                           "args": {"correlation": corr}})
            k0 = max(gemm_free, cursor + 4_000)
            k1 = k0 + rng.randint(20_000, 60_000) + slower_gemm_ns
            gemm_free = k1
            ops.append(("sgemm", k0, k1, corr))
            cursor += 5_000
        # The all-reduce starts under the last gemm and runs on past it.
        corr += 1
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "ncclAllReduce", "pid": pid,
                       "tid": tid, "ts": us(cursor), "dur": us(2_000),
                       "args": {"correlation": corr}})
        c0 = gemm_free - rng.randint(5_000, 30_000)
        c1 = gemm_free + rng.randint(20_000, 80_000) + longer_comm_ns
        ops.append(("nccl", c0, c1, corr))
        if rng.random() < 0.5:
            corr += 1
            m0 = c0 + 1_000
            ops.append(("memcpy", m0, m0 + 15_000, corr))
        end = c1 + 5_000
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                       "pid": pid, "tid": tid, "ts": us(start), "dur": us(end - start),
                       "args": {"External id": step}})
        t = end + rng.randint(10_000, 50_000)
    for kind, s, e, c in ops:
        if kind == "memcpy":
            events.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)",
                           "pid": 0, "tid": 13, "ts": us(s), "dur": us(e - s),
                           "args": {"device": 0, "stream": 13, "correlation": c,
                                    "bytes": 1 << 16}})
        else:
            stream = 20 if kind == "nccl" else 7
            events.append({"ph": "X", "cat": "kernel", "name": NCCL if kind == "nccl" else
                           "ampere_sgemm_128x64_nn", "pid": 0, "tid": stream, "ts": us(s),
                           "dur": us(e - s),
                           "args": {"device": 0, "stream": stream, "correlation": c}})
    text = json.dumps({"schemaVersion": 1, "distributedInfo": {"rank": rank, "world_size": 2},
                       "traceEvents": events})
    for e in events:  # numbers with exactly three decimals (ns resolution)
        for key in ("ts", "dur"):
            text = text.replace(f'"{key}": "{e[key]}"', f'"{key}": {e[key]}', 1)
    return text, [(k, s, e) for k, s, e, _ in ops]


def imported(tmp, name, text):
    """`text` written to tmp/name.json and imported to tmp/name.trace (its path)."""
    src = os.path.join(tmp, name + ".json")
    with open(src, "w") as f:
        f.write(text)
    trace = os.path.join(tmp, name + ".trace")
    run("import", src, "-o", trace)
    return trace


def checks(tmp):
    text, ops = make_trace()
    trace = imported(tmp, "rank0", text)

    comm = [(s, e) for k, s, e in ops if k == "nccl"]
    compute = [(s, e) for k, s, e in ops if k == "sgemm"]
    want = {
        "comm_ns": length(comm),
        "compute_ns": length(compute),
        "busy_ns": length([(s, e) for _, s, e in ops]),
        "comm_compute_overlap_ns": intersection(comm, compute),
    }
    want["comm_only_ns"] = want["comm_ns"] - want["comm_compute_overlap_ns"]
    exposed = want["comm_only_ns"] / want["comm_ns"]

    o = json.loads(run("overlap", trace, "--format", "json").stdout)
    d = o["devices"][0]
    for key, value in want.items():
        expect(f"overlap {key}", d[key] == value, f"{d[key]} != {value}")
    hidden = 100.0 * want["comm_compute_overlap_ns"] / want["comm_ns"]
    expect("hidden pct", abs(d["comm_hidden_pct"] - hidden) < 1e-9, f"{d['comm_hidden_pct']}")
    table = run("overlap", trace, "--width", "1000").stdout
    expect("overlap table comm columns", "Comm hidden" in table and "Hidden(%)" in table, table)

    s = json.loads(run("summary", trace, "--format", "json").stdout)
    c = s["program"].get("comm", {})
    expect("summary comm", (c.get("comm_ns"), c.get("hidden_ns"), c.get("exposed_ns")) ==
           (want["comm_ns"], want["comm_compute_overlap_ns"], want["comm_only_ns"]), str(c))
    expect("summary mostly exposed", c.get("mostly_exposed") == (exposed > 0.5),
           f"{c} vs {exposed}")
    lines = run("summary", trace, "--width", "1000").stdout.splitlines()
    line = next((x for x in lines if x.startswith("communication: ")), "")
    expect("summary comm line", line != "" and ("mostly exposed" in line) == (exposed > 0.5),
           f"{line!r} exposed {exposed:.3f}")
    # The devices table's Hidden(%) is a share of communication, not of the
    # span the title names for the other columns: the title says so.
    expect("summary Hidden(%) is of comm",
           "devices (percent of each device's span; Hidden(%): of its communication)" in lines,
           "\n".join(x for x in lines if x.startswith("devices")))
    diag = run("diagnose", trace, "--width", "1000").stdout
    expect("diagnose comm line", "communication: " in diag, diag)

    diff = json.loads(run("diff", trace, trace, "--format", "json").stdout)
    v = diff["devices"][0]
    expect("diff comm", (v["comm_ns_a"], v["comm_ns_b"], v["comm_only_ns_b"]) ==
           (want["comm_ns"], want["comm_ns"], want["comm_only_ns"]), str(v))

    tl = json.loads(run("timeline", trace, "--bins", "37", "--format", "json").stdout)
    dev = tl["devices"][0]
    span = max(e for _, _, e in ops) - min(s for _, s, _ in ops)
    bins = len(dev["comm"])
    binned = sum(f * min(dev["bin_ns"], span - i * dev["bin_ns"]) for i, f in enumerate(dev["comm"]))
    expect("timeline comm bins", abs(binned - want["comm_ns"]) <= 1e-6 * want["comm_ns"] + bins,
           f"{binned} vs {want['comm_ns']}")
    drawn = run("timeline", trace, "--bins", "37").stdout
    expect("timeline comm row", re.search(r"^comm +\|", drawn, re.M) is not None, drawn)

    om = run("summary", trace, "--format", "openmetrics").stdout
    m = re.search(r'^cutrace_device_comm_seconds_total\{[^}]*device="0"[^}]*\} (\S+)$', om, re.M)
    expect("openmetrics comm", m is not None and abs(float(m.group(1)) - want["comm_ns"] / 1e9) < 1e-9,
           om[-2000:])

    p = json.loads(run("overlap", trace, "--comm-pattern", "sgemm", "--format", "json").stdout)
    d = p["devices"][0]
    every = length(comm + compute)
    expect("pattern", (d["compute_ns"], d["comm_ns"]) == (0, every), str(d))

    bad = run("overlap", trace, "--comm-pattern", "(unclosed", check=False)
    expect("bad pattern", bad.returncode == 2 and bad.stdout == "" and
           bad.stderr.count("\n") == 1 and "not a regex" in bad.stderr,
           f"rc {bad.returncode} err {bad.stderr!r}")

    slow = imported(tmp, "rank1", make_trace(rank=1, slower_gemm_ns=20_000)[0])
    r = json.loads(run("ranks", trace, slow, "--format", "json").stdout)
    expect("ranks steps", len(r["steps"]) == 10, str(r)[:500])
    expect("ranks slowest", all(s["slowest_rank"] == 1 and s["cause"] == "compute" and
                                s["excess_ns"] > 0 for s in r["steps"]), str(r["steps"])[:1000])
    # The two ranks' all-reduces are alike (these traces were not recorded
    # together): nobody waited for anybody, and the table says so.
    expect("ranks waited for", all(s["waited_for_rank"] is None and s["wait_ns"] == 0
                                   for s in r["steps"]) and
           [x["waited_for_steps"] for x in r["ranks"]] == [0, 0], str(r["steps"])[:1000])
    table = run("ranks", trace, slow).stdout
    expect("ranks waited-for line", "waited for: nobody named" in table, table)
    # Recorded together, rank 0's all-reduces would have waited for rank 1's
    # slower gemms: rank 1 is the one waited for, in every step.
    waiting = imported(tmp, "rank0-waiting", make_trace(rank=0, longer_comm_ns=20_000)[0])
    w = json.loads(run("ranks", waiting, slow, "--format", "json").stdout)
    expect("ranks waited for rank 1", all(s["waited_for_rank"] == 1 and s["wait_ns"] == 20_000
                                          for s in w["steps"]) and
           [x["waited_for_steps"] for x in w["ranks"]] == [0, 10], str(w["steps"])[:1000])
    table = run("ranks", waiting, slow).stdout
    expect("ranks names rank 1", re.search(r"waited for: rank 1 \(\S*rank1\.trace, median wait "
                                           r"20\.00 us\) in 10 of 10 steps", table) is not None,
           table)
    expect("ranks median wait", [x["median_wait_ns"] for x in w["ranks"]] == [0, 20_000], str(w["ranks"]))
    csv_lines = run("ranks", waiting, slow, "--format", "csv").stdout.splitlines()
    expect("ranks csv wait", csv_lines[0].endswith(",waited_for_rank,wait_ns") and
           all(line.endswith(",1,20000") for line in csv_lines[1:]) and len(csv_lines) == 11,
           "\n".join(csv_lines[:3]))
    one = run("ranks", trace, check=False)
    expect("ranks of one rank", one.returncode == 1 and one.stderr.count("\n") == 1, one.stderr)

    return finish(f"comm {want['comm_ns']} ns, {hidden:.1f}% hidden")


if __name__ == "__main__":
    sys.exit(run_in_temp_dir("cutrace-comm.", checks))
