// Kernel and device differences between two runs: see trace_diff.h.
#include "analysis/trace_diff.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/device_timeline.h"
#include "analysis/kernel_stats.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {

const char* DiffStatusName(DiffStatus status) {
  switch (status) {
    case DiffStatus::kAdded: return "added";
    case DiffStatus::kRemoved: return "removed";
    case DiffStatus::kFaster: return "faster";
    case DiffStatus::kSlower: return "slower";
    case DiffStatus::kUnchanged: break;
  }
  return "unchanged";
}

ReportParts DiffParts() { return {.kernels = true, .timeline = true}; }

// Only the totals are needed: list no gaps, so memory stays bounded.
GapOptions DiffGaps() { return {UINT64_MAX, 0}; }

DiffReport DiffTraces(TraceSet a, TraceSet b, double threshold) {
  std::unique_ptr<ReportEngine> ea = EngineOver(a, DiffParts(), DiffGaps());
  std::unique_ptr<ReportEngine> eb = EngineOver(b, DiffParts(), DiffGaps());
  return DiffReports(ea->Kernels({}), eb->Kernels({}), ea->Timeline(), eb->Timeline(), threshold);
}

bool DiffHasComm(const DiffReport& report) {
  for (const DeviceDiff& d : report.devices)
    if (d.comm_ns_a > 0 || d.comm_ns_b > 0) return true;
  return false;
}

namespace {

// ns / per, to the nearest nanosecond (halves up: 2 * rest >= per).
uint64_t Per(uint64_t ns, uint64_t per) {
  if (per <= 1) return ns;
  const uint64_t rest = ns % per;
  return ns / per + (rest >= per - per / 2 ? 1 : 0);
}

}  // namespace

DiffReport DiffReports(const KernelReport& ka, const KernelReport& kb, const TimelineReport& ta,
                       const TimelineReport& tb, double threshold, uint64_t per_a,
                       uint64_t per_b) {
  DiffReport report;
  report.per_a = std::max<uint64_t>(per_a, 1);
  report.per_b = std::max<uint64_t>(per_b, 1);
  report.total_ns_a = Per(ka.total_ns, report.per_a);
  report.total_ns_b = Per(kb.total_ns, report.per_b);
  std::map<std::string, KernelDiff> by_name;
  for (const KernelStats& k : ka.kernels) {
    KernelDiff& d = by_name[k.name];
    d.count_a = k.count;
    d.total_ns_a = Per(k.total_ns, report.per_a);
    d.timed_by_counters |= k.timed_by_counters;
  }
  for (const KernelStats& k : kb.kernels) {
    KernelDiff& d = by_name[k.name];
    d.count_b = k.count;
    d.total_ns_b = Per(k.total_ns, report.per_b);
    d.timed_by_counters |= k.timed_by_counters;
  }
  for (auto& [name, d] : by_name) {
    d.name = name;
    d.delta_ns = SignedDiff(d.total_ns_b, d.total_ns_a);  // clamped: totals may pass 2^63
    if (d.count_a == 0) {
      d.status = DiffStatus::kAdded;
    } else if (d.count_b == 0) {
      d.status = DiffStatus::kRemoved;
    } else {
      double change = std::fabs(static_cast<double>(d.delta_ns));
      if (change <= threshold * static_cast<double>(d.total_ns_a))
        d.status = DiffStatus::kUnchanged;
      else
        d.status = d.delta_ns > 0 ? DiffStatus::kSlower : DiffStatus::kFaster;
    }
    d.ratio = d.total_ns_a ? static_cast<double>(d.total_ns_b) / static_cast<double>(d.total_ns_a)
                           : 0.0;
    report.kernels.push_back(std::move(d));
  }
  std::sort(report.kernels.begin(), report.kernels.end(),
            [](const KernelDiff& x, const KernelDiff& y) {
              uint64_t ax = Magnitude(x.delta_ns);
              uint64_t ay = Magnitude(y.delta_ns);
              if (ax != ay) return ax > ay;
              return x.name < y.name;
            });

  std::map<uint32_t, DeviceDiff> devices;
  for (const bool side_a : {true, false})
    for (const DeviceOverlap& o : (side_a ? ta : tb).devices) {
      DeviceDiff& d = devices[o.device];
      for (const DeviceDiffField& f : kDeviceDiffFields)
        d.*(side_a ? f.a : f.b) = Per(o.*f.from, side_a ? report.per_a : report.per_b);
    }
  for (auto& [id, d] : devices) {
    d.device = id;
    report.devices.push_back(d);
  }
  return report;
}

}  // namespace cutrace::analysis
