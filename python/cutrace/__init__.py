"""cutrace: a CUPTI-based profiler for NVIDIA GPUs, from Python.

    import cutrace
    t = cutrace.load("run.trace")              # or several files, chunks, a torch.profiler JSON
    t.kernels                                  # a pandas DataFrame, one row per kernel
    t.kernels.groupby("name", observed=True)["duration_ns"].sum().nlargest(10)
    t.report("summary", range="step", skip_first=1)   # the CLI's report, as dicts

    with cutrace.profile():                    # under `cutrace run --capture-range cudaProfilerApi`
        train_steps()                          # only this is recorded

The ``cutrace`` command (``cutrace run -- python3 train.py``) comes with the
package. See docs/python.md for every table's columns.
"""

from ._native import TraceError, cli_path, library_path
from ._profile import ProfileError, profile
from ._trace import TABLES, Trace, load

__version__ = "0.1.0"
__all__ = ["load", "Trace", "TraceError", "TABLES", "profile", "ProfileError", "cli_path",
           "library_path", "__version__"]
