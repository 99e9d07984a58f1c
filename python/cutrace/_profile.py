"""``cutrace.profile()``: record only part of a program that runs under cutrace.

    # cutrace run --capture-range cudaProfilerApi --capture-range-end repeat -- python3 train.py
    for step in range(100):
        if step == 10:
            with cutrace.profile():        # steps 10-19 only
                for s in range(10, 20):
                    train_step(s)

It opens and closes a capture range the way ``cudaProfilerStart`` and
``cudaProfilerStop`` do (injection/production/capture_range.h): the CUDA
runtime's, where the process has libcudart loaded (PyTorch, CuPy), else the
driver's ``cuProfilerStart``/``cuProfilerStop``. Each block is its own chunk
(``name.1.trace``, ``name.2.trace``, ...); ``--capture-range-end repeat``
records every block, the default (``stop``) only the first. Nested blocks
count as their outermost one.

Outside cutrace it raises ``ProfileError`` at once rather than record
nothing silently: cutrace's library must be what CUDA loads
(``CUDA_INJECTION64_PATH`` or ``LD_PRELOAD``, which ``cutrace run`` sets) and
the run must have been started with ``--capture-range cudaProfilerApi``.
"""

import ctypes
import functools
import os
import threading

_LIB = "libcutrace_injection"
_lock = threading.Lock()
_depth = 0


class ProfileError(RuntimeError):
    """``cutrace.profile()`` was used where it cannot record."""


def _mapped(fragment):
    """The path of the first library mapped into this process whose name
    contains ``fragment``, or None."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and fragment in os.path.basename(parts[5].strip()):
                    return parts[5].strip()
    except OSError:
        pass
    return None


def _check_environment():
    injected = [os.environ.get(v, "") for v in ("CUDA_INJECTION64_PATH", "LD_PRELOAD")]
    if not any(_LIB in v for v in injected) and _mapped(_LIB) is None:
        raise ProfileError(
            "cutrace.profile(): this program is not running under cutrace; start it with "
            "`cutrace run --capture-range cudaProfilerApi --capture-range-end repeat -- "
            "python3 ...`")
    if os.environ.get("CUTRACE_CAPTURE_RANGE", "") != "cudaProfilerApi":
        raise ProfileError(
            "cutrace.profile(): the run records %s, not the profile() blocks; start it "
            "with `cutrace run --capture-range cudaProfilerApi --capture-range-end repeat`"
            % ("everything" if not os.environ.get("CUTRACE_CAPTURE_RANGE")
               else "the capture range " + os.environ["CUTRACE_CAPTURE_RANGE"]))


class _Api(object):
    """cudaProfilerStart/Stop from the process's libcudart, else the driver's."""

    def __init__(self):
        cudart = _mapped("libcudart.so")
        if cudart:
            lib = ctypes.CDLL(cudart)
            self.start, self.stop = lib.cudaProfilerStart, lib.cudaProfilerStop
            self.what = "cudaProfiler"
        else:
            lib = ctypes.CDLL("libcuda.so.1")
            rc = lib.cuInit(0)  # loads cutrace's library, as the program's first CUDA call would
            if rc != 0:
                raise ProfileError("cutrace.profile(): cuInit failed (CUDA error %d)" % rc)
            self.start, self.stop = lib.cuProfilerStart, lib.cuProfilerStop
            self.what = "cuProfiler"
        self.start.restype = self.stop.restype = ctypes.c_int


_api = None


def _call(which):
    global _api
    if _api is None:
        _api = _Api()
    fn = _api.start if which == "Start" else _api.stop
    rc = fn()
    if rc != 0:
        raise ProfileError("cutrace.profile(): %s%s failed (CUDA error %d)"
                           % (_api.what, which, rc))
    if _mapped(_LIB) is None:
        raise ProfileError("cutrace.profile(): CUDA did not load cutrace's library "
                           "(CUDA_INJECTION64_PATH=%s)" % os.environ.get("CUDA_INJECTION64_PATH"))


class _Profile(object):
    def __enter__(self):
        global _depth
        with _lock:
            if _depth == 0:
                _check_environment()
                _call("Start")
            _depth += 1
        return self

    def __exit__(self, *exc):
        global _depth
        with _lock:
            _depth -= 1
            if _depth == 0:
                _call("Stop")
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with _Profile():
                return fn(*args, **kwargs)
        return wrapped


def profile(fn=None):
    """Records only what runs inside: a context manager (``with
    cutrace.profile():``) or a decorator (``@cutrace.profile`` or
    ``@cutrace.profile()``). The program must run under ``cutrace run
    --capture-range cudaProfilerApi`` (``--capture-range-end repeat`` to
    record every block, not only the first); elsewhere it raises
    ``ProfileError``. GPU work queued inside the block is waited for at its
    end (the capture's close synchronizes the closing thread's context), so
    the block's kernels are all in its chunk."""
    if fn is not None and callable(fn):
        return _Profile()(fn)
    return _Profile()
