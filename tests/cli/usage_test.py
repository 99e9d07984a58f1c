#!/usr/bin/env python3
"""Usage errors say what to do: a mistyped command or option gets one line
naming the word and, where one is close, what was meant (exit 2); `help`
works as a command; an option that takes words lists them plainly; a
Chrome/Kineto JSON (or .json.gz) given to a report names `cutrace import`
(exit 1). Each case checks the exact line.

    usage_test.py CUTRACE SOURCE_DIR
"""
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

CASES = [
    # (arguments, exit status, exact stderr, text stdout must hold)
    (["kernal", "x.trace"], 2, "cutrace: unknown command 'kernal'; did you mean 'kernels'?\n", None),
    (["sumary"], 2, "cutrace: unknown command 'sumary'; did you mean 'summary'?\n", None),
    (["kern"], 2, "cutrace: unknown command 'kern'; did you mean 'kernels'?\n", None),
    (["frobnicate"], 2,
     "cutrace: unknown command 'frobnicate'; the commands are listed by 'cutrace --help'\n", None),
    (["--versoin"], 2, "cutrace: unknown option '--versoin'; did you mean '--version'?\n", None),
    (["--frob"], 2, "cutrace: unknown option '--frob'; see 'cutrace --help'\n", None),
    # A command's own options: the closest one (a file need not exist: the
    # options are checked first).
    (["kernels", "x.trace", "--widht", "80"], 2,
     "cutrace: unknown option '--widht'; did you mean '--width'? see 'cutrace kernels --help'\n",
     None),
    (["gaps", "x.trace", "--min-gpa=1us"], 2,
     "cutrace: unknown option '--min-gpa'; did you mean '--min-gap'? see 'cutrace gaps --help'\n",
     None),
    (["kernels", "x.trace", "--zzzzzz"], 2,
     "cutrace: The following argument was not expected: --zzzzzz; see 'cutrace kernels --help'\n",
     None),
    # --skip-first without --range would be ignored: the whole trace.
    (["summary", "x.trace", "--skip-first", "1"], 2,
     "cutrace: --skip-first requires --range; see 'cutrace summary --help'\n", None),
    (["help", "kernal"], 2, "cutrace: unknown command 'kernal'; did you mean 'kernels'?\n", None),
    (["help"], 0, "", "Usage: cutrace [OPTIONS] SUBCOMMAND"),
    (["help", "kernels"], 0, "", "Usage: cutrace kernels [OPTIONS] files..."),
    (["--version"], 0, "", "cutrace 0.1.0"),
    (["run", "--launch-skip", "3", "--", "true"], 2,
     "cutrace: --metrics-scope, --kernel-filter, --kernel-sample, --launch-skip, --launch-count and "
     "--launch-skip-before-match need --metrics\n", None),
    # Capture options are checked before anything runs.
    (["run", "--capture-range", "nvtx:", "--", "true"], 2,
     "cutrace: --capture-range: must be cudaProfilerApi or nvtx:NAME[@DOMAIN]\n", None),
    (["run", "--capture-range", "nvtx:a@", "--", "true"], 2,
     "cutrace: --capture-range: must be cudaProfilerApi or nvtx:NAME[@DOMAIN]\n", None),
    (["run", "--capture-range", "cudaprofilerapi", "--", "true"], 2,
     "cutrace: --capture-range: must be cudaProfilerApi or nvtx:NAME[@DOMAIN]\n", None),
    (["run", "--capture-range", "nvtx:step", "--capture-range-end", "repeat:0", "--", "true"], 2,
     "cutrace: --capture-range-end: must be stop, repeat or repeat:N (N >= 1)\n", None),
    (["run", "--capture-range", "nvtx:step", "--capture-range-end", "repeat:99999999999999", "--", "true"], 2,
     "cutrace: --capture-range-end: must be stop, repeat or repeat:N (N >= 1)\n", None),
    (["run", "--capture-range-end", "repeat:3", "--", "true"], 2,
     "cutrace: --capture-range-end needs --capture-range\n", None),
    (["run", "--delay", "soon", "--", "true"], 2, "cutrace: --delay: must be a duration like 2s or 500ms\n", None),
    (["run", "--duration", "0s", "--", "true"], 2,
     "cutrace: --duration: must be a duration like 1s or 500ms, not 0\n", None),
    (["run", "--capture-range", "cudaProfilerApi", "--mode", "summary", "--", "true"], 2,
     "cutrace: --capture-range, --delay and --duration work in trace mode only\n", None),
    (["kernels", "--format", "xml", "x.trace"], 2,
     "cutrace: --format: 'xml' is not one of table, csv, json; see 'cutrace kernels --help'\n",
     None),
    (["summary", "--format", "xml", "x.trace"], 2,
     "cutrace: --format: 'xml' is not one of table, csv, json, openmetrics; "
     "see 'cutrace summary --help'\n", None),
    (["kernels", "--sort", "name", "x.trace"], 2,
     "cutrace: --sort: 'name' is not one of total, count, avg, max; "
     "see 'cutrace kernels --help'\n", None),
    (["kernels", "--names", "long", "x.trace"], 2,
     "cutrace: --names: 'long' is not one of short, full; see 'cutrace kernels --help'\n", None),
    # --help shows the words, never CLI11's {csv->1,...} maps.
    (["kernels", "--help"], 0, "", "--format table|csv|json"),
    (["summary", "--help"], 0, "", "--format table|csv|json|openmetrics"),
    # Files given as they are (run inside a scratch folder holding them).
    (["summary", "k.json"], 1,
     "cutrace: k.json: a Chrome/Kineto JSON trace, not a cutrace trace; convert it first: "
     "cutrace import k.json -o k.trace\n", None),
    (["kernels", "k.json.gz"], 1,
     "cutrace: k.json.gz: a Chrome/Kineto JSON trace, not a cutrace trace; convert it first: "
     "cutrace import k.json.gz -o k.trace\n", None),
]


def main():
    cutrace, source = sys.argv[1], sys.argv[2]
    scratch = tempfile.mkdtemp(prefix="usage_test_")
    fixture = os.path.join(source, "tests", "data", "kineto_small.json")
    shutil.copy(fixture, os.path.join(scratch, "k.json"))
    with open(fixture, "rb") as src, gzip.open(os.path.join(scratch, "k.json.gz"), "wb") as dst:
        dst.write(src.read())
    failures = []
    for args, want_rc, want_err, want_out in CASES:
        p = subprocess.run([cutrace] + args, capture_output=True, text=True, timeout=30,
                           cwd=scratch)
        label = "cutrace " + " ".join(args)
        if p.returncode != want_rc:
            failures.append(f"{label}: exit {p.returncode}, want {want_rc}")
        if p.stderr != want_err:
            failures.append(f"{label}: stderr {p.stderr!r}, want {want_err!r}")
        if want_out is not None and want_out not in p.stdout:
            failures.append(f"{label}: stdout lacks {want_out!r}: {p.stdout[:200]!r}")
    shutil.rmtree(scratch, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print(f"{len(CASES) - len({f.split(':')[0] for f in failures})} passed, "
          f"{len({f.split(':')[0] for f in failures})} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
