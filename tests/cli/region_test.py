#!/usr/bin/env python3
"""Regions on a torch.profiler-shaped trace (issue 19 points 2-4).

The test writes a Kineto JSON of 12 back-to-back `ProfilerStep#N` user
annotations: in each, the host works a while (data loading), then launches
kernels (one stream, queued behind each other, the last ones running past
the step's CPU end) and now and then an async copy on another stream. It
imports it with `cutrace import` and checks, against a recomputation from
the JSON done here:

- `summary --range 'ProfilerStep*' --skip-first 1`: the window (the union of
  [CPU start, max(CPU end, end of the GPU work launched inside)] over steps
  2-12) has exactly the length computed here, and GPU busy % (the union of
  every kernel and copy clipped to the window, over its length) agrees
  within 0.1 percentage points; the first table line names the window and
  the next the verdict.
- without options, `summary` finds the same region as its steady state (12
  instances: the first 10%, at least 1, skipped).
- `overlap --from/--to`: the window is exactly [start + from, start + to].
- the gaps table's Start column counts from the trace start, as the window
  line and --from/--to do (not from the device's first operation), whole
  trace and windowed alike.
- a range that matches nothing: exit 1, one line on stderr, nothing on stdout.

usage: region_test.py CUTRACE
"""
import functools
import json
import os
import random
import sys

from script_checks import expect, finish, intersection, run_text, union
from temp_dir import run_in_temp_dir

CUTRACE = sys.argv[1]
run = functools.partial(run_text, CUTRACE)


def us(ns):  # a Kineto timestamp (us, three decimals) for an integer ns
    return f"{ns // 1000}.{ns % 1000:03d}"


def make_trace():
    """The JSON text and the events as (kind, start_ns, end_ns, correlation)."""
    rng = random.Random(19)
    events, steps, calls, ops = [], [], [], []
    t = 1_000_000_000  # ns
    gpu_free = copy_free = 0
    corr = 100
    for step in range(1, 13):
        start = t
        cursor = t + rng.randint(50_000, 150_000)  # data loading: no CUDA calls
        for _ in range(rng.randint(3, 6)):
            corr += 1
            calls.append((cursor, cursor + 4_000, corr, "cudaLaunchKernel"))
            k0 = max(gpu_free, cursor + 5_000)
            k1 = k0 + rng.randint(5_000, 40_000)
            gpu_free = k1
            ops.append(("kernel", k0, k1, corr))
            cursor += rng.randint(8_000, 20_000)
            if rng.random() < 0.3:
                corr += 1
                calls.append((cursor, cursor + 3_000, corr, "cudaMemcpyAsync"))
                c0 = max(copy_free, cursor + 3_000)
                c1 = c0 + 20_000
                copy_free = c1
                ops.append(("memcpy", c0, c1, corr))
                cursor += 4_000
        end = cursor + rng.randint(0, 10_000)
        steps.append((start, end, step))
        t = end
    tid, pid = 1234, 1234
    for start, end, n in steps:
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}",
                       "pid": pid, "tid": tid, "ts": us(start), "dur": us(end - start),
                       "args": {"External id": n}})
    for s, e, c, name in calls:
        events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": pid, "tid": tid,
                       "ts": us(s), "dur": us(e - s), "args": {"correlation": c}})
    for kind, s, e, c in ops:
        if kind == "kernel":
            events.append({"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7,
                           "ts": us(s), "dur": us(e - s),
                           "args": {"device": 0, "stream": 7, "correlation": c}})
        else:
            events.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)",
                           "pid": 0, "tid": 13, "ts": us(s), "dur": us(e - s),
                           "args": {"device": 0, "stream": 13, "correlation": c,
                                    "bytes": 1 << 20}})
    # Timestamps as numbers with exactly three decimals (ns resolution).
    text = json.dumps({"schemaVersion": 1, "traceEvents": events})
    for e in events:
        for key in ("ts", "dur"):
            text = text.replace(f'"{key}": "{e[key]}"', f'"{key}": {e[key]}', 1)
    return text, steps, calls, ops


def expected_window(steps, calls, ops, skip):
    chosen = sorted(steps)[skip:]
    op_end = {c: e for _, _, e, c in ops}
    parts = []
    for start, end, _ in chosen:
        ends = [op_end[c] for s, _, c, _ in calls if start <= s <= end and c in op_end]
        parts.append((start, max([end] + ends)))
    return union(parts)


UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def listed_starts(table):
    """The Start column of a gaps table (offsets such as '+1.798 ms'), in ns."""
    lines = table.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("Device") and "Start" in line)
    starts = []
    for line in lines[head + 2:]:
        if not line.strip():
            break
        value, unit = line.split()[1:3]
        starts.append(float(value.lstrip("+")) * UNITS[unit])
    return starts


def check_gap_offsets(name, table, gaps, origin):
    """Each listed gap's offset is its start minus `origin`, cut down to the
    microsecond (to the nanosecond below 1 ms)."""
    starts = listed_starts(table)
    want = [g["start_ns"] - origin for d in gaps["devices"] for g in d["gaps"]]
    expect(f"{name}: gaps listed", len(starts) == len(want) > 0, f"{starts} vs {want}")
    bad = [(a, b) for a, b in zip(starts, want)
           if round(a) != (b if b < 1e6 else b - b % 1000)]
    expect(f"{name}: offsets from the trace start", not bad, str(bad[:3]))


def checks(tmp):
    text, steps, calls, ops = make_trace()
    src = os.path.join(tmp, "steps.json")
    with open(src, "w") as f:
        f.write(text)
    trace = os.path.join(tmp, "steps.trace")
    run("import", src, "-o", trace)

    window = expected_window(steps, calls, ops, 1)
    length = sum(b - a for a, b in window)
    cpu = sum(e - s0 for s0, e, _ in sorted(steps)[1:])
    # The fixture exercises the GPU extension: work runs past the last CPU end.
    expect("fixture extends past the CPU end", length > cpu, f"{length} <= {cpu}")
    busy = intersection([(s, e) for _, s, e, _ in ops], window)
    want_pct = 100.0 * busy / length

    s = json.loads(run("summary", trace, "--range", "ProfilerStep*", "--skip-first", "1",
                       "--format", "json").stdout)
    w = s["window"]
    expect("window duration", w["duration_ns"] == length, f"{w['duration_ns']} != {length}")
    expect("window parts", w["parts"] == len(window), f"{w['parts']} != {len(window)}")
    expect("instances", (w["instances"], w["chosen"]) == (12, 11), str(w))
    d = s["devices"][0]
    got_pct = 100.0 * d["busy_ns"] / d["span_ns"]
    expect("busy %", abs(got_pct - want_pct) <= 0.1, f"{got_pct:.4f} vs {want_pct:.4f}")
    expect("busy ns", d["busy_ns"] == busy, f"{d['busy_ns']} != {busy}")
    expect("program busy %", abs(s["program"]["busy_pct"] - want_pct) <= 0.1,
           f"{s['program']['busy_pct']} vs {want_pct}")
    launched = sum(1 for _, st, _, c in calls
                   if any(a <= st <= b for a, b, _ in sorted(steps)[1:]))
    counted = s["kernel_count"] + sum(c["count"] for c in s["copies"])
    expect("ops launched inside", counted == launched, f"{counted} != {launched}")

    table = run("summary", trace, "--range", "ProfilerStep*", "--skip-first", "1",
                "--width", "1000").stdout  # one line each, unwrapped
    lines = table.splitlines()
    expect("window line", lines[0].startswith("window: NVTX range 'ProfilerStep*' (11 of 12"),
           lines[0])
    expect("verdict line", lines[1].startswith("verdict: "), lines[1])

    plain = json.loads(run("summary", trace, "--format", "json").stdout)
    steady = plain.get("steady_state")
    expect("steady state found", steady is not None and steady["range"] == "ProfilerStep*",
           str(steady))
    if steady:
        expect("steady window", steady["window"]["duration_ns"] == length,
               f"{steady['window']['duration_ns']} != {length}")
        expect("steady skip", steady["skip_first"] == 1, str(steady["skip_first"]))
        # The steady state's sweep (a second one in the same pass) agrees with
        # the report over the same region asked for.
        expect("steady busy", (steady["busy_ns"], steady["idle_by_cause_ns"]) ==
               (s["program"]["busy_ns"], s["program"]["idle_by_cause_ns"]),
               f"{steady} vs {s['program']}")
    expect("plain window", plain["window"] == {"whole_trace": True}, str(plain["window"]))
    plain_table = run("summary", trace).stdout
    expect("steady line", "steady state: NVTX range 'ProfilerStep*', 12 instances, the first 1 "
           "skipped" in plain_table and "choose another with --range" in plain_table, plain_table)

    first = plain["overview"][0]["first_ns"]
    o = json.loads(run("overlap", trace, "--from", "200us", "--to", "1.2ms", "--format",
                       "json").stdout)
    tw = [(first + 200_000, first + 1_200_000)]
    want = intersection([(s0, e0) for _, s0, e0, _ in ops], tw)
    expect("from/to window", (o["window"]["start_ns"], o["window"]["end_ns"]) == tw[0],
           str(o["window"]))
    expect("from/to busy", o["devices"][0]["busy_ns"] == want,
           f"{o['devices'][0]['busy_ns']} != {want}")
    expect("from/to span", o["devices"][0]["span_ns"] == 1_000_000, str(o["devices"][0]))

    # The earliest record is the first step's range, before any GPU work: an
    # offset from the device's first operation would be short by that much.
    expect("fixture: work starts after the trace", min(s0 for _, s0, _, _ in ops) > first + 10_000,
           str(first))
    for args in ([], ["--from", "200us", "--to", "1.2ms"]):
        gaps = json.loads(run("gaps", trace, *args, "--top", "4", "--format", "json").stdout)
        table = run("gaps", trace, *args, "--top", "4", "--width", "1000").stdout
        check_gap_offsets("gaps " + " ".join(args), table, gaps, first)
        if args:
            lo, hi = 200_000, 1_200_000
            out = [t for t in listed_starts(table) if not lo <= t <= hi]
            expect("windowed gaps inside --from/--to", not out, str(out))

    for report in ("summary", "kernels", "gaps", "diagnose", "timeline", "nvtx", "api"):
        p = run(report, trace, "--range", "nosuch", check=False)
        expect(f"{report} bad range", p.returncode == 1 and p.stdout == "" and
               p.stderr.count("\n") == 1 and "no NVTX range matches 'nosuch'" in p.stderr,
               f"rc {p.returncode} out {p.stdout!r} err {p.stderr!r}")
    p = run("overlap", trace, "--from", "junk", check=False)
    expect("bad duration", p.returncode != 0 and p.stderr.count("\n") >= 1, p.stderr)

    return finish(f"window {length} ns, busy {want_pct:.3f}%")


if __name__ == "__main__":
    sys.exit(run_in_temp_dir("cutrace-region.", checks))
