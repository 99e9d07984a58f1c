#!/usr/bin/env python3
"""Checks cutrace's OpenMetrics text with prometheus_client's OpenMetrics
parser (Debian: python3-prometheus-client; pip: prometheus_client).

    openmetrics_check.py FILE...       (FILE "-" is stdin)

Each file must parse, end in "# EOF", type kernel durations as a summary
with quantiles 0.5 and 0.99 (no `percentile` label), name counter
families without "_total", and keep kernel `name` labels short: every one
is the `name` of exactly one cutrace_kernel_info series, whose full_name
differs from every other's. Exit 0 when all hold, 1 when one does not, 77
when prometheus_client is not installed.
"""
import sys

try:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
except ImportError:
    # scripts/install-deps.sh installs Debian's package, which a python3 that
    # is not Debian's (pyenv's, first on CI's PATH) does not see: it is pure
    # Python, so look there last before giving up.
    debian = "/usr/lib/python3/dist-packages"
    if debian not in sys.path:
        sys.path.append(debian)
    try:
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    except ImportError:
        print("skipped: prometheus_client is not installed (python3-prometheus-client)")
        sys.exit(77)


def check(label, text):
    problems = []
    if not text.endswith("# EOF\n"):
        problems.append("does not end in '# EOF'")
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser's own error, e.g. "Clashing name"
        return [f"prometheus_client cannot parse it: {e}"]
    by_name = {f.name: f for f in families}
    for f in families:
        if f.type == "counter" and f.name.endswith("_total"):
            problems.append(f"counter family {f.name} named with _total")
        for s in f.samples:
            if "percentile" in s.labels:
                problems.append(f"{s.name} has a percentile label")
    info = by_name.get("cutrace_kernel_info")
    durations = by_name.get("cutrace_kernel_duration_seconds")
    if by_name.get("cutrace_kernel_calls") is None:
        return problems  # no kernels: nothing more to check
    if durations is None or durations.type != "summary":
        problems.append("cutrace_kernel_duration_seconds is not a summary")
    else:
        quantiles = {s.labels.get("quantile") for s in durations.samples
                     if s.name == "cutrace_kernel_duration_seconds"}
        if quantiles != {"0.5", "0.99"}:
            problems.append(f"quantiles {sorted(quantiles)}, want 0.5 and 0.99")
    if info is None:
        problems.append("no cutrace_kernel_info")
        return problems
    full_of = {}
    for s in info.samples:
        if s.labels["name"] in full_of:
            problems.append(f"two info series for name {s.labels['name']!r}")
        full_of[s.labels["name"]] = s.labels["full_name"]
    if len(set(full_of.values())) != len(full_of):
        problems.append("two short names share a full name")
    for s in by_name["cutrace_kernel_calls"].samples:
        if s.labels["name"] not in full_of:
            problems.append(f"kernel name label {s.labels['name']!r} has no info series")
    return problems


def main():
    failed = False
    for path in sys.argv[1:]:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
        for p in check(path, text):
            print(f"FAIL: {path}: {p}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
