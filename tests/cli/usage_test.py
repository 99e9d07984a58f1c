#!/usr/bin/env python3
"""Usage errors say what to do: a mistyped command or option gets one line
naming the word and, where one is close, what was meant (exit 2); `help`
works as a command. Each case checks the exact line.

    usage_test.py CUTRACE
"""
import subprocess
import sys

CASES = [
    # (arguments, exit status, exact stderr, text stdout must hold)
    (["kernal", "x.trace"], 2, "cutrace: unknown command 'kernal'; did you mean 'kernels'?\n", None),
    (["sumary"], 2, "cutrace: unknown command 'sumary'; did you mean 'summary'?\n", None),
    (["kern"], 2, "cutrace: unknown command 'kern'; did you mean 'kernels'?\n", None),
    (["frobnicate"], 2,
     "cutrace: unknown command 'frobnicate'; the commands are listed by 'cutrace --help'\n", None),
    (["--versoin"], 2, "cutrace: unknown option '--versoin'; did you mean '--version'?\n", None),
    (["--frob"], 2, "cutrace: unknown option '--frob'; see 'cutrace --help'\n", None),
    (["help", "kernal"], 2, "cutrace: unknown command 'kernal'; did you mean 'kernels'?\n", None),
    (["help"], 0, "", "Usage: cutrace [OPTIONS] SUBCOMMAND"),
    (["help", "kernels"], 0, "", "Usage: cutrace kernels [OPTIONS] files..."),
    (["--version"], 0, "", "cutrace 0.1.0"),
]


def main():
    cutrace = sys.argv[1]
    failures = []
    for args, want_rc, want_err, want_out in CASES:
        p = subprocess.run([cutrace] + args, capture_output=True, text=True, timeout=30)
        label = "cutrace " + " ".join(args)
        if p.returncode != want_rc:
            failures.append(f"{label}: exit {p.returncode}, want {want_rc}")
        if p.stderr != want_err:
            failures.append(f"{label}: stderr {p.stderr!r}, want {want_err!r}")
        if want_out is not None and want_out not in p.stdout:
            failures.append(f"{label}: stdout lacks {want_out!r}: {p.stdout[:200]!r}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(CASES) - len({f.split(':')[0] for f in failures})} passed, "
          f"{len({f.split(':')[0] for f in failures})} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
