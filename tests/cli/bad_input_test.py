#!/usr/bin/env python3
"""Runs the built `cutrace` on bad input and checks that it fails cleanly.

Every reading command (the reports, info, import) gets: an empty file,
random bytes, a cut-short header, a wrong magic, an unknown format version, an
absurd packet length, JSON instead of a trace, a missing path and a directory.
Each must exit 1 with exactly one stderr line "cutrace: PATH...", within 10
seconds, never with a signal (134 abort, 139 segfault). A trace cut short
after its header must still be read: exit 0 and one warning line. `import`
gets the JSON classes: invalid, truncated, negative dur, non-numeric ts,
gzip, a trace instead of JSON, an existing output. Usage errors exit 2.

usage: bad_input_test.py CUTRACE SOURCE_DIR
"""
import os
import random
import sys

from script_checks import expect_exit, failures, finish, run_cutrace
from temp_dir import run_in_temp_dir

CUTRACE, SOURCE = sys.argv[1], sys.argv[2]
FIXTURE = os.path.join(SOURCE, "tests", "data", "kineto_small.json")
REPORTS = ["summary", "kernels", "memcpy", "gaps", "overlap", "nvtx", "api", "info"]


def check(label, args, want_rc, want_stderr_lines=1, must_contain=None):
    expect_exit(label, args, run_cutrace(CUTRACE, args, timeout=10), want_rc,
                want_stderr_lines, must_contain)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def main():
    return run_in_temp_dir("cutrace-cli-test.", checks)


def checks(tmp):
    good = os.path.join(tmp, "good.trace")
    r = run_cutrace(CUTRACE, ["import", FIXTURE, "-o", good], timeout=10)
    if r is None or r[0] != 0:
        print(f"FAIL: cannot import the fixture: {r}")
        return 1
    trace = open(good, "rb").read()
    if not trace.startswith(b"\x0a") or b"\x0a\x07cutrace\x10\x01" not in trace[:32]:
        print("FAIL: the imported trace does not start with the expected header bytes")
        return 1

    rng = random.Random(20240601)
    bad_traces = {
        "empty": b"",
        "random": bytes(rng.getrandbits(8) for _ in range(4096)),
        "random_small": bytes(rng.getrandbits(8) for _ in range(7)),
        "cut_in_header": trace[:10],
        "wrong_magic": trace.replace(b"\x0a\x07cutrace", b"\x0a\x07cutracX", 1),
        "wrong_version": trace.replace(b"\x0a\x07cutrace\x10\x01", b"\x0a\x07cutrace\x10\x63", 1),
        "absurd_length": b"\x0a\xff\xff\xff\xff\x0f" + trace[6:],
        "json_not_trace": open(FIXTURE, "rb").read(),
        "zeros": bytes(1 << 16),
    }
    paths = {name: write(os.path.join(tmp, name + ".trace"), data)
             for name, data in bad_traces.items()}
    paths["missing"] = os.path.join(tmp, "does-not-exist.trace")
    paths["directory"] = tmp
    for command in REPORTS:
        for name, path in paths.items():
            check(f"{command}/{name}", [command, path], 1, must_contain=path)
        # One bad file among good ones still fails the command.
        check(f"{command}/good+bad", [command, good, paths["random"]], 1)
        for fmt in ("table", "csv", "json"):
            if command == "summary" and fmt == "csv":
                # Several tables are no one CSV: refused, pointing at JSON (usage: exit 2).
                check(f"{command}/good/{fmt}", [command, good, "--format", fmt], 2,
                      must_contain="--format json")
                continue
            check(f"{command}/good/{fmt}", [command, good, "--format", fmt], 0, 0)

    # Cut short after some complete packets: a warning and the readable part.
    truncated = write(os.path.join(tmp, "truncated.trace"), trace[:len(trace) - 40])
    for command in REPORTS:
        check(f"{command}/truncated", [command, truncated], 0, 1, must_contain="truncated")

    # import: bad JSON of every kind.
    out = os.path.join(tmp, "out.trace")
    fixture = open(FIXTURE, "rb").read()
    bad_json = {
        "empty": b"",
        "whitespace": b"  \n ",
        "random": bytes(rng.getrandbits(8) for _ in range(4096)),
        "invalid": b"{\"traceEvents\": [ {\"ph\": \"X\", oops } ]}",
        "truncated": fixture[:len(fixture) // 2],
        "negative_dur":
            b'[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":-1.5}]',
        "string_ts": b'[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":"x","dur":1}]',
        "absurd_ts": b'[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1e300,"dur":1}]',
        "not_chrome": b'{"hello": "world"}',
        "scalar": b"42",
        "gzip": b"\x1f\x8b\x08\x00" + bytes(32),
        "a_trace": trace,
        "deep_invalid": b"[" * 200000 + b"]" * 199999,
    }
    for name, data in bad_json.items():
        path = write(os.path.join(tmp, name + ".json"), data)
        check(f"import/{name}", ["import", path, "-o", out], 1, must_contain=path)
        if os.path.exists(out):
            failures.append(f"import/{name}: left an output file behind")
            os.remove(out)
    # Valid but empty of anything cutrace models: imported, with a warning.
    deep = write(os.path.join(tmp, "deep.json"), b"[" * 200000 + b"]" * 200000)
    check("import/deep", ["import", deep, "-o", out], 0, must_contain="warning")
    if os.path.exists(out):
        os.remove(out)
    check("import/missing", ["import", paths["missing"], "-o", out], 1)
    check("import/directory", ["import", tmp, "-o", out], 1)
    check("import/negative_dur_message", ["import", os.path.join(tmp, "negative_dur.json"),
                                          "-o", out], 1, must_contain="negative dur")
    check("import/exists", ["import", FIXTURE, "-o", good], 1, must_contain="exists")
    if open(good, "rb").read() != trace:
        failures.append("import/exists: the existing output was modified")

    # Usage errors exit 2.
    for label, args in [("no command", []), ("unknown command", ["frobnicate"]),
                        ("no files", ["kernels"]), ("info no files", ["info"]),
                        ("bad format", ["kernels", good, "--format", "xml"]),
                        ("import without -o", ["import", FIXTURE]),
                        ("bad option", ["overlap", good, "--no-such-option"])]:
        check(f"usage/{label}", args, 2, want_stderr_lines=None)
    # A bad --kinds is refused before the program starts, naming every word
    # cutrace knows (the program would have printed "started").
    marker = os.path.join(tmp, "started")
    check("usage/bad kinds", ["run", "--kinds", "kernel,bogus", "--", "/bin/sh", "-c",
                              f"echo > {marker}"], 2, want_stderr_lines=1,
          must_contain='unknown kind "bogus" (known: kernel, memcpy, memset, nvtx, api, runtime, '
                       'driver, sync, overhead, default, all, none)')
    if os.path.exists(marker):
        failures.append("usage/bad kinds: the program was started")
    # A malformed --output pattern is refused before the program starts; a
    # %q{VAR} unset in cutrace's own environment is each traced process's
    # (torchrun sets RANK per rank): a note, and the program runs.
    check("run/bad output pattern", ["run", "--output", os.path.join(tmp, "r-%x.trace"), "--",
                                     "/bin/sh", "-c", f"echo > {marker}"], 1,
          must_contain="unknown %x in output pattern")
    if os.path.exists(marker):
        failures.append("run/bad output pattern: the program was started")
    check("run/rank pattern", ["run", "--output", os.path.join(tmp, "rank-%q{CUTRACE_TEST_UNSET}.trace"),
                               "--", "/bin/sh", "-c", f"echo > {marker}"], 0, want_stderr_lines=None,
          must_contain="CUTRACE_TEST_UNSET is not set here")
    if not os.path.exists(marker):
        failures.append("run/rank pattern: the program did not run")

    return finish("bad input")


if __name__ == "__main__":
    sys.exit(main())
