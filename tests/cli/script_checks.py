"""What the script tests of tests/cli (and tests/gpu/idle_causes.py) share.

- expect() adds a failure to one list per process; finish() prints them and
  the verdict line and gives the exit status, so every script reports the
  same way.
- run_cutrace(), run_text() and expect_exit(): `cutrace ARGS` with its output captured,
  and the checks every error path must pass (the exit status, no crash, and
  for exit 1 one line on stderr that starts with "cutrace: ").
- union(), length(), intersection(): interval arithmetic on [start, end)
  pairs, for recomputing a report's figures from the test's own data with no
  cutrace code.
"""

from __future__ import annotations

import subprocess

failures: list[str] = []


def expect(label: str, ok: bool, detail: str = "") -> bool:
    """Records a failure when `ok` is false; returns `ok`."""
    if not ok:
        failures.append(f"{label}: {detail}")
    return ok


def finish(what: str) -> int:
    """Prints each failure and a last line naming `what`; 1 on a failure, else 0."""
    for f in failures:
        print("FAIL:", f)
    print(f"{'FAILED' if failures else 'ok'}: {what}: {len(failures)} failures")
    return 1 if failures else 0


def run_cutrace(cutrace: str, args: list[str], timeout: float = 30, **kw):
    """`cutrace ARGS` (keyword arguments go to subprocess.run): (status, stdout
    bytes, stderr text), or None when it did not exit within `timeout` s."""
    try:
        p = subprocess.run([cutrace] + args, capture_output=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return None
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def run_text(cutrace: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`cutrace ARGS` with text output; with `check`, a non-zero exit ends the
    script (the steps after it would only fail for the same reason)."""
    p = subprocess.run([cutrace, *args], capture_output=True, text=True, timeout=60)
    if check and p.returncode != 0:
        raise SystemExit(f"FAIL: cutrace {' '.join(args)} exited {p.returncode}: {p.stderr!r}")
    return p


def expect_exit(label: str, args: list[str], result, want_rc: int,
                stderr_lines: int | None = None, err_has: str | None = None) -> bool:
    """Checks run_cutrace(..., args)'s `result`: it exited, did not crash,
    with `want_rc`; `stderr_lines` lines on stderr (None: any number); for
    exit 1, stderr starts with "cutrace: "; stderr holds `err_has`."""
    if result is None:
        return expect(label, False, f"hung: cutrace {' '.join(args)}")
    rc, _, err = result
    lines = err.splitlines()
    problems = []
    if rc < 0 or rc in (134, 139):
        problems.append(f"crashed (status {rc})")
    elif rc != want_rc:
        problems.append(f"exit {rc}, want {want_rc}")
    if stderr_lines is not None and len(lines) != stderr_lines:
        problems.append(f"{len(lines)} stderr lines, want {stderr_lines}")
    if want_rc == 1 and not (lines and lines[0].startswith("cutrace: ")):
        problems.append("stderr does not start with 'cutrace: '")
    if err_has and err_has not in err:
        problems.append(f"stderr lacks {err_has!r}")
    return expect(label, not problems, f"cutrace {' '.join(args)}: {'; '.join(problems)}\n"
                                       f"    stderr: {err.strip()[:300]!r}")


def union(intervals) -> list[list]:
    """The sorted, disjoint union of [start, end) intervals."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(intervals) -> int:
    """The length of the union of `intervals`."""
    return sum(e - s for s, e in union(intervals))


def intersection(a, b) -> int:
    """The length of (union of a) ∩ (union of b)."""
    total = 0
    for s, e in union(a):
        for s2, e2 in union(b):
            total += max(0, min(e, e2) - max(s, s2))
    return total
