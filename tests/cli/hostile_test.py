#!/usr/bin/env python3
"""Runs the built `cutrace` on the hostile traces of issue 26 and checks what
it must do with each: never crash or hang, exit 0 (or 1 with one line
"cutrace: ..." on stderr), and print the known answer where one is known.

The traces come from tests/fuzz/make_hostile_traces.cc (also fuzz_reports'
seed corpus), written fresh into a temporary folder:
- timeline on a kernel ending at 2^64 - 1 and one spanning the whole clock
  (heap overflow and length_error before): exact bin sizes and bin ends;
  --width outside 20..1000 is a usage error, $COLUMNS is clamped;
- kernel durations summing past 2^64: Total and Avg print "overflow" (not a
  wrapped number), 2^64 - 1 in CSV and JSON;
- absurd gpu__time_duration counter values: "overflow", 0 for negative/NaN;
- escape sequences in names, host, command, device, end reason: no control
  byte reaches stdout in table form, every one is shown escaped;
- names starting with = + - @ TAB: quoted in CSV, numbers (-10) never;
- non-regular input: /dev/zero, /dev/urandom, a pipe, capped by --max-input;
  a FIFO with no writer; a trace truncated while a report maps it;
- clock anchors whose offset overflows, timestamps past 2^63: merge refuses;
- a Statistics packet with every count at 2^64 - 1: info and summary print
  2^64 - 1 for the sums (saturated, not wrapped), its invalid entries escaped;
- Devices no GPU has (NaN and infinite bandwidth, every count at its type's
  top, raw uuid bytes, escapes in name and PCI id): info shows them (JSON:
  "NaN"/"Infinity"/"-Infinity", base64 uuid, the numbers whole), every
  report runs, a merge keeps them, the Chrome export's thread count does not
  wrap;
- every file cutrace writes (merge, export, import) is 0600 even under umask 0.

usage: hostile_test.py CUTRACE MAKE_HOSTILE_TRACES
"""
import json
import os
import stat
import subprocess
import sys
import threading
import time

from script_checks import expect as check
from script_checks import expect_exit, failures, finish, run_cutrace
from temp_dir import run_in_temp_dir

CUTRACE, MAKE = sys.argv[1], sys.argv[2]
REPORTS = ["summary", "kernels", "memcpy", "gaps", "overlap", "nvtx", "api", "timeline",
           "diagnose", "metrics", "info"]
U64_MAX = 2**64 - 1


def run(args, timeout=30, env=None, stdin=None, umask=None):
    pre = (lambda: os.umask(umask)) if umask is not None else None
    return run_cutrace(CUTRACE, args, timeout, env=env, stdin=stdin, preexec_fn=pre)


def expect(label, args, want_rc, err_has=None, **kw):
    """Runs; checks the exit status and, for errors, one 'cutrace: ' line; the stdout."""
    r = run(args, **kw)
    expect_exit(label, args, r, want_rc, 1 if want_rc == 1 else None, err_has)
    return r and r[1].decode(errors="replace")


def table_row(text, name, last=False):
    """The cells of the first (or last) line ending in `name`: a table wider
    than the terminal is printed in parts, each repeating the name."""
    rows = [line.split() for line in text.splitlines() if line.rstrip().endswith(name)]
    return (rows[-1] if last else rows[0]) if rows else None


def skip_window(out):
    """The text after the "window: " line, which wraps (indented) at --width."""
    if not out or not out.startswith("window: "):
        return out
    lines = out.split("\n")
    i = 1
    while i < len(lines) and lines[i].startswith("  "):
        i += 1
    return "\n".join(lines[i:])


def timeline_checks(d):
    near, whole = f"{d}/kernel_near_2e64.trace", f"{d}/kernel_whole_clock.trace"
    # Every report's first line is its window (issue 19); the bins follow.
    out = expect("timeline near 2^64", ["timeline", near, "--width", "40"], 0)
    out = skip_window(out)
    # 1000 ns over 40 - 10 = 30 bins: ceil(1000 / 30) = 34 ns a bin.
    check("timeline near 2^64", out and out.startswith("30 bins of 34 ns each"), repr(out[:80]))
    out = expect("timeline whole clock", ["timeline", whole, "--width", "40"], 0)
    out = skip_window(out)
    check("timeline whole clock", out and out.startswith("30 bins of 614891469.124 s each"),
          repr(out[:80]))
    out = expect("timeline whole clock csv", ["timeline", whole, "--width", "40", "--format", "csv"], 0)
    last = out.splitlines()[-1].split(",") if out else []
    # The last bin starts at 29 * ceil((2^64 - 1) / 30) and ends at 2^64 - 1, not wrapped.
    check("timeline last bin", last[:4] == ["0", "29", str(29 * 614891469123651721), str(U64_MAX)],
          repr(last))
    for width in ["-1", "19", "1001", "4000000000", "1e9"]:
        expect(f"--width {width}", ["timeline", near, "--width", width], 2)
    expect("--width 20", ["timeline", near, "--width", "20"], 0)
    env = dict(os.environ, COLUMNS="4000000000")
    out = expect("COLUMNS huge", ["timeline", whole], 0, env=env)
    bar = [l for l in out.splitlines() if l.startswith("compute |")]
    # Clamped to 1000 columns: 1000 - 10 = 990 bins between the bars.
    check("COLUMNS clamped", bar and len(bar[0]) == len("compute |") + 990 + 1,
          repr(len(bar[0]) if bar else None))


def overflow_checks(d):
    sums = f"{d}/durations_sum_past_2e64.trace"
    out = expect("sum past 2^64", ["kernels", sums], 0)
    row = table_row(out, "huge")
    # Time(%) Total Count Avg ...: three launches of 2^63 ns each.
    check("overflowed total", row and row[:4] == ["100.0%", "overflow", "3", "overflow"], repr(row))
    row = table_row(out, "huge", last=True)  # StdDev is in the table's last part
    check("stddev of equal huge values", row and row[-3:-1] == ["0", "ns"], repr(row))
    out = expect("sum past 2^64 csv", ["kernels", sums, "--format", "csv"], 0)
    check("overflowed total csv", out and f"100.000,{U64_MAX},3,{U64_MAX}," in out, repr(out))
    out = expect("summary sum past 2^64", ["summary", sums], 0)
    check("summary overflow", out and "4 instances, overflow total" in out, repr(out[:400]))
    out = expect("counter 1e30", ["kernels", f"{d}/counter_time_1e30.trace"], 0)
    row = table_row(out, "counted_huge [counted]")
    check("counter overflow", row and row[1] == "overflow" and row[2] == "2", repr(row))
    row = table_row(out, "counted_negative [counted]")
    check("negative counter", row and row[1:3] == ["0", "ns"], repr(row))


def statistics_checks(d):
    trace = f"{d}/statistics_absurd.trace"
    out = expect("absurd statistics info", ["info", trace], 0)
    check("absurd statistics: no control byte", out is not None and not has_control(out.encode()),
          repr(out and out[-600:]))
    # Two drop counts and two invalid counts of 2^64 - 1 each: the sums stay at 2^64 - 1.
    # A long value wraps under itself, so spaces are compared as any run of them.
    flat = " ".join(out.split()) if out else ""
    check("absurd statistics: dropped",
          f"{U64_MAX} by CUPTI, {U64_MAX} queue full: reports undercount" in flat,
          repr(out and out[-600:]))
    check("absurd statistics: invalid", out and f"invalid           {U64_MAX}\n" in out,
          repr(out and out[-600:]))
    check("absurd statistics: escaped", out and "kernel\\x1b[31m" in out, repr(out and out[-600:]))
    out = expect("absurd statistics info json", ["info", trace, "--format", "json"], 0)
    st = json.loads(out)["files"][0]["statistics"] if out else {}
    check("absurd statistics json",
          st.get("kernels") == U64_MAX and st.get("records_handled") == 0 and
          st.get("buffers_dropped_at_detach") == U64_MAX and len(st.get("invalid", [])) == 2,
          repr(st))
    out = expect("absurd statistics summary", ["summary", trace, "--format", "json"], 0)
    overview = json.loads(out).get("overview", []) if out else []
    check("absurd statistics summary", overview and overview[0].get("dropped") == U64_MAX and
          overview[0].get("invalid") == U64_MAX, repr(overview))
    for report in REPORTS:
        expect(f"absurd statistics {report}", [report, trace], 0)


def device_checks(d):
    trace = f"{d}/device_absurd.trace"
    out = expect("absurd devices info", ["info", trace], 0)
    check("absurd devices: no control byte", out is not None and not has_control(out.encode()),
          repr(out and out[-900:]))
    u32 = 2**32 - 1
    # Table lines wrap at the width, so spaces are compared as any run of them.
    flat = " ".join(out.split()) if out else ""
    for words in [f"devices 0 GPU\\x1b[31m", f" 1 GPU\\x1b[31m", f" {u32} GPU\\x1b[31m",
                  f" {u32} SMs overflow CC {u32}.{u32}", f"CC {u32}.{u32} inf GB/s"]:
        check(f"absurd devices info {words!r}", words in flat, repr(flat[-900:]))
    check("absurd devices: NaN and -inf bandwidth not shown", out and out.count("GB/s") == 1,
          repr(out and out[-900:]))
    want = [(0, "NaN", "AP8bYQ=="), (1, "Infinity", "AP8bYg=="), (u32, "-Infinity", "AP8bYw==")]

    def devices_of(path, label):
        out = expect(label, ["info", path, "--format", "json"], 0)
        return json.loads(out)["files"][0]["devices"] if out else []

    for label, path in [("info json", trace), ("merged", f"{d}/devices_merged.trace")]:
        if label == "merged":
            expect("absurd devices merge", ["merge", trace, f"{d}/statistics_absurd.trace", "-o",
                                            path], 0)
        devs = devices_of(path, f"absurd devices {label}")
        got = [(x.get("id"), x.get("peak_memory_bandwidth_gbps"), x.get("uuid")) for x in devs]
        # Merged, the other file (same pid, no run id: another process) keeps
        # its own device 0, placed at the first free id.
        expected = want if label != "merged" else sorted(want + [(2, 0, "")])
        check(f"absurd devices {label}", got == expected, repr(got))
        devs = [x for x in devs if x.get("uuid")]
        check(f"absurd devices {label} counts",
              all(x.get("global_memory_bytes") == U64_MAX and x.get("sm_count") == u32 and
                  x.get("pci_bus_id", "").startswith("\x1b[31mRED") for x in devs),
              repr(devs[:1]))
    for report in REPORTS:
        expect(f"absurd devices {report}", [report, trace], 0)
    out = expect("absurd devices export", ["export", trace, "-o", "-"], 0)
    props = json.loads(out)["deviceProperties"] if out else []
    check("absurd devices export", [p.get("maxThreadsPerMultiprocessor") for p in props] ==
          [u32 * 32] * 3, repr(props[:1]))


def has_control(data):
    return any(b < 0x20 and b not in (0x0a,) or b == 0x7f for b in data) or b"\xc2\x9b" in data


def terminal_checks(d):
    trace = f"{d}/control_characters.trace"
    for report in REPORTS:
        r = run([report, trace])
        if r is None or r[0] != 0:
            failures.append(f"escapes: {report}: {r and r[0]} {r and r[2]!r}")
            continue
        check(f"escapes: {report}", not has_control(r[1]) and not has_control(r[2].encode()),
              repr(r[1][:300]))
    out = run(["kernels", trace])[1].decode()
    check("escapes shown", "kernel\\x1b[31mRED\\x1b[2J\\x1b]0;owned\\x07\\u009b1m\\nNEXT\\r" in out,
          repr(out))
    out = run(["info", trace])[1].decode()
    for what in ["host\\x1b[31m", "./app\\x1b[31m", "GPU\\x1b[31m", "clean (exit\\x1b[31m"]:
        check(f"info shows {what}", what in out, repr(out[:600]))


def csv_checks(d):
    names = f"{d}/csv_formula_names.trace"
    out = expect("csv formula", ["kernels", names, "--format", "csv"], 0)
    # Each name is followed by its short form (guarded the same way).
    for cell in ["'+1+1", "'-2+3", "'@SUM(A1)", "'\tTAB", '"\'=HYPERLINK(""http://x"")"']:
        check(f"csv guards {cell!r}", f",{cell}," in out, repr(out))
    for short in ["'@SUM(\u2026)", "'=HYPERLINK(\u2026)"]:
        check(f"csv guards short name {short!r}", f",{short}\n" in out, repr(out))
    check("csv plain name", ",plain,plain\n" in out, repr(out))
    out = expect("csv export", ["export", names, "--format", "csv", "-o", f"{d}/csv"], 0)
    kernels = open(f"{d}/csv/kernels.csv").read()
    check("export guards", ",'+1+1," in kernels and ",'-2+3," in kernels, repr(kernels))
    # A number column keeps its minus sign: diff's delta of a removed kernel.
    out = expect("csv negative number", ["diff", names, f"{d}/durations_sum_past_2e64.trace",
                                         "--format", "csv"], 0)
    check("negative stays a number", "removed,-10,0.000000,10,0,1,0,'+1+1" in out, repr(out))


def input_checks(d):
    cap = ["--max-input", "1M"]
    msg = "input larger than --max-input (1048576 bytes)"
    expect("info /dev/zero", ["info", "/dev/zero"] + cap, 1, f"/dev/zero: {msg}")
    expect("kernels /dev/urandom", ["kernels", "/dev/urandom"] + cap, 1, msg)
    expect("import /dev/zero", ["import", "/dev/zero", "-o", f"{d}/z.trace"] + cap, 1, msg)
    yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    expect("yes | info /dev/stdin", ["info", "/dev/stdin"] + cap, 1, msg, stdin=yes.stdout)
    yes.kill()
    yes.wait()
    expect("--max-input junk", ["info", "/dev/zero", "--max-input", "lots"], 2)
    fifo = f"{d}/fifo"
    os.mkfifo(fifo)
    start = time.monotonic()
    expect("fifo without writer", ["info", fifo], 1, "no data from the FIFO within 10 s")
    check("fifo wait bounded", time.monotonic() - start < 20)


def truncation_checks(d):
    # A trace of ~100 MB: the hostile kernels' batch packet repeated. It is
    # cut to its header while `kernels` reads it: the report either finishes
    # first (exit 0) or stops with one line (exit 1); never a signal.
    base = open(f"{d}/csv_formula_names.trace", "rb").read()
    big = f"{d}/big.trace"
    with open(big, "wb") as f:
        f.write(base * (100_000_000 // len(base)))
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("r", run(["kernels", big])))
    t.start()
    time.sleep(0.05)
    os.truncate(big, 40)
    t.join()
    if result["r"] is None:
        check("truncated while read", False, "hung")
        return
    rc, _, err = result["r"]
    # On a busy machine the cut can come before the report opens the file:
    # then the 40 bytes left are read as a cut-short trace (a warning, exit
    # 0, or one error line, exit 1). Either way one line naming the file at
    # most, and never a signal.
    lines = err.splitlines()
    check("truncated while read",
          rc in (0, 1) and len(lines) <= 1 and all(l.startswith(f"cutrace: {big}:") for l in lines)
          and (rc == 0 or lines),
          f"exit {rc}, stderr {err!r}")


def placement_and_mode_checks(d):
    ok_a, ok_b = f"{d}/csv_formula_names.trace", f"{d}/control_characters.trace"
    expect("anchor overflow", ["merge", f"{d}/anchor_offset_overflow.trace", ok_a, "-o",
                               f"{d}/m1.trace"], 1, "clock anchor out of range")
    expect("past 2^63", ["merge", f"{d}/timestamps_past_2e63.trace", ok_a, "-o", f"{d}/m2.trace"],
           1, "timestamps leave the realtime range")
    outs = {"merge": (["merge", ok_a, ok_b, "-o", f"{d}/m.trace"], f"{d}/m.trace"),
            "chrome": (["export", ok_a, "--format", "chrome", "-o", f"{d}/o.json"], f"{d}/o.json"),
            "perfetto": (["export", ok_a, "--format", "perfetto", "-o", f"{d}/o.pb"], f"{d}/o.pb"),
            "csv": (["export", ok_a, "--format", "csv", "-o", f"{d}/c"], f"{d}/c/kernels.csv")}
    for label, (args, path) in outs.items():
        expect(f"mode {label}", args, 0, umask=0)
        mode = stat.S_IMODE(os.stat(path).st_mode) if os.path.exists(path) else None
        check(f"mode {label}", mode == 0o600, oct(mode) if mode is not None else "missing")
    expect("mode import", ["import", f"{d}/o.json", "-o", f"{d}/i.trace"], 0, umask=0)
    mode = stat.S_IMODE(os.stat(f"{d}/i.trace").st_mode)
    check("mode import", mode == 0o600, oct(mode))
    check("mode csv dir", stat.S_IMODE(os.stat(f"{d}/c").st_mode) == 0o700)


def checks(d):
    subprocess.run([MAKE, d], check=True)
    for f in sorted(os.listdir(d)):
        expect(f"info {f}", ["info", os.path.join(d, f)], 0)  # every case is a readable trace
    timeline_checks(d)
    overflow_checks(d)
    terminal_checks(d)
    statistics_checks(d)
    device_checks(d)
    csv_checks(d)
    input_checks(d)
    truncation_checks(d)
    placement_and_mode_checks(d)
    return finish("hostile traces")


if __name__ == "__main__":
    sys.exit(run_in_temp_dir("cutrace-hostile-test.", checks))
