"""The running list of PASS/FAIL checks of a GPU script that checks one thing
after another (capture.py, modes.py, python_pkg.py): each check prints its
line as it is made, and the script writes `checks` into its --json-out file
and counts the failures at the end. One list per process."""

checks: list[dict] = []


def check(name: str, ok: bool, detail: str = "") -> bool:
    checks.append({"name": name, "verdict": "PASS" if ok else "FAIL", "detail": detail})
    print(f"{'PASS' if ok else 'FAIL'}  {name}{': ' + detail if detail else ''}", flush=True)
    return ok
