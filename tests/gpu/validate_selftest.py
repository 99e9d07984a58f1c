#!/usr/bin/env python3
"""Self-test of the GPU validator, runnable without a GPU (CTest label `unit`).

Two layers: the checks in cutrace_checks.py against hand-made report JSON, and
validate.py end to end against fake_tools.py (a fake `cutrace` and fake ct_*
apps) with one injected defect at a time: each defect must turn the verdict to
FAIL, and the defect-free run must PASS. A validator that cannot fail is a defect.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cutrace_checks as cc  # noqa: E402
import fake_tools  # noqa: E402
import validate  # noqa: E402


def verdicts(checks):
    return {c.name: c.verdict for c in checks}


class ChecksTest(unittest.TestCase):
    def test_info_reads_snake_camel_and_string_numbers(self):
        info = {"files": [{"header": {"pid": "42"}, "clean_shutdown": True, "truncated": False,
                           "statistics": {"recordsDroppedByCupti": "0",
                                          "records_dropped_queue_full": 0,
                                          "invalid": [{"kind": "kernel", "reason": "inverted",
                                                       "count": "0"}]}}]}
        self.assertEqual(cc.trace_pid(info), 42)
        self.assertEqual(set(verdicts(cc.check_info(info)).values()), {"PASS"})
        info["files"][0]["statistics"]["invalid"][0]["count"] = "3"
        self.assertEqual(verdicts(cc.check_info(info))["zero drops"], "FAIL")

    def test_info_without_statistics_or_unclean_fails(self):
        info = {"files": [{"clean_shutdown": True, "truncated": False}]}
        self.assertEqual(verdicts(cc.check_info(info))["zero drops"], "FAIL")
        info = {"files": [{"clean_shutdown": True, "truncated": True, "statistics": {}}]}
        self.assertEqual(verdicts(cc.check_info(info))["clean shutdown"], "FAIL")

    def test_kernels_exact_and_no_extras(self):
        report = {"kernels": [{"name": "a(int)", "count": 3}, {"name": "b(int)", "count": 1}]}
        v = verdicts(cc.check_kernels({"a(int)": 3, "b(int)": 1}, report))
        self.assertEqual(set(v.values()), {"PASS"})
        v = verdicts(cc.check_kernels({"a(int)": 3}, report))
        self.assertEqual(v["kernels total"], "FAIL")
        v = verdicts(cc.check_kernels({"a(int)": 4, "b(int)": 1}, report))
        self.assertEqual(v["kernels a(int)"], "FAIL")
        info = {"files": [{"events": {"kernels": 5}}]}
        v = verdicts(cc.check_kernels({"a(int)": 3, "b(int)": 1}, report, info))
        self.assertEqual(v["kernels report == info events"], "FAIL")

    def test_copies_exact_per_kind_and_memsets(self):
        report = {"copies": [{"kind": "HtoD", "count": 2, "bytes": 10, "pageable_count": 1},
                             {"kind": "memset", "count": 1, "bytes": 4, "pageable_count": 0}]}
        truth = {"HtoD": {"count": 2, "bytes": 10, "pageable_count": 1}}
        self.assertEqual(set(verdicts(cc.check_copies(truth, {"count": 1, "bytes": 4},
                                                      report)).values()), {"PASS"})
        v = verdicts(cc.check_copies(truth, {"count": 0, "bytes": 0}, report))
        self.assertEqual(v["memsets"], "FAIL")
        v = verdicts(cc.check_copies({}, {"count": 1, "bytes": 4}, report))
        self.assertEqual(v["copies HtoD"], "FAIL")  # a kind the truth does not have

    def test_nvtx_rows_domains_and_gpu_ops(self):
        truth = [{"domain": "default", "name": "outer", "depth": 0, "count": 2, "gpu_ops": 4},
                 {"domain": "ct_domain", "name": "outer", "depth": 0, "count": 3, "gpu_ops": 6}]
        report = {"ranges": [{"domain": "", "name": "outer", "depth": 0, "count": 2, "gpu_ops": 4},
                             {"domain": "ct_domain", "name": "outer", "depth": 0, "count": 3,
                              "gpu_ops": 6}]}
        self.assertEqual(set(verdicts(cc.check_nvtx(truth, report)).values()), {"PASS"})
        swapped = {"ranges": [dict(r, domain=d) for r, d in
                              zip(report["ranges"], ["ct_domain", "default"])]}
        self.assertIn("FAIL", verdicts(cc.check_nvtx(truth, swapped)).values())
        fewer_ops = {"ranges": [dict(report["ranges"][0], gpu_ops=3), report["ranges"][1]]}
        v = verdicts(cc.check_nvtx(truth, fewer_ops))
        self.assertEqual(v["nvtx gpu_ops (exact)"], "FAIL")
        self.assertEqual(verdicts(cc.check_nvtx(truth, fewer_ops, gpu_ops="ignore")),
                         {"nvtx rows (domain, name, depth, count)": "PASS"})

    def test_durations_within_tolerance(self):
        timed = [{"name": "k()", "count": 2, "event_avg_ns": 1_000_000, "event_min_ns": 990_000,
                  "event_max_ns": 1_010_000}]
        ok = {"kernels": [{"name": "k()", "count": 2, "avg_ns": 995_000, "min_ns": 985_000,
                           "max_ns": 1_005_000}]}
        self.assertEqual(verdicts(cc.check_timed_kernels(timed, ok))["durations k()"], "PASS")
        slow = {"kernels": [dict(ok["kernels"][0], avg_ns=1_100_000, max_ns=1_120_000)]}
        self.assertEqual(verdicts(cc.check_timed_kernels(timed, slow))["durations k()"], "FAIL")

    def test_durations_loose_bracket_with_floor(self):
        # Events also timed an ~85 us host launch: the trace may be shorter, not longer,
        # and never shorter than the kernel's known spin time.
        timed = [{"name": "k()", "count": 2, "event_avg_ns": 1_086_000, "event_min_ns": 1_060_000,
                  "event_max_ns": 1_200_000, "floor_ns": 1_000_000}]
        ok = {"kernels": [{"name": "k()", "count": 2, "avg_ns": 1_000_600, "min_ns": 1_000_500,
                           "max_ns": 1_000_700}]}
        self.assertEqual(verdicts(cc.check_timed_kernels(timed, ok))["durations k()"], "PASS")
        short = {"kernels": [dict(ok["kernels"][0], min_ns=900_000)]}
        self.assertEqual(verdicts(cc.check_timed_kernels(timed, short))["durations k()"], "FAIL")
        long = {"kernels": [dict(ok["kernels"][0], avg_ns=1_300_000, max_ns=1_300_000)]}
        self.assertEqual(verdicts(cc.check_timed_kernels(timed, long))["durations k()"], "FAIL")

    def test_gaps_count_and_floor(self):
        truth = {"count": 2, "sleep_ns": 50_000_000}
        gaps = lambda ds: {"devices": [{"device": 0, "gaps": [{"duration_ns": d} for d in ds]}]}
        self.assertEqual(cc.check_gaps(truth, gaps([49_500_000, 60_000_000, 1000]))[0].verdict,
                         "PASS")
        self.assertEqual(cc.check_gaps(truth, gaps([40_000_000, 60_000_000]))[0].verdict, "FAIL")
        self.assertEqual(cc.check_gaps(truth, gaps([5e7, 5e7, 5e7]))[0].verdict, "FAIL")

    def test_overlap_and_devices(self):
        rep = {"devices": [{"device": 0, "copy_ns": 100, "overlap_ns": 60, "busy_ns": 5},
                           {"device": 1, "copy_ns": 0, "overlap_ns": 0, "busy_ns": 0}]}
        self.assertEqual(cc.check_overlap({"min_fraction_of_copy": 0.5}, rep)[0].verdict, "PASS")
        self.assertEqual(cc.check_overlap({"min_fraction_of_copy": 0.7}, rep)[0].verdict, "FAIL")
        self.assertEqual(cc.check_devices([0], rep)[0].verdict, "PASS")
        self.assertEqual(cc.check_devices([0, 1], rep)[0].verdict, "FAIL")

    def test_graph_csv(self):
        truth = {"graph_kernels": 2}
        text = "kind,graph_id\nkernel,3\nkernel,3\nkernel,0\nmemcpy,3\n"
        self.assertEqual(cc.check_graph_csv(truth, text)[0].verdict, "PASS")
        self.assertEqual(cc.check_graph_csv({"graph_kernels": 3}, text)[0].verdict, "FAIL")
        self.assertEqual(cc.check_graph_csv(truth, "kind,name\n")[0].verdict, "SKIP")
        self.assertEqual(cc.check_graph_csv(truth, None)[0].verdict, "SKIP")

    def test_run_reports_signal_deaths_as_128_plus_n(self):
        env = dict(os.environ)
        self.assertEqual(validate.run(["sh", "-c", "exit 3"], env, 10).status, 3)
        self.assertEqual(validate.run(["sh", "-c", "kill -TERM $$"], env, 10).status, 143)
        r = validate.run(["sh", "-c", "sleep 30"], env, 0.5)
        self.assertTrue(r.timed_out)
        self.assertEqual(r.status, -1)


def _kineto(events: list[dict]) -> dict:
    return {"schemaVersion": 1, "traceEvents": [
        {"name": "process_name", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        *events]}


@unittest.skipUnless(os.environ.get("CUTRACE_BIN"), "CUTRACE_BIN (the built cutrace) not set")
class RealCutraceTest(unittest.TestCase):
    """The checks against the real `cutrace` reports, on a trace imported from a hand-made
    Kineto JSON whose content is known: catches drift between docs/json-reports.md as
    implemented and what the validator parses."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        host = {"pid": 10, "tid": 1}
        gpu = {"pid": 0, "tid": 7}

        def x(cat, name, ts, dur, where, **args):
            return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, **where,
                    "args": args}

        k = "k(int*, int)"
        events = [
            x("user_annotation", "outer", 1000, 100, host),
            x("user_annotation", "inner", 1010, 40, host),
            x("cuda_runtime", "cudaLaunchKernel", 1012, 2, host, correlation=1),
            x("cuda_runtime", "cudaLaunchKernel", 1060, 2, host, correlation=2),
            x("cuda_runtime", "cudaMemcpyAsync", 1064, 2, host, correlation=6),
            x("cuda_runtime", "cudaMemcpyAsync", 1070, 2, host, correlation=3),
            x("cuda_runtime", "cudaMemsetAsync", 1150, 2, host, correlation=4),
            x("cuda_runtime", "cudaLaunchKernel", 59990, 2, host, correlation=5),
            x("kernel", k, 1020, 20, gpu, device=0, stream=7, correlation=1),
            x("kernel", k, 1090, 20, gpu, device=0, stream=7, correlation=2),
            x("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 1095, 10, gpu, device=0,
              stream=8, correlation=6, bytes=1024),
            x("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 1130, 10, gpu, device=0,
              stream=7, correlation=3, bytes=4096),
            x("gpu_memset", "Memset (Device)", 1200, 5, gpu, device=0, stream=7,
              correlation=4, bytes=256),
            x("kernel", k, 60000, 20, gpu, device=0, stream=7, correlation=5),
        ]
        src = Path(self.tmp.name) / "k.json"
        src.write_text(json.dumps(_kineto(events)))
        self.trace = Path(self.tmp.name) / "k.trace"
        r = subprocess.run([os.environ["CUTRACE_BIN"], "import", str(src), "-o", str(self.trace)],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.truth = {
            "pid": 0, "kernels": {k: 3},
            "copies": {"HtoD": {"count": 1, "bytes": 4096, "pageable_count": 1},
                       "DtoH": {"count": 1, "bytes": 1024, "pageable_count": 0}},
            "memsets": {"count": 1, "bytes": 256},
            "nvtx": [{"domain": "default", "name": "outer", "depth": 0, "count": 1, "gpu_ops": 4},
                     {"domain": "default", "name": "inner", "depth": 1, "count": 1, "gpu_ops": 1}],
            "timed_kernels": [{"name": k, "count": 3, "event_avg_ns": 20000,
                               "event_min_ns": 20000, "event_max_ns": 20000}],
            "gaps": {"count": 1, "sleep_ns": 50_000_000},
            "overlap": {"min_fraction_of_copy": 0.3},
        }

    def reports(self):
        case = validate.Case("x", gaps=True)
        return validate.collect_reports(os.environ["CUTRACE_BIN"], self.trace, self.truth, case,
                                        Path(self.tmp.name))

    def test_known_trace_passes_every_check(self):
        reports = self.reports()
        checks = cc.check_info(reports["info"]) + cc.check_truth(self.truth, reports)
        failed = [f"{c.name}: {c.detail}" for c in checks if c.verdict != "PASS"]
        self.assertEqual(failed, [])
        self.assertGreaterEqual(len(checks), 12)

    def test_known_trace_fails_a_wrong_truth(self):
        reports = self.reports()
        for key, value in (("kernels", {"k(int*, int)": 4}),
                           ("memsets", {"count": 1, "bytes": 255}),
                           ("gaps", {"count": 2, "sleep_ns": 50_000_000}),
                           ("overlap", {"min_fraction_of_copy": 0.9})):
            with self.subTest(key=key):
                truth = dict(self.truth, **{key: value})
                self.assertIn("FAIL", verdicts(cc.check_truth(truth, reports)).values())


class EndToEndTest(unittest.TestCase):
    """validate.py against the fake tracer and apps."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        (root / "bin").mkdir()
        (root / "lib").mkdir()
        fake = HERE / "fake_tools.py"

        def script(path: Path, body: str) -> None:
            path.write_text(f"#!/bin/sh\n{body}\n")
            path.chmod(path.stat().st_mode | stat.S_IXUSR)

        script(root / "bin" / "cutrace", f'exec "{sys.executable}" "{fake}" cutrace "$@"')
        for app in {c.app for c in validate.CASES.values()}:
            script(root / "bin" / f"ct_{app}", f'exec "{sys.executable}" "{fake}" app {app} "$@"')
        (root / "lib" / "libcutrace_injection.so").write_text("")
        (root / "pylib").mkdir()
        (root / "pylib" / "torch.py").write_text(fake_tools.FAKE_TORCH)
        cls.root = root

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def validate(self, case: str, bug: str = "", extra=()):
        env = dict(os.environ, CUTRACE_VALIDATE_ASSUME_GPU="1", FAKEBUG=bug)
        cmd = [sys.executable, str(HERE / "validate.py"), "--case", case,
               "--cutrace", str(self.root / "bin" / "cutrace"),
               "--work", str(self.root / "work" / f"{case}-{bug or 'ok'}"), *extra]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        return r.returncode, r.stdout + r.stderr

    def test_every_case_passes_with_a_perfect_tracer(self):
        with ThreadPoolExecutor(4) as pool:
            runs = dict(zip(validate.CASES, pool.map(self.validate, validate.CASES)))
        for case, (rc, out) in runs.items():
            with self.subTest(case=case):
                want = validate.SKIP if case == "multi_gpu" else 0
                self.assertEqual(rc, want, out)
                self.assertNotIn("FAIL", out)

    def test_each_defect_fails(self):
        case_for = {"duration": "demo", "gap_short": "idle_gaps", "overlap_zero": "overlap",
                    "no_child_trace": "fork", "graph_ids": "graph_replay"}

        def one(bug):
            extra = ["--timeout", "5"] if bug == "hang" else []
            return self.validate(case_for.get(bug, "demo"), bug, extra)

        with ThreadPoolExecutor(4) as pool:
            runs = dict(zip(fake_tools.BUGS, pool.map(one, fake_tools.BUGS)))
        failing_check = {
            "kernel_count": "kernels ", "extra_kernel": "kernels total", "bytes": "copies HtoD",
            "pageable": "copies DtoH", "memset": "memsets", "nvtx_depth": "nvtx rows",
            "nvtx_extra": "nvtx rows", "gpu_ops": "nvtx gpu_ops", "duration": "durations",
            "gap_short": "gaps", "overlap_zero": "overlap", "drops": "zero drops",
            "unclean": "clean shutdown", "no_trace": "trace written", "stdout": "stdout",
            "status": "exit status", "hang": "finished", "stray_trace": "unexpected traces",
            "same_pid": "one trace per pid",
            "no_child_trace": "child exec", "graph_ids": "graph kernels"}
        self.assertEqual(set(failing_check), set(fake_tools.BUGS))
        for bug, (rc, out) in runs.items():
            with self.subTest(bug=bug):
                self.assertEqual(rc, 1, out)
                self.assertIn(f"FAIL  [run] {failing_check[bug]}", out)

    def test_preload_mode_and_signals(self):
        rc, out = self.validate("launch_storm")
        self.assertEqual(rc, 0, out)
        self.assertIn("[preload] kernels total", out)
        rc, out = self.validate("signal_int", "status")
        self.assertEqual(rc, 0, out)  # a signal death cannot be altered by the fake's bug

    def torch_loop(self, bug: str = ""):
        env = dict(os.environ, CUTRACE_VALIDATE_ASSUME_GPU="1", FAKEBUG=bug,
                   PYTHONPATH=str(self.root / "pylib"))
        cmd = [sys.executable, str(HERE / "torch_loop.py"), "--iters", "20",
               "--cutrace", str(self.root / "bin" / "cutrace"),
               "--work", str(self.root / "work" / f"torch-{bug or 'ok'}")]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        return r.returncode, r.stdout + r.stderr

    def test_torch_loop_validation(self):
        rc, out = self.torch_loop()
        self.assertEqual(rc, 0, out)
        self.assertIn("FIGURE torch loop", out)
        for bug in ("unclean", "drops", "gpu_ops", "nvtx_depth", "no_trace"):
            with self.subTest(bug=bug):
                rc, out = self.torch_loop(bug)
                self.assertEqual(rc, 1, out)

    def test_no_gpu_skips_with_77(self):
        if validate.has_gpu():
            self.skipTest("this machine has a GPU")
        r = subprocess.run([sys.executable, str(HERE / "validate.py"), "--case", "demo"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, validate.SKIP)
        self.assertIn("skipped: no GPU", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=1)
