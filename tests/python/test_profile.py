"""cutrace.profile() where it cannot record (the GPU suite's python step,
tests/gpu/python_pkg.py, checks that it records exactly its steps): outside
cutrace, and under cutrace without a cudaProfilerApi capture range, it
raises ProfileError saying how to start the program, before touching CUDA."""

import pytest

import cutrace

TOOL_VARS = ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "CUTRACE_CAPTURE_RANGE")


@pytest.fixture
def bare_env(monkeypatch):
    for var in TOOL_VARS:
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_outside_cutrace_the_context_manager_raises(bare_env):
    with pytest.raises(cutrace.ProfileError, match="not running under cutrace.*cutrace run "
                                                   "--capture-range cudaProfilerApi"):
        with cutrace.profile():
            pass


def test_outside_cutrace_the_decorator_raises(bare_env):
    ran = []

    @cutrace.profile
    def step():
        ran.append(1)

    @cutrace.profile()
    def other():
        ran.append(2)

    for fn in (step, other):
        with pytest.raises(cutrace.ProfileError):
            fn()
    assert ran == []  # the body never ran untraced by mistake


def test_under_cutrace_without_a_capture_range(bare_env):
    bare_env.setenv("CUDA_INJECTION64_PATH", "/opt/x/lib/libcutrace_injection.so")
    with pytest.raises(cutrace.ProfileError, match="records everything.*--capture-range "
                                                   "cudaProfilerApi"):
        with cutrace.profile():
            pass
    bare_env.setenv("CUTRACE_CAPTURE_RANGE", "nvtx:step")
    with pytest.raises(cutrace.ProfileError, match="capture range nvtx:step"):
        with cutrace.profile():
            pass
