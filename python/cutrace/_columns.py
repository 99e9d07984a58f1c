"""Reads ``cutrace columns`` (viewer_cli/cmd_columns.cc) into numpy arrays.

Each column's bytes go from the pipe straight into an array allocated once
at its final size (``readinto``): no text and no Python object per event.
"""

import json
import warnings

import numpy as np

from . import _native

_MAGIC = b"cutrace-columns 1\n"


class Column(object):
    """One column: a numpy array, and for a categorical column its texts
    (the array then holds int32 codes into them, -1 for none)."""

    __slots__ = ("name", "values", "categories")

    def __init__(self, name, values, categories=None):
        self.name = name
        self.values = values
        self.categories = categories


def _read_exactly(stream, view):
    got = 0
    total = len(view)
    while got < total:
        n = stream.readinto(view[got:])
        if not n:
            return got
        got += n
    return got


def read_tables(paths, kinds=None):
    """Runs ``cutrace columns PATHS`` and returns ({table: [Column...]}, [path...]).

    Raises TraceError (the CLI's line) for a file that cannot be read; a
    truncated file is a Python warning and what was readable is returned.
    """
    args = ["columns"] + [str(p) for p in paths]
    if kinds:
        args += ["--kinds", ",".join(kinds)]
    proc, err = _native.open_stream(args)
    tables = {}
    files = []
    try:
        out = proc.stdout
        magic = out.readline()
        if magic == _MAGIC:
            head = json.loads(out.readline().decode("utf-8"))
            files = head["files"]
            for table in head["tables"]:
                rows = int(table["rows"])
                columns = []
                for col in table["columns"]:
                    values = np.empty(rows, dtype=np.dtype(col["dtype"]))
                    view = memoryview(values).cast("B")
                    if _read_exactly(out, view) != len(view):
                        raise _native.TraceError("the cutrace columns stream ended early")
                    columns.append(Column(col["name"], values,
                                          table["categories"].get(col["name"])))
                tables[table["name"]] = columns
        out.read()
    finally:
        proc.stdout.close()
        rc = proc.wait()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
        err.close()
    if rc == 2:
        raise ValueError(_native.error_line(stderr))
    if rc != 0:
        raise _native.TraceError(_native.error_line(stderr))
    for line in _native.warnings_in(stderr):
        warnings.warn(line, stacklevel=3)
    return tables, files
