"""The installed `cutrace` package (scripts/python-test.sh builds the wheel
with `pip wheel .`, installs it into a fresh virtual environment and runs
this suite there): tables against the example trace's known work
(examples/README.md) and against the CLI's own JSON, dtypes as
docs/python.md documents them, TraceError with the CLI's line on bad files.

CUTRACE_EXAMPLES: the examples/ folder (default: beside this file's repo).
"""

import gzip
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import cutrace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.environ.get("CUTRACE_EXAMPLES", os.path.join(ROOT, "examples"))
DEMO = os.path.join(EXAMPLES, "demo.trace")

# docs/python.md: the columns of each table and their dtypes.
DTYPES = {
    "kernels": {"file": "uint16", "start_ns": "int64", "end_ns": "int64", "duration_ns": "int64",
                "name": "category", "device": "uint32", "stream": "uint32", "context": "uint32",
                "correlation_id": "uint64", "grid_x": "uint32", "grid_y": "uint32",
                "grid_z": "uint32", "block_x": "uint32", "block_y": "uint32", "block_z": "uint32",
                "registers_per_thread": "uint32", "static_shared_bytes": "uint32",
                "dynamic_shared_bytes": "uint32", "graph_id": "uint32",
                "graph_node_id": "uint64"},
    "memcpys": {"file": "uint16", "start_ns": "int64", "end_ns": "int64", "duration_ns": "int64",
                "bytes": "uint64", "kind": "category", "src_kind": "category",
                "dst_kind": "category", "device": "uint32", "src_device": "uint32",
                "dst_device": "uint32", "stream": "uint32", "context": "uint32",
                "correlation_id": "uint64", "async": "bool"},
    "memsets": {"file": "uint16", "start_ns": "int64", "end_ns": "int64", "duration_ns": "int64",
                "bytes": "uint64", "value": "uint32", "memory_kind": "category",
                "device": "uint32", "stream": "uint32", "context": "uint32",
                "correlation_id": "uint64"},
    "ranges": {"file": "uint16", "start_ns": "int64", "end_ns": "int64", "duration_ns": "int64",
               "name": "category", "domain": "category", "kind": "category", "depth": "uint32",
               "thread_id": "uint64", "device": "uint32", "color": "uint32",
               "range_id": "uint64"},
    "api_calls": {"file": "uint16", "start_ns": "int64", "end_ns": "int64",
                  "duration_ns": "int64", "name": "category", "domain": "category",
                  "thread_id": "uint64", "correlation_id": "uint64", "return_code": "uint32",
                  "callback_id": "uint32"},
    "syncs": {"file": "uint16", "start_ns": "int64", "end_ns": "int64", "duration_ns": "int64",
              "kind": "category", "device": "uint32", "stream": "uint32", "context": "uint32",
              "event_id": "uint32", "correlation_id": "uint64"},
}


def cli_json(*args):
    out = subprocess.run([cutrace.cli_path()] + list(args) + ["--format", "json"],
                         check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)


def cli_error(*args):
    proc = subprocess.run([cutrace.cli_path()] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    assert proc.returncode == 1
    line = proc.stderr.decode().strip().splitlines()[-1]
    assert line.startswith("cutrace: ")
    return line[len("cutrace: "):]


@pytest.fixture(scope="module")
def demo():
    return cutrace.load(DEMO)


def test_known_work_of_the_demo(demo):
    # examples/README.md: 10 steps of 3 kernels, 10 HtoD copies of 4 MiB, 20 DtoH
    # (10 of 4 MiB pinned, 10 of 4 B pageable), 10 memsets of 4 B, NVTX step >
    # upload/compute/download.
    k = demo.kernels
    assert len(k) == 30
    assert k.groupby("name", observed=True).size().to_dict() == {
        "preprocess(float*, int)": 10,
        "matmul_naive(float*, float*, float*, int)": 10,
        "reduce_sum(float*, float*, int)": 10}
    m = demo.memcpys
    htod = m[m["kind"] == "HtoD"]
    dtoh = m[m["kind"] == "DtoH"]
    assert len(htod) == 10 and int(htod["bytes"].sum()) == 41943040
    assert len(dtoh) == 20 and int(dtoh["bytes"].sum()) == 41943080
    pageable = dtoh[(dtoh["src_kind"] == "pageable") | (dtoh["dst_kind"] == "pageable")]
    assert len(pageable) == 10 and set(pageable["bytes"]) == {4}
    assert len(demo.memsets) == 10 and int(demo.memsets["bytes"].sum()) == 40
    r = demo.ranges
    assert r[r["depth"] == 0]["name"].astype(str).value_counts().to_dict() == {"step": 10}
    inner = r[r["depth"] == 1]["name"].astype(str).value_counts().to_dict()
    assert inner == {"upload": 10, "compute": 10, "download": 10}
    assert (r["domain"] == "default").all()


def test_kernels_equal_the_cli(demo):
    report = cli_json("kernels", DEMO)["kernels"]
    k = demo.kernels
    by_name = k.groupby("name", observed=True)["duration_ns"]
    assert len(k) == sum(row["count"] for row in report)
    for row in report:
        assert by_name.size()[row["name"]] == row["count"]
        assert by_name.sum()[row["name"]] == row["total_ns"]
        assert by_name.min()[row["name"]] == row["min_ns"]
        assert by_name.max()[row["name"]] == row["max_ns"]


def test_copies_and_api_equal_the_cli(demo):
    copies = cli_json("memcpy", DEMO)["copies"]
    m = demo.memcpys
    for row in copies:
        if row["kind"] == "memset":
            assert row["count"] == len(demo.memsets)
            assert row["bytes"] == int(demo.memsets["bytes"].sum())
        else:
            part = m[m["kind"] == row["kind"]]
            assert row["count"] == len(part)
            assert row["bytes"] == int(part["bytes"].sum())
            assert row["total_ns"] == int(part["duration_ns"].sum())
    events = cli_json("info", DEMO)["files"][0]["events"]
    for table in cutrace.TABLES:
        assert len(demo.table(table)) == events[table], table


@pytest.mark.parametrize("table", sorted(DTYPES))
def test_dtypes_as_documented(demo, table):
    df = demo.table(table)
    assert {c: str(t) for c, t in df.dtypes.items()} == DTYPES[table]
    # Durations are end - start.
    assert (df["duration_ns"] == df["end_ns"] - df["start_ns"]).all()


def test_arrow_and_numpy_backends_hold_the_same(demo):
    a = cutrace.load(DEMO, backend="arrow").kernels
    assert isinstance(a, pa.Table)
    assert a.num_rows == 30
    assert pa.types.is_dictionary(a.schema.field("name").type)
    assert a.column("duration_ns").to_pylist() == demo.kernels["duration_ns"].tolist()
    n = cutrace.load(DEMO, backend="numpy").kernels
    names = n["name_categories"][n["name"]]
    assert list(names) == list(demo.kernels["name"].astype(str))
    assert n["start_ns"].dtype == np.int64


def test_several_files_and_kinds():
    t = cutrace.load(DEMO, DEMO, kinds=["kernels"])
    k = t.kernels
    assert len(k) == 60
    assert k["file"].value_counts().to_dict() == {0: 30, 1: 30}
    assert t.files == [DEMO, DEMO]
    with pytest.raises(ValueError):
        t.memcpys
    assert len(t.info) == 2 and list(t.info["path"]) == [DEMO, DEMO]
    assert list(t.devices["name"]) == ["NVIDIA H200", "NVIDIA H200"]


def test_a_directory_of_chunks(tmp_path):
    for i in range(3):
        shutil.copy(DEMO, tmp_path / ("run.%d.trace" % i))
    (tmp_path / "notes.txt").write_text("not a trace")
    t = cutrace.load(tmp_path)
    assert len(t.files) == 3 and len(t.kernels) == 90


def test_report_is_the_cli(demo):
    ours = demo.report("kernels", range="step", skip_first=1)
    theirs = cli_json("kernels", DEMO, "--range", "step", "--skip-first", "1")
    assert ours == theirs
    # 9 of the 10 steps: 9 launches of each kernel.
    assert [row["count"] for row in ours["kernels"]] == [9, 9, 9]
    assert demo.report("summary") == cli_json("summary", DEMO)
    with pytest.raises(ValueError, match="--no-such-option"):
        demo.report("kernels", no_such_option=1)
    # from_ (a Python keyword) is --from.
    window = demo.report("kernels", from_="0ms", to="1s")
    assert window == cli_json("kernels", DEMO, "--from", "0ms", "--to", "1s")


def test_info(demo):
    info = demo.info
    assert len(info) == 1
    row = info.iloc[0]
    assert row["header.magic"] == "cutrace"
    assert bool(row["clean_shutdown"])
    assert row["events.kernels"] == 30


def test_kineto_json_is_imported(tmp_path):
    out = tmp_path / "demo.json"
    subprocess.run([cutrace.cli_path(), "export", DEMO, "--format", "chrome", "-o", str(out)],
                   check=True)
    gz = tmp_path / "demo.json.gz"
    gz.write_bytes(gzip.compress(out.read_bytes()))
    for path in (out, gz):
        t = cutrace.load(path)
        assert len(t.kernels) == 30
        assert t.kernels["duration_ns"].sum() == cutrace.load(DEMO).kernels["duration_ns"].sum()


def test_bad_files_raise_the_cli_message(tmp_path):
    garbage = tmp_path / "garbage.trace"
    garbage.write_bytes(b"\x0a\x05hello, this is not a trace at all")
    empty = tmp_path / "empty.trace"
    empty.write_bytes(b"")
    missing = tmp_path / "missing.trace"
    for path in (garbage, empty, missing):
        expected = cli_error("kernels", str(path))
        with pytest.raises(cutrace.TraceError) as e:
            cutrace.load(path)
        assert str(e.value) == expected
        assert str(path) in str(e.value)
    with pytest.raises(cutrace.TraceError, match="not a cutrace trace"):
        cutrace.load(DEMO, garbage)


def test_truncated_file_warns_and_keeps_the_rest(tmp_path):
    data = open(DEMO, "rb").read()
    cut = tmp_path / "cut.trace"
    cut.write_bytes(data[:-40])
    with pytest.warns(UserWarning, match="truncated"):
        t = cutrace.load(cut)
    assert len(t.kernels) <= 30


def test_usage_errors():
    with pytest.raises(ValueError):
        cutrace.load()
    with pytest.raises(ValueError):
        cutrace.load(DEMO, backend="polars")
    with pytest.raises(ValueError):
        cutrace.load(DEMO, kinds=["kernel"])


def test_console_entry_point():
    exe = shutil.which("cutrace", path=os.path.dirname(sys.executable))
    assert exe is not None
    out = subprocess.run([exe, "kernels", DEMO, "--format", "json"], check=True,
                         stdout=subprocess.PIPE).stdout
    assert json.loads(out) == cli_json("kernels", DEMO)
    # Exit statuses pass through: 1 for bad input.
    assert subprocess.run([exe, "kernels", "/nonexistent.trace"],
                          stderr=subprocess.DEVNULL).returncode == 1


def test_without_pandas_a_clear_error_and_numpy_still_works(monkeypatch):
    # The GPU machine's Python may have numpy (PyTorch needs it) but no pandas.
    monkeypatch.setitem(sys.modules, "pandas", None)
    t = cutrace.load(DEMO)
    with pytest.raises(ImportError, match=r"needs pandas \(pip install pandas\).*backend='numpy'"):
        t.kernels
    assert len(cutrace.load(DEMO, backend="numpy").kernels["start_ns"]) == 30
