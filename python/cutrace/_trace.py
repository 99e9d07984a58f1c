"""``cutrace.load()`` and the ``Trace`` it returns."""

import json
import os
import shutil
import tempfile

from . import _columns, _native

TABLES = ("kernels", "memcpys", "memsets", "ranges", "api_calls", "syncs")
BACKENDS = ("pandas", "arrow", "numpy")


def _require(module, what):
    try:
        return __import__(module)
    except ImportError:
        raise ImportError(
            "cutrace: %s needs %s (pip install %s), or cutrace.load(..., backend=%r)"
            % (what, module, module, "numpy" if module != "numpy" else "pandas")) from None


def _looks_like_json(path):
    """A Chrome/Kineto trace (what torch.profiler writes): '{' or '[' first,
    or gzip's magic (.json.gz)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return False
    if head[:2] == b"\x1f\x8b":
        return True
    stripped = head.lstrip()
    return stripped[:1] in (b"{", b"[")


def _expand(paths):
    out = []
    for p in paths:
        if isinstance(p, (list, tuple)):
            out.extend(_expand(p))
            continue
        p = os.fspath(p)
        if os.path.isdir(p):
            found = sorted(os.path.join(p, n) for n in os.listdir(p) if n.endswith(".trace"))
            if not found:
                raise _native.TraceError("%s: a directory with no .trace file" % p)
            out.extend(found)
        else:
            out.append(p)
    return out


def load(*paths, kinds=None, backend="pandas"):
    """Reads cutrace traces into tables.

    ``paths``: trace files (several ranks, or the chunks of one run:
    continuous-mode windows, rotated files, capture ranges), directories (their
    ``*.trace`` files), or Chrome/Kineto JSON as torch.profiler writes it
    (``.json`` or ``.json.gz``: imported with ``cutrace import`` first).
    ``kinds``: the tables to read (default all of ``TABLES``).
    ``backend``: ``"pandas"`` (DataFrames, the default), ``"arrow"``
    (``pyarrow.Table``) or ``"numpy"`` (a dict of arrays; categorical
    columns as int32 codes with their texts under ``"<column>_categories"``).

    Raises ``TraceError`` with the CLI's message for a file that cannot be
    read (a truncated file is a warning: what was readable is kept).
    """
    if backend not in BACKENDS:
        raise ValueError("backend must be one of %s, not %r" % (", ".join(BACKENDS), backend))
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        for k in kinds:
            if k not in TABLES:
                raise ValueError("kinds: %r is not one of %s" % (k, ", ".join(TABLES)))
    given = _expand(paths)
    if not given:
        raise ValueError("cutrace.load() needs at least one path")
    return Trace(given, kinds, backend)


class Trace(object):
    """Traces read by ``cutrace.load()``.

    Tables (one row per event; see docs/python.md for every column):
    ``kernels``, ``memcpys``, ``memsets``, ``ranges`` (NVTX), ``api_calls``,
    ``syncs``; and ``devices`` and ``info`` (one row per device and per file,
    from ``cutrace info``). Times are int64 nanoseconds on each file's clock;
    names are categoricals; ``file`` is the row's index in ``files``.

    ``report(name, **options)`` runs the CLI's report ``name`` over the same
    files and returns its JSON as dicts.
    """

    def __init__(self, given, kinds, backend):
        self.files = list(given)
        self.backend = backend
        self._tmp = None
        self._paths = []  # what the CLI reads: imports become temporary traces
        try:
            for i, path in enumerate(self.files):
                if _looks_like_json(path):
                    if self._tmp is None:
                        self._tmp = tempfile.mkdtemp(prefix="cutrace-py-")
                    out = os.path.join(self._tmp, "import-%d.trace" % i)
                    _native.run_cli(["import", path, "-o", out])
                    self._paths.append(out)
                else:
                    self._paths.append(path)
            self._columns, _ = _columns.read_tables(self._paths, kinds)
        except BaseException:
            self.close()
            raise
        self._cache = {}
        self._info = None

    def close(self):
        """Removes the temporary traces of imported JSON files (also done when
        the Trace is garbage-collected)."""
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __del__(self):
        self.close()

    def __repr__(self):
        counts = ", ".join("%s=%d" % (k, len(v[0].values) if v else 0)
                           for k, v in self._columns.items())
        return "<cutrace.Trace %d file(s): %s>" % (len(self.files), counts)

    # Tables -----------------------------------------------------------------

    def table(self, name, backend=None):
        """The table ``name`` (one of ``TABLES``) in ``backend`` (default: the
        load's)."""
        backend = backend or self.backend
        if name not in TABLES:
            raise ValueError("no table %r; the tables are %s" % (name, ", ".join(TABLES)))
        if name not in self._columns:
            raise ValueError("table %r was not loaded (kinds=...)" % name)
        key = (name, backend)
        if key not in self._cache:
            self._cache[key] = _convert(self._columns[name], backend)
        return self._cache[key]

    kernels = property(lambda self: self.table("kernels"), doc="Kernels, one row per launch.")
    memcpys = property(lambda self: self.table("memcpys"), doc="Memory copies.")
    memsets = property(lambda self: self.table("memsets"), doc="Memsets.")
    ranges = property(lambda self: self.table("ranges"), doc="NVTX ranges and marks (CPU clock).")
    api_calls = property(lambda self: self.table("api_calls"), doc="CUDA runtime/driver calls.")
    syncs = property(lambda self: self.table("syncs"), doc="Synchronization records.")

    def _info_files(self):
        if self._info is None:
            out, _ = _native.run_cli(["info"] + self._paths + ["--format", "json"])
            self._info = json.loads(out.decode("utf-8"))["files"]
        return self._info

    @property
    def info(self):
        """One row per file: ``cutrace info``'s JSON flattened (``header.host``,
        ``header.pid``, ``statistics.records_dropped_by_cupti``, ``clean_shutdown``,
        ``truncated``, ...); ``path`` is the file given to ``load()``."""
        rows = []
        for i, f in enumerate(self._info_files()):
            row = {k: v for k, v in f.items() if k != "devices"}
            row["path"] = self.files[i]
            rows.append(row)
        if self.backend == "pandas":
            pd = _require("pandas", "Trace.info as a DataFrame")
            return pd.json_normalize(rows)
        return rows

    @property
    def devices(self):
        """One row per device per file (``cutrace info``'s devices, with ``file``)."""
        rows = []
        for i, f in enumerate(self._info_files()):
            for d in f.get("devices", []):
                rows.append(dict(d, file=i))
        if self.backend == "pandas":
            pd = _require("pandas", "Trace.devices as a DataFrame")
            return pd.DataFrame(rows)
        return rows

    # Reports ----------------------------------------------------------------

    def report(self, name, **options):
        """Runs ``cutrace NAME FILES --format json`` with ``options`` as its
        flags and returns the parsed JSON (docs/json-reports.md): the CLI's
        own engine, so the numbers are the command line's.

        Options: ``range="step"`` -> ``--range step``, ``skip_first=1`` ->
        ``--skip-first 1``, ``top=10``, ``min_gap="10us"``, ``from_="2s"`` ->
        ``--from 2s`` (``from`` is a Python keyword); ``True`` gives a
        bare flag, ``False``/``None`` leaves the option out, a list repeats
        it. A usage error raises ValueError with the CLI's line.

        >>> t.report("kernels", range="step", skip_first=1)["kernels"][0]["name"]
        """
        args = [name] + self._paths + ["--format", "json"]
        for key, value in options.items():
            flag = "--" + key.rstrip("_").replace("_", "-")  # from_: --from
            values = value if isinstance(value, (list, tuple)) else [value]
            for v in values:
                if v is None or v is False:
                    continue
                if v is True:
                    args.append(flag)
                else:
                    args += [flag, str(v)]
        out, _ = _native.run_cli(args)
        return json.loads(out.decode("utf-8"))


def _convert(columns, backend):
    if backend == "numpy":
        import numpy as np

        out = {}
        for c in columns:
            out[c.name] = c.values
            if c.categories is not None:
                out[c.name + "_categories"] = np.array(c.categories, dtype=object)
        return out
    if backend == "arrow":
        pa = _require("pyarrow", "backend='arrow'")
        arrays, names = [], []
        for c in columns:
            if c.categories is not None:
                mask = c.values < 0
                arrays.append(pa.DictionaryArray.from_arrays(
                    pa.array(c.values, mask=mask if mask.any() else None),
                    pa.array(c.categories, type=pa.string())))
            else:
                arrays.append(pa.array(c.values))
            names.append(c.name)
        return pa.Table.from_arrays(arrays, names=names)
    pd = _require("pandas", "a table as a DataFrame")
    data = {}
    for c in columns:
        if c.categories is not None:
            data[c.name] = pd.Categorical.from_codes(c.values, categories=c.categories)
        else:
            data[c.name] = c.values
    return pd.DataFrame(data, copy=False)
