#!/usr/bin/env python3
"""failopen.py's own test, without a GPU: its cases run against stand-in testapps.

  failopen_selftest.py --cutrace BIN --lib SO --fake-cupti SO --lifecycle-app BIN [--work DIR]

Each stand-in `ct_<app>` is a small shell script: it writes a truth file (its
pid, the 8 kernels the stand-in libcupti "launches") and execs
injection_lifecycle_app, which loads the real libcutrace_injection.so the way
the CUDA driver does, against the stand-in libcupti, and ends the way the case
needs (return, exit from a thread, SIGTERM, SIGKILL, abort, a fault). Run bare (no
injection), it prints the same line and ends the same way. So the matrix's
machinery (bare vs traced, line counting, trace expectations) and the
library's fail-open paths are exercised end to end on every CI run.
Exit 0 when every selected case passes. python3 stdlib only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Cases that need no real GPU behaviour beyond what the stand-ins provide. The
# root-only ones (read-only tmpfs, another user's directory) skip without root.
CASES = ["cupti_missing", "output_missing", "output_readonly", "output_not_owned",
         "output_world_writable", "output_symlink", "bad_output_pattern", "bad_values",
         "exit_thread", "sigint", "sigterm", "sigkill", "abort", "abort_flight_recorder",
         "segv_flight_recorder"]

WRAPPER = r"""#!/bin/bash
# Stand-in for ct_{app} (failopen_selftest.py).
truth=""; mode={mode}; args=("$@")
for ((i = 0; i < $#; i++)); do
  case ${{args[$i]}} in
    --truth) truth=${{args[$((i + 1))]}} ;;
    TERM|INT) mode=sigterm ;;
    kill) mode=kill ;;
    abort) mode=abort ;;
    segv) mode=segv ;;
  esac
done
if [[ -n $truth ]]; then
  printf '{{"app": "{app}", "pid": %d, "kernels": {{"kernel()": 5, "other()": 3}}}}\n' $$ > "$truth"
fi
if [[ -z ${{CUDA_INJECTION64_PATH:-}} ]]; then  # bare: what the stand-in program prints and does
  echo "app output $mode"
  case $mode in
    sigterm) kill -TERM $$; sleep 5 ;;
    kill) kill -KILL $$ ;;
    abort) kill -ABRT $$; sleep 5 ;;
    segv) kill -SEGV $$; sleep 5 ;;
    exit-thread) exit 7 ;;
  esac
  exit 0
fi
export CUTRACE_CUPTI_PATH=${{CUTRACE_CUPTI_PATH:-{fake}}}
exec {app_bin} $mode
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cutrace", required=True)
    p.add_argument("--lib", required=True)
    p.add_argument("--fake-cupti", required=True, help="libcutrace_fake_cupti.so")
    p.add_argument("--lifecycle-app", required=True, help="injection_lifecycle_app")
    p.add_argument("--work", default=None)
    args = p.parse_args()
    for name in ("cutrace", "lib", "fake_cupti", "lifecycle_app"):
        setattr(args, name, str(Path(getattr(args, name)).resolve()))
    work = Path(args.work or tempfile.mkdtemp(prefix="cutrace-failopen-selftest-"))
    bin_dir = work / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for app, mode in (("launch_storm", "return"), ("signal_self", "sigterm"), ("die", "kill"),
                      ("exit_thread", "exit-thread")):
        script = bin_dir / f"ct_{app}"
        script.write_text(WRAPPER.format(app=app, mode=mode, fake=args.fake_cupti,
                                         app_bin=args.lifecycle_app))
        script.chmod(0o755)
    env = dict(os.environ, CUTRACE_VALIDATE_ASSUME_GPU="1")
    cmd = [sys.executable, str(HERE / "failopen.py"), "--cutrace", args.cutrace,
           "--bin-dir", str(bin_dir), "--lib", args.lib, "--work", str(work / "cases")]
    for c in CASES:
        cmd += ["--case", c]
    r = subprocess.run(cmd, env=env, timeout=600)
    return 1 if r.returncode == 1 else 0


if __name__ == "__main__":
    sys.exit(main())
