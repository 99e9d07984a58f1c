#!/usr/bin/env python3
"""The fail-open matrix: every fault a traced program can meet, and what it must not change.

  failopen.py [--group matrix|load|asan|all] [--case NAME ...] --cutrace BIN [--bin-dir DIR]
              [--lib SO] [--asan-dir DIR] [--fake-cupti SO] [--work DIR] [--json-out FILE]
  failopen.py --list | --names | --apps

Each case runs a program bare and then with the injection library (LD_PRELOAD,
the way `cutrace run` injects it) under one fault, each run under a timeout,
and checks:
  - the exit status and stdout are those of the bare run (nothing hangs);
  - stderr holds at most the case's number of `cutrace:` lines, one per
    problem, each saying what it is (patterns below), and otherwise what the
    bare run printed there;
  - the trace is what the fault allows: none (cutrace stepped aside), complete
    (clean shutdown, zero drops and invalid records, exact kernel counts from
    the app's truth), or cut short but readable, with the loss reported by
    `cutrace info` and `cutrace summary`.
Groups: `matrix` (the faults), `load` (1 M launches from 16 threads on 8
streams: default pool, then a tiny one whose drops must be counted exactly),
`asan` (testapps under the library built with ASan+UBSan, from --asan-dir).
A case whose tool is absent (torch, compute-sanitizer, root for a tmpfs, a
GPU) is SKIPPED with the reason. Exit 0 when nothing failed, 1 otherwise, 77
when every selected case was skipped. python3 stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cutrace_checks as cc  # noqa: E402
from validate import (DETACH_KINDS, Result, clean_env, cutrace_json, has_gpu,  # noqa: E402
                      install_stop_handlers, run)

SKIP = 77
ASAN_OPTIONS = ("protect_shadow_gap=0:detect_leaks=0:verify_asan_link_order=0:"
                "halt_on_error=1:allocator_may_return_null=1")


class Skip(Exception):
    """A case cannot run here (no tool, no root...): reported as SKIP with the reason."""


@dataclass
class Ctx:
    """Where one case runs, and what its setup decided."""
    args: argparse.Namespace
    work: Path
    out_dir: Path
    env: dict[str, str] = field(default_factory=dict)  # setup's additions to the traced env
    cleanup: list[Callable[[], None]] = field(default_factory=list)
    prefix: list[str] = field(default_factory=list)  # runs both runs through this (setpriv)
    truth_dir: Path | None = None  # where the app writes its truth (default: work)
    bin_dir: str | None = None     # overrides --bin-dir / --lib for this case
    lib: str | None = None


@dataclass
class Case:
    name: str
    group: str
    fault: str    # what goes wrong, for the matrix table
    expect: str   # what must happen instead, for the table
    argv: list[str]            # {bin} = --bin-dir, {python}, {here} = this folder
    app: str | None = None     # a testapp: gets --truth FILE
    env: dict[str, str] = field(default_factory=dict)         # traced run only
    both_env: dict[str, str] = field(default_factory=dict)    # bare and traced
    trace: str = "complete"    # none | complete | any | cut_short
    max_lines: int = 0         # `cutrace:` lines allowed on stderr
    lines: tuple[str, ...] = ()  # regexes; each must match one of those lines
    compare_stderr: bool = True  # the program's own stderr must equal the bare run's
    needs_gpu: bool = True
    needs: tuple[str, ...] = ()  # torch, compute-sanitizer, root, fake_cupti, asan, counters
    setup: Callable[[Ctx], None] | None = None
    extra: Callable[[Ctx, Result, dict, list], list] | None = None  # more checks
    timeout: int = 60
    asan: bool = False         # inject --asan-dir's library instead of --lib


# ---------------------------------------------------------------------------
# Setups: each may raise Skip, add env for the traced run, or register cleanup.

def _root() -> bool:
    return os.geteuid() == 0


def _mount_tmpfs(ctx: Ctx, options: str) -> Path:
    if not _root() or shutil.which("mount") is None:
        raise Skip("needs root and mount(8) for a tmpfs")
    mnt = ctx.work / "mnt"
    mnt.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "cutrace-failopen", str(mnt)],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise Skip(f"mount -t tmpfs -o {options} failed: {r.stderr.strip()[:200]}")
    ctx.cleanup.append(lambda: subprocess.run(["umount", "-l", str(mnt)], capture_output=True,
                                              timeout=30))
    return mnt


def setup_output_missing(ctx: Ctx) -> None:
    ctx.out_dir = ctx.work / "does-not-exist" / "deeper"
    ctx.env["CUTRACE_OUTPUT"] = str(ctx.out_dir) + "/"


def setup_output_readonly(ctx: Ctx) -> None:
    if _root():
        ctx.out_dir = _mount_tmpfs(ctx, "ro,size=64k,mode=0700")
    else:
        ctx.out_dir.chmod(0o500)
        ctx.cleanup.append(lambda: ctx.out_dir.chmod(0o700))
    ctx.env["CUTRACE_OUTPUT"] = str(ctx.out_dir) + "/"


def setup_output_full(ctx: Ctx) -> None:
    ctx.out_dir = _mount_tmpfs(ctx, "size=64k,mode=0700")
    ctx.env["CUTRACE_OUTPUT"] = str(ctx.out_dir) + "/"


def setup_output_not_owned(ctx: Ctx) -> None:
    if not _root():
        raise Skip("needs root to give a directory to another user")
    ctx.out_dir.chmod(0o777)  # writable, so only the ownership check can refuse it
    os.chown(ctx.out_dir, 65534, 65534)
    ctx.env["CUTRACE_OUTPUT"] = str(ctx.out_dir) + "/"


def setup_output_world_writable(ctx: Ctx) -> None:
    ctx.out_dir.chmod(0o777)  # no sticky bit
    ctx.env["CUTRACE_OUTPUT"] = str(ctx.out_dir) + "/"


def setup_output_symlink(ctx: Ctx) -> None:
    target = ctx.work / "victim.txt"
    target.write_text("not a trace\n")
    (ctx.out_dir / "fixed.trace").symlink_to(target)
    ctx.env["CUTRACE_OUTPUT"] = str(ctx.out_dir / "fixed.trace")

    def check_victim() -> None:
        if target.read_text() != "not a trace\n":
            raise AssertionError("the symlink's target was written through")
    ctx.cleanup.append(check_victim)


def setup_fake_cupti(ctx: Ctx) -> None:
    fake = ctx.args.fake_cupti
    if not fake or not Path(fake).exists():
        raise Skip(f"no fake libcupti ({fake or 'pass --fake-cupti'})")
    ctx.env["CUTRACE_CUPTI_PATH"] = str(Path(fake).resolve())


def _need_counter_build(ctx: Ctx) -> None:
    lib = Path(ctx.args.lib).read_bytes() if Path(ctx.args.lib).exists() else b""
    if b"CUTRACE_METRICS" not in lib:
        raise Skip("this build records no hardware counters (issue 4)")


def setup_counters(ctx: Ctx) -> None:
    _need_counter_build(ctx)
    if not _root() or shutil.which("setpriv") is None:
        raise Skip("needs root and setpriv(1) to run the program as an unprivileged user")
    # The program runs as nobody: without CAP_SYS_ADMIN the driver refuses counters
    # (ERR_NVGPUCTRPERM) unless profiling was opened to all users. Its binary, the
    # library and its output live where nobody can reach them.
    home = Path(tempfile.mkdtemp(prefix="cutrace-nobody-"))
    ctx.cleanup.append(lambda: shutil.rmtree(home, ignore_errors=True))
    home.chmod(0o755)
    shutil.copy2(Path(ctx.args.bin_dir) / "ct_launch_storm", home / "ct_launch_storm")
    shutil.copy2(ctx.args.lib, home / "libcutrace_injection.so")
    for name in ("truth", "traces"):
        (home / name).mkdir(mode=0o700)
        os.chown(home / name, 65534, 65534)
    ctx.bin_dir, ctx.lib = str(home), str(home / "libcutrace_injection.so")
    ctx.out_dir, ctx.truth_dir = home / "traces", home / "truth"
    ctx.prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    ctx.env["CUTRACE_OUTPUT"] = str(ctx.out_dir) + "/"
    ctx.env["CUTRACE_METRICS"] = "speed-of-light"


def _counters_line(res: Result, traces: list, label: str, marker: str, which: str,
                   allowed: str) -> list[cc.Check]:
    """One `cutrace:` line carrying `marker` and no counter samples; or, where the device
    allowed counting after all, no line and samples (said as `allowed`)."""
    lines = cutrace_lines(res.stderr)
    samples = sum(cc._num(cc.info_file(i).get("counter_samples", 0)) for _, i in traces)
    said = [l for l in lines if marker in l]
    if said:
        return [cc.Check(label, len(lines) == 1 and samples == 0,
                         f"{said[0][:200]}; {samples} counter samples in the trace")]
    if lines:
        return [cc.Check(label, False, f"a line, but not the {which} one: {lines[:2]}")]
    return [cc.Check(label, samples > 0, f"{allowed}; {samples} counter samples in the trace")]


def counters_outcome(ctx: Ctx, res: Result, truth: dict, traces: list) -> list[cc.Check]:
    """Refused: the one line says why and how to fix it. Allowed here after all (profiling
    opened to every user): the counters are in the trace, and that is said instead."""
    return _counters_line(res, traces, "counters refused in one line", "ERR_NVGPUCTRPERM",
                          "permission", "no refusal: the driver lets unprivileged users profile here")


def setup_counters_busy(ctx: Ctx) -> None:
    """Another profiler holds the counters: a second process under cutrace counting every
    launch of a long launch storm, started first and killed at cleanup."""
    _need_counter_build(ctx)
    holder_out = ctx.work / "holder"
    holder_out.mkdir(parents=True, exist_ok=True)
    env = dict(clean_env(), CUDA_INJECTION64_PATH=str(Path(ctx.args.lib).resolve()),
               CUTRACE_OUTPUT=str(holder_out) + "/", CUTRACE_METRICS="gpu__time_duration.sum",
               CUTRACE_KERNEL_SAMPLE="1")
    holder = subprocess.Popen([str(Path(ctx.args.bin_dir) / "ct_launch_storm"), "--n", "100000000"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)

    def stop() -> None:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
    ctx.cleanup.append(stop)
    time.sleep(4)  # past its cuInit and first counted launches
    if holder.poll() is not None:
        err = holder.stderr.read().decode(errors="replace").strip() if holder.stderr else ""
        raise Skip(f"the counting program ended early ({holder.returncode}): {err[-200:]}")
    ctx.env["CUTRACE_METRICS"] = "speed-of-light"


def counters_busy_outcome(ctx: Ctx, res: Result, truth: dict, traces: list) -> list[cc.Check]:
    """Busy: one line naming the other profiler and how to stop it, the trace without counters.
    A device that lets two processes count at once is said, not failed."""
    return _counters_line(res, traces, "counters busy said in one line", "in use by another profiler",
                          "busy", "not busy: the device let two processes count at once")


def setup_no_gpu(ctx: Ctx) -> None:
    # On a machine with a GPU, hide it: the program meets "no CUDA-capable device".
    if has_gpu():
        ctx.env["CUDA_VISIBLE_DEVICES"] = ""


def _need_tool(name: str) -> None:
    if name == "torch":
        r = subprocess.run([sys.executable, "-c", "import torch; assert torch.cuda.is_available()"],
                           capture_output=True, timeout=120, env=clean_env())
        if r.returncode != 0:
            raise Skip("no PyTorch with CUDA here")
    elif name == "compute-sanitizer":
        if _compute_sanitizer() is None:
            raise Skip("no compute-sanitizer on PATH or in /usr/local/cuda/bin")
    elif name == "root":
        if not _root():
            raise Skip("needs root")


def _compute_sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    default = Path("/usr/local/cuda/bin/compute-sanitizer")
    return str(default) if default.exists() else None


# ---------------------------------------------------------------------------
# Extra checks.

def _info(ctx: Ctx, trace: Path) -> tuple[dict | None, str]:
    r = run([ctx.args.cutrace, "info", str(trace), "--format", "json"], clean_env(), 120)
    if r.status != 0:
        return None, f"cutrace info exited {r.status}: {r.stderr.strip()[-300:]}"
    try:
        return json.loads(r.stdout), ""
    except json.JSONDecodeError as e:
        return None, f"cutrace info printed invalid JSON: {e}"


def load_figures(ctx: Ctx, res: Result, truth: dict, traces: list) -> list[cc.Check]:
    """The default-pool load run: RSS traced vs bare, the pool's bound, zero drops (checked
    by the trace expectation), and the launch rate."""
    checks = []
    bare_truth = (ctx.truth_dir or ctx.work) / "bare-truth.json"
    bare = json.loads(bare_truth.read_text()) if bare_truth.exists() else {}
    rss_bare = cc._num(bare.get("load", {}).get("peak_rss_bytes"))
    rss_traced = cc._num(truth.get("load", {}).get("peak_rss_bytes"))
    stats = cc.info_file(traces[0][1]).get("statistics") or {} if traces else {}
    peak, _ = cc.stat(stats, "peak_memory_bytes")
    pool, _ = cc.stat(stats, "buffer_bytes")
    delta = rss_traced - rss_bare
    # The pool's buffers, the writer queue's bound (256 MiB of records) and CUPTI's own
    # allocations are what the library may add; anything past that is unbounded growth.
    bound = pool + (256 << 20) + (256 << 20)
    figures = {"peak_rss_bare_bytes": rss_bare, "peak_rss_traced_bytes": rss_traced,
               "rss_delta_bytes": delta, "statistics_peak_memory_bytes": peak,
               "pool_bytes": pool,
               "us_per_launch_bare": bare.get("load", {}).get("us_per_launch"),
               "us_per_launch_traced": truth.get("load", {}).get("us_per_launch")}
    checks.append(cc.Check(
        "memory bounded by the pool", 0 < peak <= pool and delta <= bound,
        f"peak RSS bare {rss_bare >> 20} MiB, traced {rss_traced >> 20} MiB (+{delta >> 20} MiB, "
        f"bound {bound >> 20} MiB); Statistics.peak_memory_bytes {peak >> 20} MiB of a "
        f"{pool >> 20} MiB pool; us/launch bare {figures['us_per_launch_bare']}, traced "
        f"{figures['us_per_launch_traced']}", figures))
    return checks


def drops_exact(ctx: Ctx, res: Result, truth: dict, traces: list) -> list[cc.Check]:
    """The tiny-pool load run: drops happen, are counted exactly, and every report says so."""
    if len(traces) != 1:
        return [cc.Check("drops counted exactly", False, f"{len(traces)} traces")]
    path, info = traces[0]
    f = cc.info_file(info)
    stats = f.get("statistics") or {}
    launched = sum(truth.get("kernels", {}).values())
    kernels = cc.info_events(info).get("kernels", 0)
    cupti, _ = cc.stat(stats, "records_dropped_by_cupti")
    queue, _ = cc.stat(stats, "records_dropped_queue_full")
    stat_kernels, _ = cc.stat(stats, "kernels")
    refused, _ = cc.stat(stats, "buffers_refused")
    dropped = cupti + queue
    figures = {"launched": launched, "kernels_in_trace": kernels, "dropped_by_cupti": cupti,
               "dropped_queue_full": queue, "buffers_refused": refused,
               "statistics_kernels": stat_kernels}
    checks = [
        cc.Check("drops happen", dropped > 0,
                 f"{dropped} dropped ({cupti} by CUPTI, {queue} queue full), "
                 f"{refused} buffer requests refused", figures),
        cc.Check("drops counted exactly", kernels + dropped == launched,
                 f"{kernels} kernels in the trace + {dropped} dropped = {kernels + dropped}, "
                 f"launched {launched} (difference {kernels + dropped - launched:+d}); "
                 f"Statistics.kernels {stat_kernels}"),
    ]
    def says(text: str, *numbers: int) -> bool:
        """A line that says "dropped" and gives each number."""
        return any("dropped" in line and all(re.search(rf"\b{n}\b", line) for n in numbers)
                   for line in text.splitlines())

    table = run([ctx.args.cutrace, "info", str(path)], clean_env(), 120)
    checks.append(cc.Check("cutrace info reports the drops",
                           table.status == 0 and says(table.stdout, cupti, queue),
                           " | ".join(l.strip() for l in table.stdout.splitlines()
                                      if "dropped" in l)[:300] or f"exit {table.status}"))
    summary = run([ctx.args.cutrace, "summary", str(path)], clean_env(), 120)
    text = summary.stdout + summary.stderr
    checks.append(cc.Check("cutrace summary reports the drops",
                           summary.status == 0 and says(text, dropped),
                           " | ".join(l.strip() for l in text.splitlines() if "dropped" in l)[:300]
                           or f"exit {summary.status}, no line says 'dropped'"))
    return checks


def torch_profiler_works(ctx: Ctx, res: Result, truth: dict, traces: list) -> list[cc.Check]:
    """Without this, equal stdout could mean torch.profiler is broken with and without cutrace."""
    want = "torch.profiler saw 50 mul kernels on the GPU"
    bare = (ctx.work / "bare-stdout.txt").read_text()
    return [cc.Check("torch.profiler saw every kernel", want in bare and want in res.stdout,
                     f"bare: {bare.strip().splitlines()[-1:]}, traced: "
                     f"{res.stdout.strip().splitlines()[-1:]}")]


def crash_dumped(ctx: Ctx, res: Result, truth: dict, traces: list) -> list[cc.Check]:
    """A crash with the flight recorder on: the trace finished, and one dump of the ring."""
    dumps = [(f, i) for f, i in traces if "flight-" in f.name]
    mains = [(f, i) for f, i in traces if "flight-" not in f.name]
    launched = sum(truth.get("kernels", {}).values())
    out = [cc.Check("one trace and one flight-recorder dump", len(mains) == 1 and len(dumps) == 1,
                    f"{[f.name for f, _ in traces]}")]
    if len(mains) == 1:
        fi = cc.info_file(mains[0][1])
        out.append(cc.Check("the trace finished at the crash", fi.get("clean_shutdown") is True,
                            f"clean_shutdown={fi.get('clean_shutdown')}"))
    if len(dumps) == 1:
        got = cc.info_events(dumps[0][1]).get("kernels", 0)
        out.append(cc.Check("the dump holds the run's kernels", launched > 0 and got == launched,
                            f"{got} of {launched}"))
    return out


def windows_detached(least: int, most: int | None = None):
    """Continuous mode with CUTRACE_DETACH=1: the windows' chunks (each read
    and judged complete by the "any" trace check), fewer kernels in them than
    were launched, and CUPTI detached between windows `least` to `most`
    times (Statistics.cupti_detaches; None: no bound; 0, 0: it must stay
    attached, e.g. beside the program's own CUPTI client)."""
    def check(ctx: Ctx, res: Result, truth: dict, traces: list) -> list[cc.Check]:
        launched = sum(truth.get("kernels", {}).values())
        got = sum(cc.info_events(i).get("kernels", 0) for _, i in traces)
        detaches = max((int(str((cc.info_file(i).get("statistics") or {}).get("cupti_detaches", 0) or 0))
                        for _, i in traces), default=0)
        out = [cc.Check("windows written", len(traces) >= 1, f"{len(traces)} chunks"),
               cc.Check("no more kernels than launched", got <= launched or not launched,
                        f"{got} in the windows of {launched} launched")]
        name = "CUPTI stayed attached" if most == 0 else "CUPTI detached between windows"
        bound = f"{least}.." + ("" if most is None else str(most))
        out.append(cc.Check(name, least <= detaches and (most is None or detaches <= most),
                            f"cupti_detaches={detaches} ({bound})"))
        return out
    return check


# ---------------------------------------------------------------------------
# The matrix.

STORM = ["{bin}/ct_launch_storm", "--n", "2000", "--warmup", "0"]
ONE_LINE_NO_TRACE = "the program runs untraced; one line; no trace"

CASES: list[Case] = [
    Case("no_gpu_program", "matrix", "a program that never touches the GPU (/bin/echo)",
         "no cutrace output at all, no trace", ["/bin/echo", "hello", "from", "echo"],
         env={"CUDA_INJECTION64_PATH": "{lib}"}, trace="none", needs_gpu=False),
    Case("no_gpu_cuda_app", "matrix",
         "a CUDA program with no usable GPU or driver (GPU hidden by CUDA_VISIBLE_DEVICES='')",
         "the program fails exactly as without cutrace; at most one line; no trace or an empty "
         "clean one", ["{bin}/ct_launch_storm", "--n", "10"], trace="any", max_lines=1,
         needs_gpu=False, setup=setup_no_gpu),
    Case("cupti_missing", "matrix", "CUPTI missing (CUTRACE_CUPTI_PATH=/nonexistent)",
         ONE_LINE_NO_TRACE, STORM, app="launch_storm",
         env={"CUTRACE_CUPTI_PATH": "/nonexistent/libcupti.so.13"}, trace="none", max_lines=1,
         lines=(r"^cutrace: cannot load libcupti .*CUTRACE_CUPTI_PATH",)),
    Case("cupti_other_version", "matrix",
         "a libcupti of another version (a stand-in reporting API 12.8)", ONE_LINE_NO_TRACE,
         STORM, app="launch_storm", trace="none", max_lines=1, needs=("fake_cupti",),
         lines=(r"^cutrace: libcupti reports API version 120800.*CUTRACE_CUPTI_PATH",),
         setup=setup_fake_cupti),
    Case("output_missing", "matrix", "output directory missing", ONE_LINE_NO_TRACE, STORM,
         app="launch_storm", trace="none", max_lines=1,
         lines=(r"^cutrace: cannot create .*No such file or directory.*CUTRACE_OUTPUT",),
         setup=setup_output_missing),
    Case("output_readonly", "matrix", "output directory read-only (a read-only tmpfs)",
         ONE_LINE_NO_TRACE, STORM, app="launch_storm", trace="none", max_lines=1,
         lines=(r"^cutrace: cannot create .*(Read-only file system|Permission denied)",),
         setup=setup_output_readonly),
    Case("output_full", "matrix", "output directory full (a 64 KiB tmpfs)",
         "one line saying the trace is incomplete; the file reads back up to its last packet "
         "and says it was cut short", ["{bin}/ct_launch_storm", "--n", "100000"],
         app="launch_storm", trace="cut_short", max_lines=1,
         lines=(r"^cutrace: trace .* is incomplete: .*No space left on device",),
         setup=setup_output_full),
    Case("output_not_owned", "matrix", "output directory owned by another user",
         ONE_LINE_NO_TRACE, STORM, app="launch_storm", trace="none", max_lines=1,
         lines=(r"^cutrace: refusing to write .*owned by uid 65534",),
         setup=setup_output_not_owned),
    Case("output_world_writable", "matrix",
         "output directory writable by everyone, no sticky bit", ONE_LINE_NO_TRACE, STORM,
         app="launch_storm", trace="none", max_lines=1,
         lines=(r"^cutrace: refusing to write .*writable by others",),
         setup=setup_output_world_writable),
    Case("output_symlink", "matrix", "a symlink planted at the output path",
         ONE_LINE_NO_TRACE + "; the link's target untouched", STORM, app="launch_storm",
         trace="none", max_lines=1, lines=(r"^cutrace: refusing to write through symlink",),
         setup=setup_output_symlink),
    Case("bad_output_pattern", "matrix", "a bad CUTRACE_OUTPUT pattern (%z)", ONE_LINE_NO_TRACE,
         STORM, app="launch_storm", env={"CUTRACE_OUTPUT": "cutrace-%z.trace"}, trace="none",
         max_lines=1, lines=(r"^cutrace: CUTRACE_OUTPUT: unknown %z",)),
    Case("bad_values", "matrix", "six bad CUTRACE_* values",
         "one line per bad value, its default used; the trace complete", STORM,
         app="launch_storm",
         env={"CUTRACE_BUFFER_SIZE": "99M", "CUTRACE_KINDS": "kernel,bogus",
              "CUTRACE_QUEUE_BATCHES": "-5", "CUTRACE_FILE_MODE": "0999",
              "CUTRACE_LOG": "loud", "CUTRACE_FLUSH_TIMEOUT_MS": "soon"},
         max_lines=6,
         lines=(r"^cutrace: CUTRACE_BUFFER_SIZE=99M: ", r"^cutrace: CUTRACE_KINDS=kernel,bogus: ",
                r"^cutrace: CUTRACE_QUEUE_BATCHES=-5: ", r"^cutrace: CUTRACE_FILE_MODE=0999: ",
                r"^cutrace: CUTRACE_LOG=loud: ", r"^cutrace: CUTRACE_FLUSH_TIMEOUT_MS=soon: ")),
    Case("fork", "matrix",
         "fork without exec (CUDA only in the parent), and fork + exec of a traced child",
         "parent and exec'd child each a complete trace; the plain child none; no output",
         ["{bin}/ct_fork"], app="fork"),
    Case("exit_thread", "matrix", "exit() from a non-main thread",
         "status passed through; the trace complete", ["{bin}/ct_exit_thread", "--status", "3"],
         app="exit_thread"),
    Case("sigint", "matrix", "SIGINT (default disposition)",
         "dies of SIGINT as without cutrace; the trace complete",
         ["{bin}/ct_signal_self", "--signal", "INT"], app="signal_self"),
    Case("sigterm", "matrix", "SIGTERM (default disposition)",
         "dies of SIGTERM as without cutrace; the trace complete",
         ["{bin}/ct_signal_self", "--signal", "TERM"], app="signal_self"),
    Case("sigkill", "matrix", "SIGKILL",
         "dies of SIGKILL; the file reads back up to its last packet; info and summary say it "
         "was cut short", ["{bin}/ct_die", "--how", "kill"], app="die", trace="cut_short"),
    Case("abort", "matrix", "abort() (SIGABRT, not caught)",
         "dies of SIGABRT; the file reads back up to its last packet; info and summary say it "
         "was cut short", ["{bin}/ct_die", "--how", "abort"], app="die", trace="cut_short"),
    Case("abort_flight_recorder", "matrix", "abort() with the flight recorder on",
         "dies of SIGABRT; the trace finished and the ring dumped, every kernel in the dump",
         ["{bin}/ct_die", "--how", "abort"], app="die", env={"CUTRACE_FLIGHT_RECORDER": "30s"},
         trace="any", extra=crash_dumped),
    Case("segv_flight_recorder", "matrix", "a segmentation fault with the flight recorder on",
         "dies of SIGSEGV; the trace finished and the ring dumped, every kernel in the dump",
         ["{bin}/ct_die", "--how", "segv"], app="die", env={"CUTRACE_FLIGHT_RECORDER": "30s"},
         trace="any", extra=crash_dumped),
    Case("device_reset", "matrix", "cudaDeviceReset, then CUDA used again (twice)",
         "the trace complete: every kernel of every context", ["{bin}/ct_device_reset"],
         app="device_reset"),
    Case("module_reload", "matrix",
         "modules loaded from PTX, unloaded and reloaded (cuModuleLoadData/Unload)",
         "the trace complete, every kernel under its own name", ["{bin}/ct_module_reload"],
         app="module_reload"),
    # Last: the cases that start other tools (slowest, and the likeliest to hang).
    Case("torch_profiler_first", "matrix",
         "another CUPTI client: torch.profiler active before CUDA starts",
         "torch.profiler still sees every kernel (same stdout as bare); cutrace at most one "
         "line; no trace or a complete one",
         ["{python}", "{here}/failopen_torch.py", "profiler-first"], trace="any", max_lines=1,
         compare_stderr=False, needs=("torch",), timeout=90, extra=torch_profiler_works),
    Case("torch_profiler_later", "matrix",
         "another CUPTI client: torch.profiler started after the program used CUDA",
         "torch.profiler still sees every kernel (same stdout as bare); cutrace at most one "
         "line; no trace or a complete one",
         ["{python}", "{here}/failopen_torch.py", "cuda-first"], trace="any", max_lines=1,
         compare_stderr=False, needs=("torch",), timeout=90, extra=torch_profiler_works),
    Case("compute_sanitizer", "matrix", "another CUPTI client: under compute-sanitizer",
         "memcheck's report and the program unchanged; cutrace at most one line; no trace or "
         "a complete one",
         ["{compute_sanitizer}", "--tool", "memcheck", "{bin}/ct_launch_storm", "--n", "200",
          "--warmup", "0"], trace="any", max_lines=1, compare_stderr=False,
         needs=("compute-sanitizer",), timeout=90),
    Case("counters_not_permitted", "matrix",
         "hardware counters not permitted (ERR_NVGPUCTRPERM: CUTRACE_METRICS as user nobody)",
         "one line saying why and how to fix it; the trace complete, without counters",
         ["{bin}/ct_launch_storm", "--n", "200", "--warmup", "0"], app="launch_storm",
         max_lines=1, needs=("counters",), setup=setup_counters, extra=counters_outcome),
    Case("counters_busy", "matrix",
         "hardware counters busy (another process is counting every launch)",
         "one line naming the other profiler; the trace complete, without counters",
         ["{bin}/ct_launch_storm", "--n", "200", "--warmup", "0"], app="launch_storm",
         max_lines=1, needs=("counters",), setup=setup_counters_busy, extra=counters_busy_outcome,
         timeout=90),
    # Load.
    Case("load_default", "load", "1 M launches from 16 threads on 8 streams, default settings",
         "zero drops, every kernel in the trace; memory bounded by the pool",
         ["{bin}/ct_load_storm", "--n", "1000000", "--threads", "16", "--streams", "8"],
         app="load_storm", timeout=180, extra=load_figures),
    Case("load_tiny_pool", "load",
         "the same load with a tiny pool: 2 x 1 MiB buffers, a 4-batch queue, kernels only",
         "drops happen, counted exactly (trace + dropped == launched), reported by info and "
         "summary; at most one line per problem (pool, queue)",
         ["{bin}/ct_load_storm", "--n", "1000000", "--threads", "16", "--streams", "8"],
         app="load_storm", timeout=180, trace="lossy", max_lines=2,
         env={"CUTRACE_BUFFER_COUNT": "2", "CUTRACE_BUFFER_SIZE": "1M",
              "CUTRACE_QUEUE_BATCHES": "4", "CUTRACE_KINDS": "kernel"},
         extra=drops_exact),
]

# Continuous mode with CUPTI detached between windows, as it is by default
# (no CUTRACE_DETACH, no CUTRACE_KINDS: no API records, so it detaches): a
# 10 ms window every 100 ms, so a run of a second or two detaches and
# attaches CUPTI again several times, in the testapps that stress what a
# re-attach must restore (threads, NVTX, module unloads and the launch names
# they switch on, graphs), at a signal and at a fork. DETACH_ASKED_ENV is the
# same asked for in so many words (CUTRACE_DETACH=1 and its kinds).
DETACH_ENV = {"CUTRACE_MODE": "continuous", "CUTRACE_WINDOW": "10ms", "CUTRACE_PERIOD": "100ms"}
DETACH_ASKED_ENV = {**DETACH_ENV, "CUTRACE_DETACH": "1", "CUTRACE_KINDS": DETACH_KINDS}
for _name, _argv, _app, _detaches in (
        ("detach_launch_storm", ["{bin}/ct_launch_storm", "--n", "300000"], "launch_storm", (2,)),
        ("detach_multi_thread", ["{bin}/ct_multi_thread", "--threads", "4", "--kernels", "50000"],
         "multi_thread", (2,)),
        ("detach_nvtx_nested", ["{bin}/ct_nvtx_nested", "--loops", "20000"], "nvtx_nested", (1,)),
        # The driver API but for one cudaFree(nullptr) at the start: one
        # detach at that call's exit, then no runtime call's exit to detach
        # at, so it stays attached from the next window on.
        ("detach_module_reload", ["{bin}/ct_module_reload", "--launches", "40000", "--cycles", "4"],
         "module_reload", (0, 1)),
        # Graphs stop the detaching (it crashed them after a re-attach): the
        # one detach before the first window that saw the graph, no more.
        ("detach_graph_replay", ["{bin}/ct_graph_replay", "--replays", "20000"], "graph_replay", (0, 1)),
        ("detach_sigterm", ["{bin}/ct_signal_self", "--kernels", "200000", "--signal", "TERM"],
         "signal_self", (1,)),
        # Copies beside kernels, contexts destroyed and made again, a fork, a
        # program mostly asleep (first run detached on the H200 2026-12-02).
        ("detach_overlap", ["{bin}/ct_overlap", "--kernels", "40", "--copies", "40"], "overlap", (1,)),
        ("detach_device_reset", ["{bin}/ct_device_reset", "--before", "20000", "--after", "20000",
                                 "--resets", "3"], "device_reset", (1,)),
        ("detach_fork", ["{bin}/ct_fork", "--before", "20000", "--after", "20000", "--child-n", "100000"],
         "fork", (1,)),
        ("detach_idle_gaps", ["{bin}/ct_idle_gaps", "--iterations", "20", "--sleep-ms", "50"], "idle_gaps", (1,))):
    CASES.append(Case(_name, "detach", f"ct_{_app}, continuous mode detaching CUPTI between windows",
                      "program unchanged; every window's chunk complete; CUPTI detached and "
                      "attached again", _argv, app=_app, env=DETACH_ENV, trace="any",
                      extra=windows_detached(*_detaches), timeout=120))
CASES.append(Case("detach_api_records", "detach",
                  "ct_launch_storm, continuous mode with CUTRACE_DETACH=1 and API records on",
                  "program unchanged; CUPTI stays attached (detaching with API records corrupted "
                  "the heap), and one line says so", ["{bin}/ct_launch_storm", "--n", "300000"],
                  app="launch_storm", env={**DETACH_ASKED_ENV, "CUTRACE_KINDS": "default"}, trace="any",
                  max_lines=1, extra=windows_detached(0, 0), timeout=120))
CASES.append(Case("detach_api_records_default", "detach",
                  "ct_launch_storm, continuous mode with API records asked for (CUTRACE_KINDS=default), "
                  "CUTRACE_DETACH unset",
                  "program unchanged; CUPTI stays attached, silently (a line at CUTRACE_LOG=info only)",
                  ["{bin}/ct_launch_storm", "--n", "300000"], app="launch_storm",
                  env={**DETACH_ENV, "CUTRACE_KINDS": "default"}, trace="any", max_lines=0,
                  extra=windows_detached(0, 0), timeout=120))
CASES.append(Case("detach_asked", "detach",
                  "ct_launch_storm, continuous mode with CUTRACE_DETACH=1 and its kinds asked for",
                  "program unchanged; every window's chunk complete; CUPTI detached and attached again",
                  ["{bin}/ct_launch_storm", "--n", "300000"], app="launch_storm", env=DETACH_ASKED_ENV,
                  trace="any", extra=windows_detached(2), timeout=120))
CASES.append(Case("detach_asan_launch_storm", "detach",
                  "ct_launch_storm, continuous mode detaching, under the ASan+UBSan library",
                  "no sanitizer report; program unchanged; CUPTI detached and attached again",
                  ["{bin}/ct_launch_storm", "--n", "100000"], app="launch_storm", env=DETACH_ENV,
                  trace="any", needs=("asan",), asan=True, extra=windows_detached(2), timeout=180))
CASES.append(Case("detach_torch_profiler_later", "detach",
                  "continuous mode with CUTRACE_DETACH=1 beside torch.profiler, started after CUDA",
                  "torch.profiler still sees every kernel; CUPTI never detached (the program has a "
                  "client of its own)", ["{python}", "{here}/failopen_torch.py", "cuda-first"],
                  env=DETACH_ASKED_ENV, trace="any", max_lines=1, compare_stderr=False, needs=("torch",),
                  timeout=90, extra=lambda *a: torch_profiler_works(*a) + windows_detached(0, 0)(*a)))

# The testapps under the library built with ASan+UBSan.
for _name, _argv, _app in (
        ("asan_launch_storm", ["{bin}/ct_launch_storm", "--n", "20000"], "launch_storm"),
        ("asan_nvtx_nested", ["{bin}/ct_nvtx_nested"], "nvtx_nested"),
        ("asan_multi_thread", ["{bin}/ct_multi_thread"], "multi_thread"),
        ("asan_fork", ["{bin}/ct_fork"], "fork"),
        ("asan_sigterm", ["{bin}/ct_signal_self", "--signal", "TERM"], "signal_self")):
    CASES.append(Case(_name, "asan", f"ct_{_app} under the ASan+UBSan library",
                      "no sanitizer report; program unchanged; the trace complete", _argv,
                      app=_app, needs=("asan",), asan=True, timeout=180))

BY_NAME = {c.name: c for c in CASES}


# ---------------------------------------------------------------------------

def expand(text: str, args, ctx: Ctx | None = None) -> str:
    bin_dir = (ctx.bin_dir if ctx else None) or args.bin_dir
    lib = (ctx.lib if ctx else None) or args.lib
    return (text.replace("{bin}", bin_dir).replace("{python}", sys.executable)
            .replace("{here}", str(HERE)).replace("{lib}", lib)
            .replace("{compute_sanitizer}", _compute_sanitizer() or "compute-sanitizer"))


def cutrace_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("cutrace:")]


def own_stderr(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if not line.startswith("cutrace:")]


def traced_env(case: Case, ctx: Ctx) -> dict[str, str]:
    env = clean_env()
    env.update({k: expand(v, ctx.args) for k, v in case.both_env.items()})
    if case.asan:
        d = Path(ctx.args.asan_dir)
        env["LD_PRELOAD"] = f"{d / 'libasan.so.8'}:{d / 'libcutrace_injection.so'}"
        env["LD_LIBRARY_PATH"] = f"{d}:{env.get('LD_LIBRARY_PATH', '')}".rstrip(":")
        env["ASAN_OPTIONS"] = ASAN_OPTIONS
        env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    else:
        env["LD_PRELOAD"] = ctx.lib or ctx.args.lib
    env["CUTRACE_OUTPUT"] = str(ctx.out_dir) + "/"
    env.update({k: expand(v, ctx.args, ctx) for k, v in case.env.items()})
    env.update(ctx.env)
    return env


def check_traces(case: Case, ctx: Ctx, res: Result, truth: dict, rep_checks: list) -> list:
    """The trace expectation. Returns [(path, info)] of the traces read."""
    files = sorted(ctx.out_dir.glob("*.trace*")) if ctx.out_dir.is_dir() else []
    files = [f for f in files if not f.is_symlink()]
    add = rep_checks.append
    if case.trace == "none":
        add(cc.Check("no trace", not files, f"found {[f.name for f in files]}" if files
                     else f"none in {ctx.out_dir}"))
        return []
    read = []
    for f in files:
        info, err = _info(ctx, f)
        if info is None:
            add(cc.Check(f"readable {f.name}", False, err))
            continue
        read.append((f, info))
        warnings = cc.info_file(info).get("warnings") or []
        if warnings:  # reported, not judged: e.g. buffers another CUPTI client kept
            add(cc.Check(f"warnings in {f.name}", True, " | ".join(map(str, warnings))[:400]))
    if case.trace == "any":
        for f, info in read:
            for c in cc.check_info(info, f.name):
                add(c)
        if not files:
            add(cc.Check("no trace or a complete one", True, "no trace (stepped aside)"))
        return read
    by_pid = {cc.trace_pid(info): (f, info) for f, info in read}
    pid = truth.get("pid")
    main = by_pid.pop(pid, None) if pid is not None else (read[0] if len(read) == 1 else None)
    if main is None:
        add(cc.Check("trace written", False, f"no trace for pid {pid} among "
                     f"{[f.name for f in files]}; stderr {res.stderr.strip()[-200:]!r}"))
        return read
    f, info = main
    fi = cc.info_file(info)
    if case.trace == "complete":
        for c in cc.check_info(info):
            add(c)
        kernels = cutrace_json(ctx.args.cutrace, "kernels", f)
        for c in cc.check_kernels(truth.get("kernels", {}), kernels, info):
            add(c)
    elif case.trace == "lossy":
        add(cc.Check("clean shutdown", fi.get("clean_shutdown") is True and not fi.get("truncated"),
                     f"clean_shutdown={fi.get('clean_shutdown')} truncated={fi.get('truncated')}"))
    elif case.trace == "cut_short":
        launched = sum(truth.get("kernels", {}).values())
        events = cc.info_events(info).get("kernels", 0)
        clean = fi.get("clean_shutdown")
        add(cc.Check("read back, cut short", clean is False and events <= launched,
                     f"cutrace info: clean_shutdown={clean} truncated={fi.get('truncated')} "
                     f"lost_bytes={fi.get('lost_bytes')} packets={fi.get('packets')} "
                     f"kernels={events} of {launched or '?'} launched",
                     {"kernels": events, "launched": launched, "packets": fi.get("packets"),
                      "truncated": fi.get("truncated")}))
        summary = run([ctx.args.cutrace, "summary", str(f)], clean_env(), 120)
        said = re.search(r"no end-of-trace marker|file truncated", summary.stdout + summary.stderr)
        add(cc.Check("summary says it was cut short", summary.status == 0 and said is not None,
                     f"exit {summary.status}; " + (said.group(0) if said else "no such warning")))
    for child in truth.get("children", []):
        got = by_pid.pop(int(child["pid"]), None)
        kr = cutrace_json(ctx.args.cutrace, "kernels", got[0]) if got else None
        for c in cc.check_child_trace(child, got[1] if got else None, kr):
            add(c)
    if by_pid:
        add(cc.Check("no unexpected traces", False,
                     ", ".join(f"{t.name} (pid {p})" for p, (t, _) in by_pid.items())))
    return read


def run_case(case: Case, args) -> dict:
    checks: list[cc.Check] = []
    work = Path(args.work) / case.name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    out_dir = work / "traces"
    out_dir.mkdir(mode=0o700)
    ctx = Ctx(args, work, out_dir)
    verdict, note = "PASS", ""
    try:
        if case.needs_gpu and not has_gpu():
            raise Skip("no GPU")
        for tool in case.needs:
            if tool == "asan" and not (args.asan_dir and
                                       (Path(args.asan_dir) / "libcutrace_injection.so").exists()):
                raise Skip(f"no ASan build of the library ({args.asan_dir or 'pass --asan-dir'})")
            if tool not in ("asan", "fake_cupti", "counters"):
                _need_tool(tool)
        if case.setup:
            case.setup(ctx)
        argv = [expand(a, args, ctx) for a in case.argv]
        bare_argv, traced_argv = list(argv), list(argv)
        truth_dir = ctx.truth_dir or work
        truth_path = truth_dir / "truth.json"
        if case.app:
            bare_argv[1:1] = ["--truth", str(truth_dir / "bare-truth.json")]
            traced_argv[1:1] = ["--truth", str(truth_path)]
        bare_argv, traced_argv = ctx.prefix + bare_argv, ctx.prefix + traced_argv
        bare_env = clean_env()
        bare_env.update({k: expand(v, args) for k, v in case.both_env.items()})
        if "CUDA_VISIBLE_DEVICES" in ctx.env:
            bare_env["CUDA_VISIBLE_DEVICES"] = ctx.env["CUDA_VISIBLE_DEVICES"]
        bare = run(bare_argv, bare_env, case.timeout, cwd=str(work))
        traced = run(traced_argv, traced_env(case, ctx), case.timeout, cwd=str(work))
        for name, r in (("bare", bare), ("traced", traced)):
            (work / f"{name}-stdout.txt").write_text(r.stdout)
            (work / f"{name}-stderr.txt").write_text(r.stderr)
        if bare.timed_out:
            checks.append(cc.Check("bare run finished", False, f"timed out after {case.timeout} s"))
            raise StopIteration
        checks.append(cc.Check("finished", not traced.timed_out,
                               f"{traced.wall_s:.1f} s (bare {bare.wall_s:.1f} s), "
                               f"timeout {case.timeout} s"))
        if traced.timed_out:
            raise StopIteration
        checks.append(cc.Check("exit status", traced.status == bare.status,
                               f"{traced.status} (bare {bare.status})"))
        checks.append(cc.Check("stdout", traced.stdout == bare.stdout,
                               f"{len(traced.stdout)} bytes, same as bare" if
                               traced.stdout == bare.stdout else
                               f"traced {traced.stdout[-200:]!r} vs bare {bare.stdout[-200:]!r}"))
        lines = cutrace_lines(traced.stderr)
        missing = [p for p in case.lines if not any(re.search(p, l) for l in lines)]
        ok_lines = len(lines) <= case.max_lines and not missing
        checks.append(cc.Check(
            f"cutrace lines (<= {case.max_lines})", ok_lines,
            f"{len(lines)}: {lines[:6]}" + (f"; no line matches {missing}" if missing else ""),
            {"lines": lines}))
        if case.compare_stderr:
            same = own_stderr(traced.stderr) == own_stderr(bare.stderr)
            checks.append(cc.Check("program's stderr", same, "same as bare" if same else
                                   f"traced {own_stderr(traced.stderr)[-4:]} vs bare "
                                   f"{own_stderr(bare.stderr)[-4:]}"))
        sanitizer = [l for l in traced.stderr.splitlines()
                     if "AddressSanitizer" in l or "runtime error:" in l or "LeakSanitizer" in l]
        if case.asan or sanitizer:
            checks.append(cc.Check("no sanitizer report", not sanitizer,
                                   "none" if not sanitizer else " | ".join(sanitizer[:3])))
        truth: dict = {}
        if case.app:
            try:
                truth = json.loads(truth_path.read_text())
            except (OSError, json.JSONDecodeError) as e:
                checks.append(cc.Check("truth", False, f"no truth from the app: {e}"))
        traces = check_traces(case, ctx, traced, truth, checks)
        if case.extra and (truth or not case.app):
            checks.extend(case.extra(ctx, traced, truth, traces))
    except Skip as e:
        verdict, note = "SKIP", str(e)
    except StopIteration:
        pass
    except Exception as e:  # a broken case is a failure, with the reason
        checks.append(cc.Check("case ran", False, f"{type(e).__name__}: {e}"))
    finally:
        for fn in reversed(ctx.cleanup):
            try:
                fn()
            except AssertionError as e:
                checks.append(cc.Check("cleanup check", False, str(e)))
            except Exception:
                pass
    if verdict != "SKIP" and any(c.ok is False for c in checks):
        verdict = "FAIL"
    for c in checks:
        print(f"{c.verdict:4}  [{case.name}] {c.name}: {c.detail}", flush=True)
    print(f"{verdict:4}  {case.name}" + (f": skipped: {note}" if note else ""), flush=True)
    return {"case": case.name, "group": case.group, "fault": case.fault, "expect": case.expect,
            "verdict": verdict, "note": note,
            "checks": [{"name": c.name, "verdict": c.verdict, "detail": c.detail,
                        "figures": c.figures} for c in checks]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--group", default="all", choices=("matrix", "load", "asan", "detach", "all"))
    p.add_argument("--case", action="append", choices=sorted(BY_NAME), help="run only these")
    p.add_argument("--list", action="store_true", help="print the matrix and exit")
    p.add_argument("--names", action="store_true")
    p.add_argument("--apps", action="store_true", help="the testapps the cases run")
    p.add_argument("--cutrace", default=str(HERE.parents[1] / "build" / "bin" / "cutrace"))
    p.add_argument("--bin-dir", default=None, help="where ct_* are (default: next to --cutrace)")
    p.add_argument("--lib", default=None, help="libcutrace_injection.so (default ../lib)")
    p.add_argument("--asan-dir", default=None,
                   help="folder with the ASan libcutrace_injection.so and libasan.so.8")
    p.add_argument("--fake-cupti", default=None, help="the stand-in libcupti of another version")
    p.add_argument("--work", default=None, help="scratch dir (default: a new one in /tmp)")
    p.add_argument("--json-out", default=None)
    args = p.parse_args()
    selected = [BY_NAME[n] for n in args.case] if args.case else \
        [c for c in CASES if args.group in ("all", c.group)]
    if args.list:
        for c in selected:
            print(f"{c.name:24} {c.group:6} {c.fault}\n{'':31} -> {c.expect}")
        return 0
    if args.names:
        print(";".join(c.name for c in selected))
        return 0
    if args.apps:
        apps = set()
        for c in CASES:
            apps |= {Path(a).name[3:] for a in c.argv if a.startswith("{bin}/ct_")}
        print("\n".join(sorted(apps)))
        return 0
    cutrace = Path(args.cutrace).resolve()
    args.cutrace = str(cutrace)
    args.bin_dir = str(Path(args.bin_dir).resolve()) if args.bin_dir else str(cutrace.parent)
    args.lib = str(Path(args.lib or cutrace.parent.parent / "lib" /
                        "libcutrace_injection.so").resolve())
    args.work = args.work or tempfile.mkdtemp(prefix="cutrace-failopen-")
    install_stop_handlers()
    results = []
    for c in selected:
        results.append(run_case(c, args))
        if args.json_out:  # after each case, so a step cut short by its timeout still reports
            Path(args.json_out).write_text(json.dumps({"group": args.group, "cases": results},
                                                      indent=1))
    counts: dict[str, int] = {}
    for r in results:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    print("\nmatrix:")
    for r in results:
        print(f"  {r['verdict']:4}  {r['case']:24} {r['fault']}"
              + (f" ({r['note']})" if r["note"] else ""))
    print(f"{'FAIL' if counts.get('FAIL') else 'PASS'} failopen {args.group}: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), flush=True)
    if counts.get("FAIL"):
        return 1
    return SKIP if counts.get("SKIP") == len(results) else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
