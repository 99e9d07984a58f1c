#!/usr/bin/env python3
"""The metric check end to end, against CUPTI's own metric tables, offline.

CUPTI's Profiler Host API carries every supported chip's metric tables, so
`cutrace-check-metrics --chip GH100` needs no GPU and no driver. Checked here:
  1. the checker: real names (dram__bytes_read.sum, gpu__time_duration.sum)
     are available on GH100 with CUPTI's units, a bogus name is not (exit 1),
     an unknown chip is a usage error (exit 2) naming the chips CUPTI knows,
     a missing libcupti is "cannot check" (exit 3);
  2. every metric of every preset (`cutrace metrics --list`) exists on GH100,
     so a typo in collector/metric_presets.h is caught (theoretical occupancy
     is computed from the launch, not counted: no preset may name ncu's
     sm__maximum_warps_per_active_cycle_pct, which CUPTI does not have);
  3. `cutrace metrics --check` (table and JSON; exit 1 for a bogus name,
     0 when only a preset's metric is missing: the memory preset's
     dram__bytes_read.sum is not in CUPTI's tables for GB202);
  4. `cutrace run --metrics bogus_metric.sum -- /bin/echo hi` with
     CUTRACE_METRICS_CHIP=GH100 exits 2 with one line naming the metric and
     the chip, and echo never runs; a preset or a real name runs it;
  5. when nothing can be checked (no libcupti, no checker; no driver, where
     this machine has none) `cutrace run` goes on: the program's stdout and
     exit status unchanged, at most one line about the check.

usage: metric_check_test.py CUTRACE CHECKER [--cupti LIBCUPTI]
Without --cupti, parts 1-4 run only if the checker finds a libcupti itself.
"""
import ctypes
import json
import os
import subprocess
import sys

from script_checks import expect as check
from script_checks import failures, finish

CUTRACE, CHECKER = sys.argv[1], sys.argv[2]
CUPTI = sys.argv[sys.argv.index("--cupti") + 1] if "--cupti" in sys.argv else None
# A chip that lacks some preset metrics, and which: the check of a preset's
# missing metric (not an error) needs one.
PARTIAL_CHIP, MISSING_ON_PARTIAL_CHIP = "GB202", "dram__bytes_read.sum"


def env_with(**extra):
    env = dict(os.environ)
    for k in ("CUTRACE_METRICS_CHIP", "CUTRACE_METRIC_CHECKER", "CUDA_INJECTION64_PATH"):
        env.pop(k, None)
    if CUPTI:
        env["CUTRACE_CUPTI_PATH"] = CUPTI
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run(cmd, **extra):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env_with(**extra))
    return p.returncode, p.stdout, p.stderr


def preset_metrics():
    rc, out, _ = run([CUTRACE, "metrics", "--list", "--format", "json"])
    if rc != 0:
        return []
    return sorted({m for p in json.loads(out)["presets"] for m in p["metrics"]})


def has_gpu():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return cuda.cuInit(0) == 0


def offline_checker():
    rc, out, err = run([CHECKER, "--chip", "GH100", "--json",
                        "dram__bytes_read.sum,gpu__time_duration.sum", "bogus_metric.sum"])
    check("checker exit for one bogus name", rc == 1, f"exit {rc}, stderr {err!r}")
    try:
        doc = json.loads(out)
    except ValueError:
        failures.append(f"checker JSON unreadable: {out!r}")
        return
    check("checker source", doc.get("source") == "chips", str(doc.get("source")))
    chips = doc.get("chips", [])
    check("checker chips", [c.get("chip") for c in chips] == ["GH100"], str(chips)[:200])
    got = {m["name"]: m for m in (chips[0]["metrics"] if chips else [])}
    check("dram__bytes_read.sum available on GH100",
          got.get("dram__bytes_read.sum", {}).get("available") is True, str(got.get("dram__bytes_read.sum")))
    check("dram__bytes_read.sum is a dram counter",
          got.get("dram__bytes_read.sum", {}).get("unit") == "dram" and
          got.get("dram__bytes_read.sum", {}).get("type") == "counter", str(got.get("dram__bytes_read.sum")))
    check("gpu__time_duration.sum available on GH100",
          got.get("gpu__time_duration.sum", {}).get("available") is True, str(got.get("gpu__time_duration.sum")))
    bogus = got.get("bogus_metric.sum", {})
    check("bogus_metric.sum unknown on GH100", bogus.get("available") is False and
          bogus.get("reason") == "CUPTI_ERROR_INVALID_METRIC_NAME", str(bogus))

    rc, out, err = run([CHECKER, "--chip", "GH100", "dram__bytes_read.sum", "gpu__time_duration.sum"])
    check("checker exit when all are there", rc == 0, f"exit {rc}, {err!r}")
    check("checker text names the chip", out.startswith("GH100:"), repr(out[:80]))

    rc, out, err = run([CHECKER, "--chip", "XX999", "dram__bytes_read.sum"])
    check("unknown chip is a usage error", rc == 2, f"exit {rc}")
    check("unknown chip is named with the known ones", "XX999" in err and "GH100" in err, repr(err))

    rc, out, err = run([CHECKER, "--chip", "GH100", "--json", "dram__bytes_read.sum"],
                       CUTRACE_CUPTI_PATH="/nonexistent/libcupti.so.13")
    check("missing libcupti: cannot check", rc == 3, f"exit {rc}")
    check("missing libcupti: the reason in JSON", "libcupti" in json.loads(out or "{}").get("error", ""), out)

    # Every preset metric exists on GH100 (the H200's chip).
    names = preset_metrics()
    check("presets parsed", len(names) >= 20, str(names))
    rc, out, err = run([CHECKER, "--chip", "GH100", "--json"] + names)
    doc = json.loads(out or "{}")
    missing = {m["name"] for c in doc.get("chips", []) for m in c["metrics"] if not m["available"]}
    check("preset metrics on GH100", bool(doc.get("chips")) and not missing,
          f"missing {sorted(missing)}, {err.strip()[:200]}")
    check("no preset names ncu's computed theoretical occupancy",
          "sm__maximum_warps_per_active_cycle_pct" not in names, str(names))


def metrics_check_command():
    rc, out, err = run([CUTRACE, "metrics", "--check", "dram__bytes_read.sum,bogus_metric.sum",
                        "--chip", "GH100"])
    check("metrics --check exit with a bogus name", rc == 1, f"exit {rc}")
    rows = {line.split()[0]: line for line in out.splitlines()[2:] if line.strip()}
    check("metrics --check table marks dram__bytes_read.sum yes",
          " yes " in rows.get("dram__bytes_read.sum", ""), repr(out))
    check("metrics --check table marks bogus_metric.sum no",
          " no " in rows.get("bogus_metric.sum", ""), repr(out))
    check("metrics --check says which name, in one line",
          len(err.splitlines()) == 1 and "bogus_metric.sum" in err and "GH100" in err, repr(err))

    rc, out, err = run([CUTRACE, "metrics", "--check", "memory,gpu__time_duration.sum",
                        "--chip", PARTIAL_CHIP, "--format", "json"])
    check("a preset's missing metric is not an error", rc == 0, f"exit {rc}, {err!r}")
    doc = json.loads(out or "{}")
    by_name = {m["name"]: m for m in doc.get("metrics", [])}
    known = MISSING_ON_PARTIAL_CHIP
    check("JSON: the preset's missing metric", by_name.get(known, {}).get("available") is False and
          by_name.get(known, {}).get("from_preset") is True, str(by_name.get(known)))
    check("JSON: the name given", by_name.get("gpu__time_duration.sum", {}).get("available") is True and
          by_name.get("gpu__time_duration.sum", {}).get("from_preset") is False, str(by_name))
    check("JSON: names_available", doc.get("names_available") is True and doc.get("all_available") is False,
          str({k: doc.get(k) for k in ("names_available", "all_available")}))

    rc, _, err = run([CUTRACE, "metrics", "--check", "dram__bytes_read.sum", "--chip", "XX999"])
    check("metrics --check with an unknown chip", rc == 2 and "XX999" in err, f"exit {rc}, {err!r}")


def run_refuses_unknown_names():
    rc, out, err = run([CUTRACE, "run", "--metrics", "bogus_metric.sum", "--", "/bin/echo", "hi"],
                       CUTRACE_METRICS_CHIP="GH100")
    check("run with an unknown metric exits 2", rc == 2, f"exit {rc}")
    check("run with an unknown metric never starts the program", out == "", repr(out))
    lines = err.splitlines()
    check("run with an unknown metric: one line naming it and the chip",
          len(lines) == 1 and "bogus_metric.sum" in err and "GH100" in err and "not started" in err,
          repr(err))

    for metrics in ("memory", "dram__bytes_read.sum,speed-of-light", "launch"):
        rc, out, err = run([CUTRACE, "run", "--metrics", metrics, "--", "/bin/echo", "hi"],
                           CUTRACE_METRICS_CHIP="GH100")
        check(f"run --metrics {metrics} starts the program", rc == 0 and out == "hi\n", f"exit {rc}, {out!r}")
        check(f"run --metrics {metrics}: nothing about the check", "metric" not in err, repr(err))

    rc, out, err = run([CUTRACE, "run", "--metrics", "bogus_metric.sum", "--", "/bin/echo", "hi"],
                       CUTRACE_METRICS_CHIP="XX999")
    check("run with an unknown chip exits 2", rc == 2 and out == "" and "XX999" in err, f"exit {rc}, {err!r}")


def run_goes_on_without_a_check():
    cases = {
        "no libcupti": dict(CUTRACE_CUPTI_PATH="/nonexistent/libcupti.so.13", CUTRACE_METRICS_CHIP="GH100"),
        "no checker": dict(CUTRACE_METRIC_CHECKER="/nonexistent/cutrace-check-metrics"),
    }
    if not has_gpu():
        cases["no GPU or driver, no override"] = dict()
    for label, extra in cases.items():
        rc, out, err = run([CUTRACE, "run", "--metrics", "bogus_metric.sum", "--", "/bin/sh", "-c",
                            "echo hi; exit 7"], **extra)
        check(f"{label}: the program runs with its status", rc == 7 and out == "hi\n", f"exit {rc}, {out!r}")
        about = [line for line in err.splitlines() if "not checked" in line]
        check(f"{label}: at most one line about the check", len(about) <= 1, repr(err))
        check(f"{label}: nothing called an unknown metric", "unknown metric" not in err, repr(err))


def main():
    rc, _, err = run([CHECKER, "--chip", "GH100", "gpu__time_duration.sum"])
    offline = rc == 0
    if CUPTI and not offline:
        failures.append(f"the checker cannot use {CUPTI} offline: exit {rc}, {err.strip()!r}")
    if offline:
        offline_checker()
        metrics_check_command()
        run_refuses_unknown_names()
    else:
        print(f"note: no libcupti for the checker (exit {rc}: {err.strip()}); offline checks skipped")
    run_goes_on_without_a_check()
    return finish("metric_check")


if __name__ == "__main__":
    sys.exit(main())
