#!/usr/bin/env python3
"""The Python package on the GPU (issue 24): execute, then validate.

  1. Install the carried wheel (scripts/python-test.sh's build/wheel, carried
     in the bundle's wheel/) into a venv over the machine's own Python
     (--system-site-packages, so its PyTorch is there): `pip install
     --no-deps --no-index`, nothing from the network.
  2. Print where PyTorch's NVIDIA wheels keep libcupti (find).
  3. `cutrace run -- python3 train.py` with the CUDA toolkit hidden: a
     private mount namespace (unshare -m) with an empty directory over
     /usr/local/cuda, and LD_LIBRARY_PATH without it. The program reads its
     own /proc/self/maps at the end: every libcupti mapped must come from an
     nvidia wheel (nvidia/cu13/lib or nvidia/cuda_cupti/lib), none from the
     toolkit, and the trace must hold the steps' kernels and NVTX ranges
     (NVTX goes through NVTX_INJECTION64_PATH, which `cutrace run` points at
     the libcupti its search finds: the wheel's).
  4. `cutrace.profile()` around steps 10-19 of 30 under `cutrace run
     --capture-range cudaProfilerApi --capture-range-end repeat`: one chunk
     whose NVTX step ranges are exactly step_10 .. step_19 and whose kernels,
     attributed to steps by their launch calls (correlation ids, with
     cutrace.load), are exactly those steps', each step's kernels by name
     equal to the same step's in a full run.
  5. Outside cutrace, cutrace.profile() raises ProfileError.

  python_pkg.py --wheel WHEEL --work DIR [--json-out F]
  python_pkg.py --workload N [--profile]   (train.py: N steps)

Exit 0 pass, 1 fail, 77 skipped (no GPU or no PyTorch).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import validate as v  # noqa: E402
from checklist import check, checks  # noqa: E402
from torch_operands import gpu_operands  # noqa: E402


def workload(steps, profile):
    torch, a, b, c = gpu_operands()
    import cutrace

    def step(i):
        torch.cuda.nvtx.range_push(f"step_{i}")
        y = torch.relu(a @ b + c)
        y.sum()
        torch.cuda.nvtx.range_pop()

    for _ in range(3):  # warm-up: cuBLAS and the allocator start here
        step("warmup")
    torch.cuda.synchronize()
    i = 0
    while i < steps:
        if profile and i == 10:
            with cutrace.profile():
                for j in range(10, 20):
                    step(j)
            i = 20
            continue
        step(i)
        i += 1
    torch.cuda.synchronize()
    cupti = sorted({line.split()[-1] for line in open("/proc/self/maps")
                    if "libcupti.so" in line.split()[-1]})
    print("MAPPED-CUPTI " + json.dumps(cupti), flush=True)


def per_step_kernels(trace_paths):
    """({step name: Counter(kernel name)}, kernels outside every step, the
    kernels table) from traces: a kernel belongs to the NVTX range step_N
    on whose thread its launch call began inside the range; where the trace
    has no launch call for it (a captured chunk held no API records on the
    H200 on 2026-12-03), to the last step that began before the kernel did
    (the steps run one after another on one stream). numpy only
    (backend="numpy"): the machine's Python may have no pandas."""
    import cutrace

    t = cutrace.load(*trace_paths, backend="numpy")
    r, k, api = t.ranges, t.kernels, t.api_calls
    range_names = r["name_categories"][r["name"]] if len(r["name"]) else []
    steps = [(int(f), int(s), int(e), int(th), str(n))
             for f, s, e, th, n in zip(r["file"], r["start_ns"], r["end_ns"], r["thread_id"],
                                      range_names) if str(n).startswith("step_")]
    call = {(int(f), int(c)): (int(s), int(th))
            for f, c, s, th in zip(api["file"], api["correlation_id"], api["start_ns"],
                                   api["thread_id"])}
    kernel_names = k["name_categories"][k["name"]] if len(k["name"]) else []
    out = {name: Counter() for _, _, _, _, name in steps}
    outside = 0
    for f, c, start, name in zip(k["file"], k["correlation_id"], k["start_ns"], kernel_names):
        at = call.get((int(f), int(c)))
        owner = None
        if at is not None:
            for sf, s, e, th, step in steps:
                if sf == int(f) and th == at[1] and s <= at[0] <= e:
                    owner = step
                    break
        elif not call:
            begun = [(s, step) for sf, s, _, _, step in steps if sf == int(f) and s <= int(start)]
            owner = max(begun)[1] if begun else None
        if owner is None:
            outside += 1
        else:
            out[owner][str(name)] += 1
    return out, outside, k


def install(args, work):
    """Installs the wheel into a venv over the machine's Python; returns
    (python, cutrace command, how) or (None, None, why not). Ubuntu's Python
    may lack ensurepip (python3-venv): then a venv without pip, filled by
    the machine's pip with --python."""
    venv = work / "venv"
    tries = [
        ([args.python, "-m", "venv", "--system-site-packages", str(venv)],
         [str(venv / "bin" / "python3"), "-m", "pip"]),
        ([args.python, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
         [args.python, "-m", "pip", "--python", str(venv / "bin" / "python3")]),
    ]
    log = []
    for make, pip in tries:
        shutil.rmtree(venv, ignore_errors=True)
        r = subprocess.run(make, capture_output=True, text=True)
        if r.returncode != 0:
            log.append(" ".join(make[2:4]) + ": " + r.stderr.strip()[-200:])
            continue
        r = subprocess.run(pip + ["install", "--no-deps", "--no-index", args.wheel],
                           capture_output=True, text=True)
        if r.returncode != 0:
            log.append(" ".join(pip) + ": " + (r.stdout + r.stderr).strip()[-300:])
            continue
        py = str(venv / "bin" / "python3")
        if subprocess.run([py, "-c", "import torch"], capture_output=True).returncode == 0:
            return py, str(venv / "bin" / "cutrace"), " ".join(pip[:3]) + " install --no-deps --no-index"
        log.append("the venv does not see the machine's torch (python3 is itself a venv's?)")
        break
    # PyTorch lives where a venv over python3 cannot see it: install into a
    # folder on PYTHONPATH of the machine's own python3 instead.
    site = work / "site"
    r = subprocess.run([args.python, "-m", "pip", "install", "--no-deps", "--no-index",
                        "--target", str(site), args.wheel], capture_output=True, text=True)
    if r.returncode == 0:
        os.environ["PYTHONPATH"] = str(site) + ":" + os.environ.get("PYTHONPATH", "")
        return (shutil.which(args.python) or args.python, str(site / "bin" / "cutrace"),
                "pip install --no-deps --no-index --target (" + " | ".join(log) + ")")
    log.append("--target: " + (r.stdout + r.stderr).strip()[-300:])
    return None, None, " | ".join(log)


def hidden_toolkit_prefix(work):
    """The command prefix that runs a program with /usr/local/cuda hidden, or
    None where this machine does not allow a private mount namespace."""
    empty = work / "empty"
    empty.mkdir(parents=True, exist_ok=True)
    prefix = ["unshare", "-m", "--propagation", "private", "sh", "-c",
              f'mount --bind "{empty}" /usr/local/cuda && exec "$@"', "sh"]
    r = subprocess.run(prefix + ["ls", "/usr/local/cuda"], capture_output=True, text=True)
    if r.returncode != 0 or r.stdout.strip():
        print(f"cannot hide the toolkit here: {r.stderr.strip()[:200]}")
        return None
    return prefix


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--wheel", default=None)
    p.add_argument("--work", default="/tmp/cutrace-validate/python_pkg")
    p.add_argument("--json-out", default=None)
    p.add_argument("--python", default="python3", help="the machine's Python (with PyTorch)")
    p.add_argument("--workload", type=int, default=None)
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    if args.workload is not None:
        workload(args.workload, args.profile)
        return 0
    if not v.has_gpu():
        print("skipped: no GPU")
        return 77
    r = subprocess.run([args.python, "-c", "import torch, sys; print(torch.__version__, "
                        "torch.version.cuda, sys.version.split()[0], torch.__file__)"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("skipped: no PyTorch in " + args.python)
        return 77
    print("machine python: " + r.stdout.strip())
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    # 2. Where PyTorch's NVIDIA wheels keep libcupti.
    found = subprocess.run("timeout 60 find / -xdev -path '*nvidia*cupti*' -name 'libcupti.so*' "
                           "2>/dev/null | head -20", shell=True, capture_output=True, text=True)
    print("libcupti of NVIDIA's wheels on this machine:\n  " +
          "\n  ".join(found.stdout.split() or ["(none)"]))

    # 1. The wheel into a venv over the machine's Python.
    py, cutrace_cmd, how = install(args, work)
    if not check("pip install --no-deps --no-index the wheel", py is not None, how):
        return finish(args)
    env = v.clean_env()
    env["LD_LIBRARY_PATH"] = ":".join(d for d in env.get("LD_LIBRARY_PATH", "").split(":")
                                     if d and "/usr/local/cuda" not in d)
    env["PATH"] = str(Path(cutrace_cmd).parent) + ":" + env.get("PATH", "")
    me = os.path.abspath(__file__)

    # 3. A plain run with the toolkit hidden.
    hide = hidden_toolkit_prefix(work)
    full = work / "full"
    cmd = [cutrace_cmd, "run", "--output", str(full) + "/", "--no-summary", "--",
           py, me, "--workload", "30"]
    r = subprocess.run((hide or []) + cmd, capture_output=True, text=True, env=env, timeout=300)
    print(r.stderr.strip()[-600:])
    mapped = []
    for line in r.stdout.splitlines():
        if line.startswith("MAPPED-CUPTI "):
            mapped = json.loads(line[len("MAPPED-CUPTI "):])
    check("cutrace run -- python3 train.py exits 0", r.returncode == 0, f"exit {r.returncode}")
    check("toolkit hidden (private mount over /usr/local/cuda)", hide is not None,
          "ls /usr/local/cuda: empty" if hide else
          "unshare -m refused: run as root in a machine that allows mount namespaces")
    from_wheel = [m for m in mapped if "/nvidia/" in m and "/lib/libcupti.so" in m]
    check("the libcupti loaded is the wheel's, and only it", bool(mapped) and
          from_wheel == mapped and not any(m.startswith("/usr/local/cuda") for m in mapped),
          f"mapped: {mapped}")
    full_traces = sorted(full.glob("*.trace"))
    if not check("one trace written", len(full_traces) == 1, str(full_traces)):
        return finish(args)
    sites = list((work / "venv" / "lib").glob("python3*/site-packages")) + [work / "site"]
    sys.path[:0] = [str(p) for p in sites if (p / "cutrace").is_dir()]
    steps, outside, t = per_step_kernels(full_traces)
    names = sorted(s for s in steps if s != "step_warmup")
    check("NVTX ranges recorded through the wheel's libcupti: step_0 .. step_29",
          names == sorted(f"step_{i}" for i in range(30)), f"{len(names)} step ranges")
    per = [steps[f"step_{i}"] for i in range(30) if f"step_{i}" in steps]
    check("every step launched the same kernels", len(per) == 30 and all(c == per[0] for c in per)
          and sum(per[0].values()) > 0, f"step_0: {dict(per[0]) if per else {}}")
    cli = json.loads(subprocess.run([cutrace_cmd, "kernels", str(full_traces[0]), "--format",
                                     "json"], capture_output=True, text=True).stdout)
    check("cutrace.load's kernels equal `cutrace kernels`",
          len(t["start_ns"]) == sum(k["count"] for k in cli["kernels"]) and
          int(t["duration_ns"].sum()) == sum(k["total_ns"] for k in cli["kernels"]),
          f"{len(t['start_ns'])} kernels, {outside} outside the steps (warm-up, sums)")

    # 4. cutrace.profile() around steps 10-19.
    cap = work / "profile"
    cmd = [cutrace_cmd, "run", "--output", str(cap) + "/", "--no-summary",
           "--capture-range", "cudaProfilerApi", "--capture-range-end", "repeat", "--",
           py, me, "--workload", "30", "--profile"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    print(r.stderr.strip()[-600:])
    check("cutrace run --capture-range cudaProfilerApi with cutrace.profile() exits 0",
          r.returncode == 0, f"exit {r.returncode}")
    chunks = sorted(cap.glob("*.trace"))
    if check("one chunk", len(chunks) == 1, str([c.name for c in chunks])) and per:
        got, outside_cap, _ = per_step_kernels(chunks)
        check("the chunk's NVTX steps are exactly step_10 .. step_19",
              sorted(got) == sorted(f"step_{i}" for i in range(10, 20)), str(sorted(got)))
        check("each recorded step holds exactly that step's kernels (as in the full run)",
              all(got.get(f"step_{i}") == steps.get(f"step_{i}") for i in range(10, 20)),
              f"step_10: {dict(got.get('step_10', {}))}")
        check("no kernel outside those steps", outside_cap == 0, f"{outside_cap} outside")
        want = Counter()
        for i in range(10, 20):
            want.update(steps.get(f"step_{i}", Counter()))
        have = Counter()
        for c in got.values():
            have.update(c)
        check("the chunk's kernels are steps 10-19's, name by name", have == want and
              sum(want.values()) > 0, f"{sum(have.values())} kernels, want {sum(want.values())}")
        print(f"FIGURE profile(): {len(got)} steps, "
              f"{sum(sum(c.values()) for c in got.values())} kernels in the chunk")

    # 5. Outside cutrace.
    r = subprocess.run([py, "-c", "import cutrace\ntry:\n with cutrace.profile(): pass\n"
                        "except cutrace.ProfileError as e: print('ERR', e)"],
                       capture_output=True, text=True, env=env)
    check("outside cutrace, profile() raises ProfileError",
          r.stdout.startswith("ERR ") and "not running under cutrace" in r.stdout,
          r.stdout.strip()[:200])
    return finish(args)


def finish(args):
    failed = [c for c in checks if c["verdict"] == "FAIL"]
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"checks": checks}, indent=1))
    print(f"{len(checks) - len(failed)} of {len(checks)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
