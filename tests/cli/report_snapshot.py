#!/usr/bin/env python3
"""Every report's output over a fixed set of traces, to compare two builds.

    report_snapshot.py snapshot --build BUILD --out DIR [--events N] [--big N]
    report_snapshot.py compare DIR_A DIR_B

`snapshot` makes the inputs (the bundled examples, the Kineto JSON of
tests/data imported, traces from bench/gen_trace of N events and, with
--big, one of N events more, a summary-mode trace of the same workload) and
runs every report command in every format over each input and over a pair of
files, plus export, merge, diff and info, keeping what each printed (stdout,
stderr, exit status) and every file it wrote (or its SHA-256 where that is
large) under DIR/out. Commands run inside DIR/inputs with relative paths, so
two snapshots taken from different checkouts compare byte for byte.

`compare` lists the cases whose output differs between two snapshots and
exits 1 if any does: the redesign's "byte-identical before and after" check
(issue 22). A difference is not always a fault (a number that was wrong
before), but each must be explained.
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time

# Reports that take FILE... and --format table|csv|json.
REPORTS = [
    ["summary"],
    ["kernels"],
    ["kernels", "--sort", "count", "--top", "3"],
    ["memcpy"],
    ["gaps"],
    ["gaps", "--min-gap", "10us", "--top", "5"],
    ["overlap"],
    ["nvtx"],
    ["api"],
    ["info"],
    ["diagnose"],
    ["metrics"],
]
FORMATS = ["table", "csv", "json"]
# Files larger than this are kept as their SHA-256 and size only.
KEEP_LIMIT = 1 << 20


def run(cmd, cwd, out_dir, case, files=()):
    """Runs cmd in cwd; writes case.txt (stdout, stderr, status) and the files it made."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=600)
    took = time.monotonic() - t0
    with open(os.path.join(out_dir, case + ".txt"), "wb") as f:
        f.write(b"$ " + " ".join(cmd[1:]).encode() + b"\n")
        f.write(p.stdout)
        f.write(b"\n--- stderr ---\n" + p.stderr)
        f.write(b"\n--- exit %d\n" % p.returncode)
    for name in files:
        path = os.path.join(cwd, name)
        if os.path.isdir(path):
            for sub in sorted(os.listdir(path)):
                keep(os.path.join(path, sub), out_dir, case + "." + sub)
            shutil.rmtree(path)
        elif os.path.exists(path):
            keep(path, out_dir, case + "." + os.path.basename(name))
            os.unlink(path)
    return took


def keep(path, out_dir, name):
    size = os.path.getsize(path)
    if size <= KEEP_LIMIT:
        shutil.copyfile(path, os.path.join(out_dir, name))
        return
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    with open(os.path.join(out_dir, name + ".sha256"), "w") as f:
        f.write("%s %d\n" % (h.hexdigest(), size))


def make_inputs(build, source, inputs, events, big):
    cutrace = os.path.join(build, "bin", "cutrace")
    gen = os.path.join(build, "bin", "gen_trace")
    os.makedirs(inputs, exist_ok=True)
    for name in ("demo.trace", "known_work-counters.trace"):
        shutil.copyfile(os.path.join(source, "examples", name), os.path.join(inputs, name))
    shutil.copyfile(os.path.join(source, "tests", "data", "kineto_small.json"),
                    os.path.join(inputs, "kineto.json"))
    subprocess.run([cutrace, "import", "kineto.json", "-o", "kineto.trace"], cwd=inputs,
                   check=True, capture_output=True)
    made = ["demo.trace", "known_work-counters.trace", "kineto.trace"]
    plan = [("gen.trace", events, 1, []), ("gen2.trace", events, 2, []),
            ("gen-summary.trace", events, 1, ["--summary-batches", "16"])]
    if big:
        plan.append(("big.trace", big, 3, []))
    for name, n, seed, extra in plan:
        subprocess.run([gen, "--events", str(n), "--seed", str(seed), "--out", name] + extra,
                       cwd=inputs, check=True, capture_output=True)
        made.append(name)
    return made


def snapshot(args):
    build = os.path.abspath(args.build)
    source = os.path.abspath(args.source)
    cutrace = os.path.join(build, "bin", "cutrace")
    inputs = os.path.join(args.out, "inputs")
    out = os.path.join(args.out, "out")
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(out)
    traces = make_inputs(build, source, inputs, args.events, args.big)
    sets = [[t] for t in traces] + [["demo.trace", "known_work-counters.trace"],
                                    ["gen.trace", "gen2.trace"],
                                    ["gen.trace", "gen-summary.trace"]]
    timings = []
    for files in sets:
        label = "+".join(os.path.splitext(f)[0] for f in files)
        for report in REPORTS:
            for fmt in FORMATS:
                case = "%s.%s.%s" % (label, "_".join(report).replace("-", ""), fmt)
                took = run([cutrace] + report + files + ["--format", fmt], inputs, out, case)
                timings.append((took, case))
        case = "%s.timeline" % label
        run([cutrace, "timeline"] + files + ["--width", "100"], inputs, out, case)
        run([cutrace, "timeline"] + files + ["--width", "100", "--format", "json"], inputs, out,
            case + ".json")
        run([cutrace, "summary"] + files + ["--format", "openmetrics"], inputs, out,
            "%s.openmetrics" % label)
        for fmt, target in (("chrome", "x.json"), ("perfetto", "x.pftrace"), ("csv", "x.csv")):
            run([cutrace, "export"] + files + ["--format", fmt, "-o", target], inputs, out,
                "%s.export.%s" % (label, fmt), files=[target])
        if len(files) > 1:
            run([cutrace, "merge"] + files + ["-o", "m.trace"], inputs, out, "%s.merge" % label)
            if os.path.exists(os.path.join(inputs, "m.trace")):
                for report in (["info"], ["kernels"], ["summary"]):
                    run([cutrace] + report + ["m.trace", "--format", "json"], inputs, out,
                        "%s.merge.%s" % (label, report[0]))
                os.unlink(os.path.join(inputs, "m.trace"))
    for a, b in (("demo.trace", "known_work-counters.trace"), ("gen.trace", "gen2.trace"),
                 ("gen.trace", "gen-summary.trace")):
        label = "diff.%s+%s" % (os.path.splitext(a)[0], os.path.splitext(b)[0])
        for fmt in FORMATS:
            run([cutrace, "diff", a, b, "--format", fmt], inputs, out, "%s.%s" % (label, fmt))
    timings.sort(reverse=True)
    print("report_snapshot: %d cases in %s; slowest: %s" %
          (len(os.listdir(out)), out, ", ".join("%s %.2f s" % (c, t) for t, c in timings[:3])))
    return 0


def compare(args):
    a = os.path.join(args.a, "out")
    b = os.path.join(args.b, "out")
    names_a, names_b = set(os.listdir(a)), set(os.listdir(b))
    problems = []
    for name in sorted(names_a | names_b):
        if name not in names_b:
            problems.append("only in A: " + name)
        elif name not in names_a:
            problems.append("only in B: " + name)
        else:
            with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
                if fa.read() != fb.read():
                    problems.append("differs: " + name)
    for p in problems:
        print(p)
    print("report_snapshot: %d cases compared, %d differ" % (len(names_a | names_b), len(problems)))
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot")
    s.add_argument("--build", required=True)
    s.add_argument("--source", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    s.add_argument("--out", required=True)
    s.add_argument("--events", type=int, default=1_000_000)
    s.add_argument("--big", type=int, default=0, help="also a trace of this many events")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = parser.parse_args()
    return snapshot(args) if args.cmd == "snapshot" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
