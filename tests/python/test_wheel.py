"""What the installed wheel holds and needs: the CLI, its metric checker and
the injection library, with every shared library they need beyond the C/C++
runtime inside the package (the GPU machine has no Debian packages), and a
py3-none tag (no CPython ABI: it installs into the target's own Python)."""

import os
import subprocess

import pytest

import cutrace

PKG = os.path.dirname(os.path.abspath(cutrace.__file__))
SYSTEM = ("linux-vdso", "libc.so", "libm.so", "libstdc++", "libgcc_s", "ld-linux", "libz.so",
          "libpthread", "libdl", "librt")


def needed(path):
    out = subprocess.run(["ldd", path], check=True, stdout=subprocess.PIPE).stdout.decode()
    return [line.split() for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("rel", ["bin/cutrace", "bin/cutrace-check-metrics",
                                 "lib/libcutrace_injection.so"])
def test_runs_without_system_packages(rel):
    path = os.path.join(PKG, rel)
    if rel != "bin/cutrace" and not os.path.exists(path):
        pytest.skip("built without the CUDA toolkit")
    assert os.path.exists(path)
    for words in needed(path):
        assert "not found" not in words, (rel, words)
        name = words[0]
        if name.startswith(SYSTEM) or "=>" not in words:
            continue
        # Anything else must come from the package itself (libsimdjson).
        where = os.path.realpath(words[2])
        assert where.startswith(os.path.realpath(PKG)), (rel, name, where)


def test_cli_finds_its_libraries_beside_itself():
    out = subprocess.run(["readelf", "-d", os.path.join(PKG, "bin", "cutrace")], check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    assert "$ORIGIN/../lib" in out
    assert os.path.exists(os.path.join(PKG, "lib", "libsimdjson.so.14")) or \
        "libsimdjson" not in out


def test_wheel_tag_is_py3_none():
    dist = os.path.dirname(PKG)
    infos = [d for d in os.listdir(dist) if d.startswith("cutrace-") and d.endswith(".dist-info")]
    assert len(infos) == 1
    wheel = open(os.path.join(dist, infos[0], "WHEEL")).read()
    assert "Tag: py3-none-linux_x86_64" in wheel
