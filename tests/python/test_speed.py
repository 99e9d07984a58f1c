"""A 10 M-event trace loads in under 10 s (issue 24): bench/gen_trace writes
it (CUTRACE_GEN_TRACE names the binary; skipped without it), and the load
of every table into DataFrames is timed and printed."""

import os
import subprocess
import time

import pytest

import cutrace

GEN = os.environ.get("CUTRACE_GEN_TRACE", "")


@pytest.mark.skipif(not os.path.isfile(GEN), reason="no bench/gen_trace (CUTRACE_GEN_TRACE)")
def test_ten_million_events_load_in_seconds(tmp_path, capsys):
    path = str(tmp_path / "big.trace")
    counts = subprocess.run([GEN, "--events", "10000000", "--out", path], check=True,
                            stdout=subprocess.PIPE).stdout
    events = int(__import__("json").loads(counts)["events"])
    start = time.perf_counter()
    cpu = time.process_time()
    t = cutrace.load(path)
    rows = sum(len(t.table(name)) for name in cutrace.TABLES)
    wall = time.perf_counter() - start
    with capsys.disabled():
        print("\nFIGURE python load: %d events into DataFrames in %.2f s wall "
              "(%.2f s CPU in Python), %.1f M events/s"
              % (rows, wall, time.process_time() - cpu, rows / wall / 1e6))
    assert rows == events
    assert wall < 10.0
