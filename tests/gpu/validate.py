#!/usr/bin/env python3
"""Execute one testapp under cutrace and validate its trace against the app's truth.

  validate.py --case NAME [--cutrace BIN] [--bin-dir DIR] [--lib SO] [--work DIR]
              [--modes run,preload] [--timeout S] [--json-out FILE]
  validate.py --list                      the cases (--names: just their names)
  validate.py --check-kernel-names DIR    no GPU: truth kernel names vs the binaries' symbols

For one case it runs the app bare once (stdout and exit status recorded), then
under `cutrace run --output DIR -- ct_app --truth T.json ...` (and, for the cases
that ask for it, with LD_PRELOAD=libcutrace_injection.so instead), and checks the
trace through the `cutrace` reports against the truth (tests/gpu/cutrace_checks.py
states the tolerances). Every run has a timeout. One line per check, PASS/FAIL/SKIP
with its figures; exit 0 when all pass, 1 on any failure, 77 when skipped (no GPU,
or multi_gpu on one GPU). python3 stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cutrace_checks as cc  # noqa: E402

SKIP = 77
HERE = Path(__file__).resolve().parent


@dataclass
class Case:
    app: str
    args: list[str] = field(default_factory=list)
    expect_exit: int = 0
    modes: tuple[str, ...] = ("run",)
    timeout: int = 120
    gaps: bool = False  # ask for the gaps report (its list can be long)


CASES: dict[str, Case] = {
    "launch_storm": Case("launch_storm", ["--n", "100000"], modes=("run", "preload")),
    "overlap": Case("overlap"),
    "pageable_copy": Case("pageable_copy"),
    "memset": Case("memset"),
    "nvtx_nested": Case("nvtx_nested", modes=("run", "preload")),
    "graph_replay": Case("graph_replay"),
    "multi_thread": Case("multi_thread"),
    "idle_gaps": Case("idle_gaps", gaps=True),
    "fork": Case("fork"),
    "multi_gpu": Case("multi_gpu"),
    "exit_thread": Case("exit_thread", ["--status", "3"], expect_exit=3),
    "signal_term": Case("signal_self", ["--signal", "TERM"], expect_exit=128 + signal.SIGTERM),
    "signal_int": Case("signal_self", ["--signal", "INT"], expect_exit=128 + signal.SIGINT),
    "demo": Case("demo", gaps=True),
}

TOOL_ENV = ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "LD_PRELOAD")
# The kinds continuous mode records by default and detaches CUPTI with: no
# API records (injection/modes.cc ApplyModeDefaults, session/detach.cc DecideDetach).
DETACH_KINDS = "kernel,memcpy,memset,nvtx,overhead"


def has_gpu() -> bool:
    # Only validate_selftest.py sets this: it runs the validator against fake tools.
    if os.environ.get("CUTRACE_VALIDATE_ASSUME_GPU") == "1":
        return True
    if not os.path.exists("/dev/nvidia0"):
        return False
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def clean_env() -> dict[str, str]:
    """The environment without any tracer settings inherited from outside."""
    return {k: v for k, v in os.environ.items()
            if k not in TOOL_ENV and not k.startswith("CUTRACE_")}


@dataclass
class Result:
    status: int  # as a shell reports it: 128 + N for death by signal N; -1 on timeout
    stdout: str
    stderr: str
    timed_out: bool
    wall_s: float


_running: subprocess.Popen | None = None


def _stop(signum, _frame) -> None:
    """SIGTERM/SIGINT to the validator (e.g. from `timeout`): take the running tree down too."""
    if _running is not None:
        try:
            os.killpg(_running.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    print(f"FAIL  validator stopped by signal {signum}", flush=True)
    sys.exit(124)


def install_stop_handlers() -> None:
    """A signal ignored by whoever started us would be inherited by the apps
    (signal_int would then never die of SIGINT). A handler is not inherited
    across exec, so this gives the apps the defaults, and lets a `timeout`
    around the validator take the program under test down with it."""
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)


def run(cmd: list[str], env: dict[str, str], timeout: float, cwd: str | None = None) -> Result:
    """Runs cmd in its own session so a timeout kills the whole tree."""
    global _running
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    _running = proc
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        timed_out = True
    _running = None
    rc = proc.returncode
    status = -1 if timed_out else (128 - rc if rc < 0 else rc)
    return Result(status, out.decode(errors="replace"), err.decode(errors="replace"), timed_out,
                  time.monotonic() - t0)


class Reporter:
    def __init__(self) -> None:
        self.checks: list[dict] = []
        self.failed = 0

    def add(self, mode: str, check: cc.Check) -> None:
        line = f"{check.verdict:4}  [{mode}] {check.name}: {check.detail}"
        print(line, flush=True)
        if check.ok is False:
            self.failed += 1
        self.checks.append({"mode": mode, "name": check.name, "verdict": check.verdict,
                            "detail": check.detail, "figures": check.figures})

    def fail(self, mode: str, name: str, detail: str) -> None:
        self.add(mode, cc.Check(name, False, detail))


def cutrace_json(cutrace: str, report: str, trace: Path, extra: list[str] | None = None,
                 timeout: float = 120) -> dict:
    r = run([cutrace, report, str(trace), "--format", "json", *(extra or [])], clean_env(), timeout)
    if r.status != 0:
        raise RuntimeError(f"cutrace {report} exited {r.status}: {r.stderr.strip()[-300:]}")
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError as e:
        raise RuntimeError(f"cutrace {report} printed invalid JSON ({e}): {r.stdout[:200]!r}")


def export_csv(cutrace: str, trace: Path, work: Path) -> str | None:
    # `cutrace export --format csv -o DIR` writes one CSV per event kind into DIR.
    out = work / (trace.stem + "-csv")
    r = run([cutrace, "export", str(trace), "--format", "csv", "-o", str(out)], clean_env(), 120)
    kernels = out / "kernels.csv"
    if r.status != 0 or not kernels.is_file():
        return None
    return kernels.read_text(errors="replace")


def collect_reports(cutrace: str, trace: Path, truth: dict, case: Case, work: Path) -> dict:
    reports = {name: cutrace_json(cutrace, name, trace)
               for name in ("info", "kernels", "memcpy", "nvtx", "overlap")}
    if case.gaps or "gaps" in truth:
        reports["gaps"] = cutrace_json(cutrace, "gaps", trace)
    if "graph" in truth:
        reports["export_csv"] = export_csv(cutrace, trace, work)
    return reports


def traced_command(mode: str, args, case: Case, app: str, truth_path: Path,
                   out_dir: Path) -> tuple[list[str], dict[str, str]]:
    env = clean_env()
    app_cmd = [app, "--truth", str(truth_path), *case.args]
    if mode == "run":
        return [args.cutrace, "run", "--output", str(out_dir), "--", *app_cmd], env
    env["LD_PRELOAD"] = args.lib
    env["CUTRACE_OUTPUT"] = str(out_dir)
    return app_cmd, env


def validate_mode(mode: str, args, case: Case, app: str, bare: Result, rep: Reporter,
                  work: Path, figures: dict) -> bool:
    """One traced run and every check on it. Returns whether the truth said to skip."""
    mode_dir = work / mode
    shutil.rmtree(mode_dir, ignore_errors=True)
    out_dir = mode_dir / "traces"
    out_dir.mkdir(parents=True)
    truth_path = mode_dir / "truth.json"
    cmd, env = traced_command(mode, args, case, app, truth_path, out_dir)
    r = run(cmd, env, args.timeout or case.timeout)
    (mode_dir / "stdout.txt").write_text(r.stdout)
    (mode_dir / "stderr.txt").write_text(r.stderr)
    fig = figures.setdefault(mode, {})
    fig["wall_s"] = round(r.wall_s, 3)
    if r.timed_out:
        rep.fail(mode, "finished", f"timed out after {args.timeout or case.timeout} s; "
                 f"stderr tail: {r.stderr.strip()[-300:]!r}")
        return False
    rep.add(mode, cc.Check("exit status", r.status == case.expect_exit and r.status == bare.status,
                           f"{r.status} (bare {bare.status}, expected {case.expect_exit})"))
    # Exact: a tracer must leave the program's stdout alone (`cutrace run -- app | jq`).
    if r.stdout == bare.stdout:
        detail = f"{len(r.stdout)} bytes, same as the bare run"
    elif r.stdout.startswith(bare.stdout):
        detail = (f"{len(r.stdout) - len(bare.stdout)} extra bytes after the program's output: "
                  f"{r.stdout[len(bare.stdout):][:200]!r}")
    else:
        detail = f"traced {r.stdout[:200]!r} vs bare {bare.stdout[:200]!r}"
    rep.add(mode, cc.Check("stdout", r.stdout == bare.stdout, detail))
    try:
        truth = json.loads(truth_path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        rep.fail(mode, "truth", f"no truth from the app: {e}; stderr {r.stderr.strip()[-300:]!r}")
        return False

    traces = sorted(out_dir.glob("*.trace"))
    fig["traces"] = [p.name for p in traces]
    by_pid: dict[int, tuple[Path, dict]] = {}
    for t in traces:
        try:
            info = cutrace_json(args.cutrace, "info", t)
        except RuntimeError as e:
            rep.fail(mode, f"info {t.name}", str(e))
            continue
        pid = cc.trace_pid(info)
        if pid is None:
            rep.fail(mode, f"info {t.name}", "no pid in the header")
            continue
        if pid in by_pid:  # e.g. a forked child writing under its parent's cached pid
            rep.fail(mode, "one trace per pid", f"{by_pid[pid][0].name} and {t.name} both "
                     f"have pid {pid} in their header")
            continue
        by_pid[pid] = (t, info)

    main = by_pid.pop(int(truth["pid"]), None)
    if main is None:
        rep.fail(mode, "trace written", f"no trace for pid {truth['pid']} in {out_dir} "
                 f"(found {[p.name for p in traces]}); stderr tail {r.stderr.strip()[-300:]!r}")
        return False
    trace, info = main
    size = trace.stat().st_size
    kernels_total = sum(truth.get("kernels", {}).values())
    fig["trace_bytes"] = size
    if kernels_total:
        fig["trace_bytes_per_kernel"] = round(size / kernels_total, 2)
    rep.add(mode, cc.Check("trace written", True, f"{trace.name}, {size} bytes" +
                           (f", {size / kernels_total:.1f} B/kernel" if kernels_total else "")))
    for c in cc.check_info(info):
        rep.add(mode, c)
    try:
        reports = collect_reports(args.cutrace, trace, truth, case, mode_dir)
    except RuntimeError as e:
        rep.fail(mode, "reports", str(e))
        return False
    for c in cc.check_truth(truth, reports):
        rep.add(mode, c)
        if c.figures:
            fig[c.name] = c.figures

    for child in truth.get("children", []):
        got = by_pid.pop(int(child["pid"]), None)
        kernels = None
        if got is not None:
            try:
                kernels = cutrace_json(args.cutrace, "kernels", got[0])
            except RuntimeError as e:
                rep.fail(mode, f"child {child['pid']} kernels", str(e))
                continue
        for c in cc.check_child_trace(child, got[1] if got else None, kernels):
            rep.add(mode, c)
    if by_pid:
        rep.fail(mode, "unexpected traces",
                 ", ".join(f"{t.name} (pid {pid})" for pid, (t, _) in sorted(by_pid.items())))
    if "launch" in truth:
        fig["us_per_launch"] = truth["launch"].get("us_per_launch")
    return bool(truth.get("skipped"))


def validate_case(args) -> int:
    case = CASES[args.case]
    if not has_gpu():
        print("skipped: no GPU")
        return SKIP
    install_stop_handlers()

    rep = Reporter()
    app = str(Path(args.bin_dir) / f"ct_{case.app}")
    needed = [app, args.cutrace]  # cutrace reads the traces in every mode
    if "preload" in args.modes:
        needed.append(args.lib)
    missing = [p for p in needed if not os.path.exists(p)]
    work = Path(args.work or f"/tmp/cutrace-validate/{args.case}")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    figures: dict = {}
    skipped = False
    if missing:
        rep.fail("setup", "binaries", f"missing: {missing}")
    else:
        bare_truth = work / "bare-truth.json"
        bare = run([app, "--truth", str(bare_truth), *case.args], clean_env(),
                   args.timeout or case.timeout)
        (work / "bare-stdout.txt").write_text(bare.stdout)
        (work / "bare-stderr.txt").write_text(bare.stderr)
        figures["bare"] = {"wall_s": round(bare.wall_s, 3), "status": bare.status}
        if bare.timed_out or bare.status != case.expect_exit:
            rep.fail("bare", "bare run", f"status {bare.status} (expected {case.expect_exit}), "
                     f"timed out {bare.timed_out}; stderr {bare.stderr.strip()[-300:]!r}")
        else:
            rep.add("bare", cc.Check("bare run", True, f"status {bare.status}, "
                                     f"{bare.wall_s:.2f} s"))
            for mode in args.modes:
                skipped = validate_mode(mode, args, case, app, bare, rep, work, figures) or skipped

    verdict = "FAIL" if rep.failed else ("SKIP" if skipped else "PASS")
    summary = f"{verdict} {args.case}: {len(rep.checks)} checks, {rep.failed} failed"
    if skipped and not rep.failed:
        summary += " (skipped: one GPU)"
    print(summary, flush=True)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(
            {"case": args.case, "app": case.app, "verdict": verdict, "modes": list(args.modes),
             "figures": figures, "checks": rep.checks}, indent=1))
    if rep.failed:
        return 1
    return SKIP if skipped else 0


def check_kernel_names(bin_dir: str) -> int:
    """Without a GPU: each app's truth kernel names (--list-kernels) must be demangled
    symbols of its own binary, spelled the way c++filt prints them."""
    import failopen  # its testapps too (imported here: failopen imports this module)
    apps = sorted({c.app for c in CASES.values()} |
                  {c.app for c in failopen.CASES if c.app is not None})
    failed = 0
    for app in apps:
        exe = Path(bin_dir) / f"ct_{app}"
        if not exe.exists():
            print(f"FAIL  {app}: {exe} not built")
            failed += 1
            continue
        names = run([str(exe), "--list-kernels"], clean_env(), 30).stdout.splitlines()
        symbols = run(["nm", "-C", str(exe)], clean_env(), 60).stdout
        defined = {line.split(" ", 2)[2] for line in symbols.splitlines()
                   if len(line.split(" ", 2)) == 3}
        missing = [n for n in names if n not in defined]
        print(f"{'FAIL' if missing else 'PASS'}  {app}: {len(names)} kernel names"
              + (f"; not among the binary's symbols: {missing}" if missing else ""))
        failed += bool(missing)
    return 1 if failed else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", choices=sorted(CASES))
    p.add_argument("--list", action="store_true", help="print the cases and exit")
    p.add_argument("--names", action="store_true", help="print the case names (for CMake)")
    p.add_argument("--apps", action="store_true", help="print the testapps the cases run")
    p.add_argument("--check-kernel-names", metavar="BIN_DIR")
    p.add_argument("--cutrace", default=str(HERE.parents[1] / "build" / "bin" / "cutrace"))
    p.add_argument("--bin-dir", default=None, help="where ct_* are (default: next to --cutrace)")
    p.add_argument("--lib", default=None,
                   help="libcutrace_injection.so (default: ../lib next to --cutrace)")
    p.add_argument("--work", default=None, help="scratch dir (default /tmp/cutrace-validate/CASE)")
    p.add_argument("--modes", default=None,
                   help="comma list of run,preload (default: the case's own)")
    p.add_argument("--timeout", type=int, default=0, help="seconds per run (default: the case's)")
    p.add_argument("--json-out", default=None, help="write verdict, figures and checks as JSON")
    args = p.parse_args()
    if args.list:
        for name, c in CASES.items():
            print(f"{name:14} ct_{c.app} {' '.join(c.args)}  exit {c.expect_exit}  "
                  f"modes {','.join(c.modes)}")
        return 0
    if args.names:
        print(";".join(CASES))
        return 0
    if args.apps:
        print("\n".join(sorted({c.app for c in CASES.values()})))
        return 0
    if args.check_kernel_names:
        return check_kernel_names(args.check_kernel_names)
    if not args.case:
        p.error("--case is required")
    cutrace = Path(args.cutrace).resolve()
    args.cutrace = str(cutrace)
    args.bin_dir = str(Path(args.bin_dir).resolve()) if args.bin_dir else str(cutrace.parent)
    args.lib = args.lib or str(cutrace.parent.parent / "lib" / "libcutrace_injection.so")
    args.modes = tuple(args.modes.split(",")) if args.modes else CASES[args.case].modes
    if any(m not in ("run", "preload") for m in args.modes):
        p.error("--modes takes run and/or preload")
    return validate_case(args)


if __name__ == "__main__":
    sys.exit(main())
