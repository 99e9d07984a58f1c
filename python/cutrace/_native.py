"""Where the package's native parts are, and running the ``cutrace`` CLI.

The wheel holds ``cutrace/bin/cutrace`` (the CLI, protobuf linked in
statically), ``cutrace/bin/cutrace-check-metrics`` and
``cutrace/lib/libcutrace_injection.so`` (with ``libsimdjson``, which the CLI
finds through its RUNPATH). Every number this package gives comes from that
CLI: the tables from its ``columns`` stream, reports from its JSON, so
Python and the command line can never disagree. Running it as a child
process also keeps a hostile or truncated trace file from taking the Python
process (a notebook's kernel) down with it.

``CUTRACE_CLI`` points the package at another ``cutrace`` binary (a build
tree's ``build/bin/cutrace``, for tests without a wheel).
"""

import os
import subprocess
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))


class TraceError(Exception):
    """A trace could not be read, or a report not made.

    The message is the CLI's one line (``PATH: REASON``), without its
    ``cutrace:`` prefix.
    """


def cli_path():
    """The path of the ``cutrace`` binary this package runs."""
    override = os.environ.get("CUTRACE_CLI")
    if override:
        return override
    return os.path.join(_HERE, "bin", "cutrace")


def library_path():
    """The path of ``libcutrace_injection.so`` in this package (it may be absent
    where the wheel was built without the CUDA toolkit)."""
    override = os.environ.get("CUTRACE_CLI")
    if override:
        return os.path.join(os.path.dirname(override), "..", "lib", "libcutrace_injection.so")
    return os.path.join(_HERE, "lib", "libcutrace_injection.so")


def _check_cli():
    path = cli_path()
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise TraceError(
            "the cutrace binary is missing at %s (install the wheel, or set CUTRACE_CLI "
            "to a build's bin/cutrace)" % path)
    return path


def error_line(stderr_text):
    """The CLI's error: its last line that is not a warning, without 'cutrace: '."""
    lines = [l for l in stderr_text.splitlines() if l.strip()]
    errors = [l for l in lines if ": warning: " not in l] or lines
    line = errors[-1] if errors else "cutrace failed without a message"
    return line[len("cutrace: "):] if line.startswith("cutrace: ") else line


def warnings_in(stderr_text):
    """The CLI's warning lines (a truncated file), without 'cutrace: '."""
    out = []
    for line in stderr_text.splitlines():
        if ": warning: " in line:
            out.append(line[len("cutrace: "):] if line.startswith("cutrace: ") else line)
    return out


def run_cli(args):
    """Runs ``cutrace ARGS`` and returns (stdout bytes, stderr text). Raises
    TraceError with the CLI's line on exit status 1, ValueError on 2 (usage)."""
    path = _check_cli()
    proc = subprocess.run([path] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode == 2:
        raise ValueError(error_line(stderr))
    if proc.returncode != 0:
        raise TraceError(error_line(stderr))
    return proc.stdout, stderr


def open_stream(args):
    """Starts ``cutrace ARGS`` with stdout as a pipe to read from and stderr
    into a temporary file (so that neither pipe can fill up and block it).
    Returns (process, stderr file)."""
    path = _check_cli()
    err = tempfile.TemporaryFile()
    proc = subprocess.Popen([path] + list(args), stdout=subprocess.PIPE, stderr=err,
                            bufsize=0)
    # A 1 MiB pipe instead of 64 KiB: 16 times fewer switches between the
    # two processes for the hundreds of MiB a large trace's columns take.
    try:
        import fcntl

        fcntl.fcntl(proc.stdout.fileno(), 1031, 1 << 20)  # F_SETPIPE_SZ
    except (ImportError, OSError):
        pass
    return proc, err
