"""Checks of one trace's reports against a testapp's truth (python3 stdlib only).

Pure functions: they take the parsed `cutrace <report> FILE --format json`
objects (docs/json-reports.md) and the truth a testapp wrote (testapps/README.md)
and return Check results. No process is started here, so validate_selftest.py
can drive every check with hand-made JSON on a machine without a GPU.

Tolerances, stated once:
  - counts and bytes: exact.
  - kernel durations vs CUDA events: the trace's avg within max(5 %, 20 us) of the
    event avg; its max at most the event max + that tolerance; its min at least
    the event min - that tolerance (events bracket the kernel on its stream).
    Where the truth gives `floor_ns` (the stream was idle before the start event,
    so the events also time the host's launch), the check is one-sided: avg and
    max at most the events' + tolerance, and min at least the kernel's floor.
  - gaps: each expected gap >= 98 % of the host sleep (GPU and host clocks are
    different clocks; 2 % is 1 ms at 50 ms), and exactly the expected number of them.
  - overlap: overlap_ns > 0 and >= the truth's fraction of copy_ns.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

DURATION_REL_TOL = 0.05
DURATION_ABS_TOL_NS = 20_000
GAP_REL_TOL = 0.02
DEFAULT_DOMAIN_NAMES = {"", "default", "(default)", "<default>", "nvtx default"}


@dataclass
class Check:
    name: str
    ok: bool | None  # None: could not be checked (reported as SKIP, never a failure)
    detail: str
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        return "SKIP" if self.ok is None else ("PASS" if self.ok else "FAIL")


def norm_domain(domain: Any) -> str:
    text = "" if domain is None else str(domain)
    return "default" if text.strip().lower() in DEFAULT_DOMAIN_NAMES else text


def _num(value: Any) -> int:
    """JSON numbers, or protobuf-JSON uint64 strings."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return int(value)
    return int(str(value))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.capitalize() for p in rest)


def stat(stats: dict, name: str) -> tuple[int, bool]:
    """A Statistics field by its proto name (or protobuf-JSON camelCase); (value, present)."""
    for key in (name, _camel(name)):
        if key in stats:
            return _num(stats[key]), True
    return 0, False


def invalid_total(stats: dict) -> int:
    invalid = stats.get("invalid", [])
    if isinstance(invalid, dict):  # {"kernel/zero_timestamp": 3} or {"kernel": {...}}
        total = 0
        for v in invalid.values():
            total += sum(_num(x) for x in v.values()) if isinstance(v, dict) else _num(v)
        return total
    if isinstance(invalid, list):
        return sum(_num(item.get("count", 0)) if isinstance(item, dict) else _num(item)
                   for item in invalid)
    return _num(invalid)


def info_file(info: dict) -> dict:
    """The one file object of `cutrace info FILE --format json`."""
    files = info.get("files")
    if isinstance(files, list) and files:
        return files[0]
    return info


def trace_pid(info: dict) -> int | None:
    header = info_file(info).get("header", {}) or {}
    for key in ("pid", "process_id"):
        if key in header:
            return _num(header[key])
    return None


def check_info(info: dict, label: str = "") -> list[Check]:
    """Clean shutdown, not truncated, zero drops, zero invalid records."""
    f = info_file(info)
    prefix = f"{label} " if label else ""
    checks = []
    clean = f.get("clean_shutdown")
    truncated = f.get("truncated")
    lost = _num(f.get("lost_bytes", 0))
    problems = f.get("problems") or []
    detail = f"clean_shutdown={clean} truncated={truncated} lost_bytes={lost}"
    if problems:
        detail += f"; problems: {'; '.join(str(p) for p in problems[:3])}"
    checks.append(Check(prefix + "clean shutdown",
                        clean is True and truncated is not True and lost == 0, detail,
                        {"clean_shutdown": clean, "truncated": truncated, "lost_bytes": lost,
                         "problems": len(problems)}))
    stats = f.get("statistics")
    if not isinstance(stats, dict):
        checks.append(Check(prefix + "zero drops", False, "info has no statistics object"))
        return checks
    cupti, has_cupti = stat(stats, "records_dropped_by_cupti")
    queue, has_queue = stat(stats, "records_dropped_queue_full")
    refused, _ = stat(stats, "buffers_refused")
    invalid = invalid_total(stats)
    absent = [n for n, present in (("records_dropped_by_cupti", has_cupti),
                                   ("records_dropped_queue_full", has_queue)) if not present]
    detail = (f"dropped_by_cupti={cupti} dropped_queue_full={queue} invalid={invalid} "
              f"buffers_refused={refused}")
    if absent:
        detail += f" (absent, read as 0: {', '.join(absent)})"
    if invalid and isinstance(stats.get("invalid"), list):
        # Which family and why, as cutrace info names them.
        detail += " (" + ", ".join(f"{i.get('kind')}/{i.get('reason')} {i.get('count')}"
                                   for i in stats["invalid"] if isinstance(i, dict)) + ")"
    checks.append(Check(prefix + "zero drops", cupti == 0 and queue == 0 and invalid == 0, detail,
                        {"records_dropped_by_cupti": cupti, "records_dropped_queue_full": queue,
                         "invalid": invalid, "buffers_refused": refused}))
    return checks


def info_events(info: dict) -> dict[str, int]:
    events = info_file(info).get("events", {}) or {}
    return {k: _num(v) for k, v in events.items()}


def kernel_rows(kernels_report: dict) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    for row in kernels_report.get("kernels", []):
        name = row.get("name", "")
        if name in rows:  # should not happen (one row per name); merge counts to be safe
            rows[name] = dict(rows[name], count=_num(rows[name]["count"]) + _num(row["count"]))
        else:
            rows[name] = row
    return rows


def check_kernels(truth_kernels: dict[str, int], kernels_report: dict,
                  info: dict | None = None) -> list[Check]:
    rows = kernel_rows(kernels_report)
    got = {name: _num(row.get("count")) for name, row in rows.items()}
    checks = []
    for name, want in sorted(truth_kernels.items()):
        have = got.get(name, 0)
        checks.append(Check(f"kernels {name}", have == want, f"{have} (truth {want})",
                            {"count": have, "truth": want}))
    extra = {n: c for n, c in got.items() if n not in truth_kernels and c}
    want_total = sum(truth_kernels.values())
    have_total = sum(got.values())
    detail = f"{have_total} (truth {want_total})"
    if extra:
        shown = ", ".join(f"{n} x{c}" for n, c in sorted(extra.items())[:5])
        detail += f"; kernels not in the truth: {shown}"
    checks.append(Check("kernels total", have_total == want_total and not extra, detail,
                        {"count": have_total, "truth": want_total}))
    if info is not None:
        events = info_events(info).get("kernels")
        # Counted launches have no timestamps: no kernel event, but a kernels row.
        untimed = _num((info_file(info).get("statistics") or {}).get("kernels_untimed", 0))
        if events is not None:
            checks.append(Check("kernels report == info events", events + untimed == have_total,
                                f"kernels report {have_total}, info events.kernels {events}"
                                + (f" + {untimed} untimed (counted)" if untimed else "")))
    return checks


def copy_rows(memcpy_report: dict) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    for row in memcpy_report.get("copies", []):
        kind = row.get("kind", "unknown")
        acc = rows.setdefault(kind, {"count": 0, "bytes": 0, "pageable_count": 0})
        for key in acc:
            acc[key] += _num(row.get(key, 0))
    return rows


def check_copies(truth_copies: dict[str, dict], truth_memsets: dict,
                 memcpy_report: dict) -> list[Check]:
    rows = copy_rows(memcpy_report)
    checks = []
    for kind in sorted(set(truth_copies) | {k for k in rows if k != "memset"}):
        want = truth_copies.get(kind, {"count": 0, "bytes": 0, "pageable_count": 0})
        have = rows.get(kind, {"count": 0, "bytes": 0, "pageable_count": 0})
        ok = all(_num(have[k]) == _num(want.get(k, 0)) for k in ("count", "bytes", "pageable_count"))
        checks.append(Check(
            f"copies {kind}", ok,
            f"count {have['count']} bytes {have['bytes']} pageable {have['pageable_count']} "
            f"(truth {want.get('count', 0)} / {want.get('bytes', 0)} / "
            f"{want.get('pageable_count', 0)})",
            {"count": have["count"], "bytes": have["bytes"],
             "pageable_count": have["pageable_count"]}))
    want_m = truth_memsets or {"count": 0, "bytes": 0}
    have_m = rows.get("memset", {"count": 0, "bytes": 0})
    ok = _num(have_m["count"]) == _num(want_m.get("count", 0)) and \
        _num(have_m["bytes"]) == _num(want_m.get("bytes", 0))
    checks.append(Check("memsets", ok,
                        f"count {have_m['count']} bytes {have_m['bytes']} "
                        f"(truth {want_m.get('count', 0)} / {want_m.get('bytes', 0)})",
                        {"count": have_m["count"], "bytes": have_m["bytes"]}))
    return checks


def nvtx_rows(nvtx_report: dict) -> dict[tuple[str, str, int], dict]:
    rows: dict[tuple[str, str, int], dict] = {}
    for row in nvtx_report.get("ranges", []):
        if row.get("gpu_range"):  # imported GPU annotations, not ranges the program opened
            continue
        key = (norm_domain(row.get("domain")), row.get("name", ""), _num(row.get("depth", 0)))
        acc = rows.setdefault(key, {"count": 0, "gpu_ops": 0})
        acc["count"] += _num(row.get("count", 0))
        acc["gpu_ops"] += _num(row.get("gpu_ops", 0))
    return rows


def check_nvtx(truth_rows: list[dict], nvtx_report: dict, exact_set: bool = True,
               gpu_ops: str = "exact") -> list[Check]:
    """Rows (domain, name, depth) -> count exact. gpu_ops: "exact", "at_least" or "ignore".
    With exact_set, rows the truth does not list are failures."""
    have = nvtx_rows(nvtx_report)
    want = {(norm_domain(r["domain"]), r["name"], _num(r["depth"])): r for r in truth_rows}
    checks = []
    bad_counts, bad_ops = [], []
    for key, row in sorted(want.items()):
        got = have.get(key)
        label = f"{key[0]}/{key[1]}@{key[2]}"
        if got is None:
            bad_counts.append(f"{label} missing")
            continue
        if got["count"] != _num(row["count"]):
            bad_counts.append(f"{label} count {got['count']} != {row['count']}")
        if gpu_ops != "ignore" and "gpu_ops" in row:
            w = _num(row["gpu_ops"])
            if (gpu_ops == "exact" and got["gpu_ops"] != w) or \
               (gpu_ops == "at_least" and got["gpu_ops"] < w):
                bad_ops.append(f"{label} gpu_ops {got['gpu_ops']} "
                               f"{'!=' if gpu_ops == 'exact' else '<'} {w}")
    extra = [f"{k[0]}/{k[1]}@{k[2]} x{v['count']}" for k, v in sorted(have.items())
             if k not in want]
    detail = f"{len(want)} rows expected, {len(have)} in trace"
    problems = bad_counts + ([f"not in truth: {', '.join(extra[:6])}"] if exact_set and extra else [])
    checks.append(Check("nvtx rows (domain, name, depth, count)", not problems,
                        detail + ("; " + "; ".join(problems) if problems else ""),
                        {"rows": len(have)}))
    if gpu_ops != "ignore" and any("gpu_ops" in r for r in truth_rows):
        checks.append(Check(f"nvtx gpu_ops ({gpu_ops})", not bad_ops and not bad_counts,
                            "; ".join(bad_ops) if bad_ops else
                            ("rows missing" if bad_counts else "all rows match")))
    return checks


def duration_tolerance(event_ns: int) -> int:
    return max(int(DURATION_REL_TOL * event_ns), DURATION_ABS_TOL_NS)


def check_timed_kernels(timed: list[dict], kernels_report: dict) -> list[Check]:
    rows = kernel_rows(kernels_report)
    checks = []
    for t in timed:
        name = t["name"]
        row = rows.get(name)
        if row is None:
            checks.append(Check(f"durations {name}", False, "kernel not in the trace"))
            continue
        ev_avg, ev_min, ev_max = (_num(t[k]) for k in ("event_avg_ns", "event_min_ns",
                                                         "event_max_ns"))
        avg, mn, mx = (_num(row.get(k)) for k in ("avg_ns", "min_ns", "max_ns"))
        tol = duration_tolerance(ev_avg)
        floor = _num(t.get("floor_ns", 0))
        if floor > 0:
            ok = (avg <= ev_avg + tol and mx <= ev_max + duration_tolerance(ev_max)
                  and mn >= floor)
        else:
            ok = (abs(avg - ev_avg) <= tol and mx <= ev_max + duration_tolerance(ev_max)
                  and mn >= ev_min - duration_tolerance(ev_min))
        checks.append(Check(
            f"durations {name}", ok,
            f"trace avg {avg} min {mn} max {mx} ns; events avg {ev_avg} min {ev_min} max {ev_max} "
            f"ns; tolerance {tol} ns; avg diff {avg - ev_avg:+d} ns"
            + (f"; floor {floor} ns (loose bracket)" if floor > 0 else ""),
            {"trace_avg_ns": avg, "event_avg_ns": ev_avg, "diff_ns": avg - ev_avg}))
    return checks


def all_gaps(gaps_report: dict) -> list[dict]:
    gaps = []
    for dev in gaps_report.get("devices", []):
        for g in dev.get("gaps", []):
            gaps.append(dict(g, device=dev.get("device", 0)))
    return gaps


def check_gaps(truth_gaps: dict, gaps_report: dict) -> list[Check]:
    sleep_ns = _num(truth_gaps["sleep_ns"])
    want = _num(truth_gaps["count"])
    floor = int(sleep_ns * (1 - GAP_REL_TOL))
    gaps = all_gaps(gaps_report)
    long_gaps = sorted(_num(g.get("duration_ns")) for g in gaps if _num(g.get("duration_ns")) >= floor)
    causes = sorted({str(g.get("cause", "")) for g in gaps
                     if _num(g.get("duration_ns")) >= floor})
    detail = (f"{len(long_gaps)} gaps >= {floor} ns (truth {want} sleeps of {sleep_ns} ns); "
              f"shortest {long_gaps[0] if long_gaps else '-'} ns, "
              f"longest {long_gaps[-1] if long_gaps else '-'} ns; causes {causes}; "
              f"{len(gaps)} gaps in all")
    return [Check("gaps >= sleep", len(long_gaps) == want, detail,
                  {"count": len(long_gaps), "min_ns": long_gaps[0] if long_gaps else 0,
                   "causes": causes})]


def check_overlap(truth_overlap: dict, overlap_report: dict) -> list[Check]:
    devs = overlap_report.get("devices", [])
    overlap = sum(_num(d.get("overlap_ns")) for d in devs)
    copy = sum(_num(d.get("copy_ns")) for d in devs)
    compute = sum(_num(d.get("compute_ns")) for d in devs)
    frac = overlap / copy if copy else 0.0
    floor = float(truth_overlap.get("min_fraction_of_copy", 0.0))
    return [Check("overlap", overlap > 0 and frac >= floor,
                  f"overlap {overlap} ns = {frac:.3f} of copy {copy} ns (floor {floor}); "
                  f"compute {compute} ns",
                  {"overlap_ns": overlap, "copy_ns": copy, "fraction": round(frac, 4)})]


def check_devices(devices_used: list[int], overlap_report: dict) -> list[Check]:
    busy = {_num(d.get("device")): _num(d.get("busy_ns")) for d in overlap_report.get("devices", [])}
    missing = [d for d in devices_used if busy.get(d, 0) <= 0]
    return [Check("devices busy", not missing,
                  f"busy ns by device {busy}; expected activity on {devices_used}"
                  + (f"; none on {missing}" if missing else ""), {"devices": sorted(busy)})]


def check_graph_csv(truth_graph: dict, csv_text: str | None) -> list[Check]:
    """Kernels with a graph id, from `cutrace export --format csv`, where it has such a column."""
    want = _num(truth_graph["graph_kernels"])
    if not csv_text:
        return [Check("graph kernels (graph ids)", None, "no CSV export available")]
    reader = csv.DictReader(io.StringIO(csv_text))
    fields = [f.lower() for f in (reader.fieldnames or [])]
    graph_col = next((f for f in reader.fieldnames or [] if f.lower() in ("graph_id", "graphid")), None)
    kind_col = next((f for f in reader.fieldnames or []
                     if f.lower() in ("kind", "type", "category", "event", "record")), None)
    if graph_col is None:
        return [Check("graph kernels (graph ids)", None, f"CSV has no graph_id column: {fields}")]
    count = 0
    for row in reader:
        if kind_col is not None and "kernel" not in str(row.get(kind_col, "")).lower():
            continue
        value = str(row.get(graph_col, "") or "").strip()
        if value not in ("", "0"):
            count += 1
    return [Check("graph kernels (graph ids)", count == want,
                  f"{count} kernels with a graph id (truth {want})", {"count": count})]


def check_truth(truth: dict, reports: dict) -> list[Check]:
    """Every check the truth asks for, over one trace's reports:
    reports = {info, kernels, memcpy, nvtx, overlap, gaps?, export_csv?}."""
    checks = []
    checks += check_kernels(truth.get("kernels", {}), reports["kernels"], reports.get("info"))
    checks += check_copies(truth.get("copies", {}), truth.get("memsets", {}), reports["memcpy"])
    checks += check_nvtx(truth.get("nvtx", []), reports["nvtx"])
    if truth.get("timed_kernels"):
        checks += check_timed_kernels(truth["timed_kernels"], reports["kernels"])
    if "gaps" in truth:
        checks += check_gaps(truth["gaps"], reports["gaps"])
    if "overlap" in truth:
        checks += check_overlap(truth["overlap"], reports["overlap"])
    if truth.get("devices_used"):
        checks += check_devices(truth["devices_used"], reports["overlap"])
    if "graph" in truth:
        checks += check_graph_csv(truth["graph"], reports.get("export_csv"))
    return checks


def check_child_trace(child: dict, info: dict | None, kernels_report: dict | None) -> list[Check]:
    """A forked child: an exec'd one must have its own complete trace with its kernels; one
    that did not exec may stay silent, or write a clean trace with no GPU work in it."""
    label = f"child {child.get('kind')} pid {child.get('pid')}"
    if child.get("kind") == "exec":
        if info is None:
            return [Check(label + " trace", False, "no trace written for the exec'd child")]
        checks = check_info(info, label)
        checks += [Check(f"{label} {c.name}", c.ok, c.detail, c.figures)
                   for c in check_kernels(child.get("kernels", {}), kernels_report or {}, info)]
        return checks
    if info is None:
        return [Check(label + " trace", True, "no trace (stayed silent)")]
    events = info_events(info)
    gpu = {k: events.get(k, 0) for k in ("kernels", "memcpys", "memsets")}
    checks = check_info(info, label)
    checks.append(Check(label + " no GPU work", not any(gpu.values()), f"events {gpu}"))
    return checks
