// Per-device utilization in time bins: see timeline_bins.h.
#include "analysis/timeline_bins.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "analysis/intervals.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {
namespace {

// ceil(a / b) for b > 0, without the a + b - 1 that wraps near 2^64.
uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

// Adds the length of each merged interval's part in each bin to `covered`.
// Bin ends saturate: on an axis that reaches 2^64 - 1 the last bin's end
// would wrap to the start of time.
void SpreadOverBins(const std::vector<Interval>& merged, uint64_t start, uint64_t bin_ns,
            std::vector<uint64_t>* covered) {
  for (const Interval& iv : merged) {
    uint64_t s = iv.start;
    while (s < iv.end) {
      size_t bin = static_cast<size_t>((s - start) / bin_ns);
      uint64_t bin_end = SatAdd(start, SatMul(bin + 1, bin_ns));
      uint64_t e = std::min(iv.end, bin_end);
      (*covered)[bin] += e - s;
      s = e;
    }
  }
}

}  // namespace

TimelineBins ComputeTimelineBins(TraceSet traces, size_t bins, const Window* window,
                                 const CommClassifier* comm) {
  struct Ops {
    std::vector<Interval> kernels, copies, comm;
  };
  const CommClassifier& classes = comm ? *comm : *BuiltinComm();
  std::map<uint32_t, Ops> devices;
  TimelineBins out;
  uint64_t first = std::numeric_limits<uint64_t>::max(), last = 0;
  auto add = [&](std::vector<Interval>& to, uint64_t s, uint64_t e) {
    e = SafeEnd(s, e);
    to.push_back({s, e});
    first = std::min(first, s);
    last = std::max(last, e);
  };
  for (const TraceData* t : traces) {
    std::unordered_map<uint32_t, bool> is_comm;  // by name id: one match per name
    for (const KernelRecord& k : t->records.kernels) {
      auto [it, fresh] = is_comm.try_emplace(k.name_id, false);
      if (fresh) it->second = classes.IsComm(t->strings.Display(k.name_id));
      Ops& ops = devices[k.device_id];
      add(it->second ? ops.comm : ops.kernels, k.start_ns, k.end_ns);
    }
    for (const MemcpyRecord& m : t->records.memcpys)
      add(devices[m.device_id].copies, m.start_ns, m.end_ns);
    for (const MemsetRecord& m : t->records.memsets)
      add(devices[m.device_id].copies, m.start_ns, m.end_ns);
  }
  if (window && window->active) {
    // Only the window: its parts cut every interval, and the bins span it.
    std::vector<Interval> parts;
    for (const TimeSpan& p : window->parts) parts.push_back({p.start, p.end});
    // A device with no work inside stays: idle through the window, as the
    // device sweep (timeline_window.cc) reports it.
    for (auto& [id, ops] : devices) {
      ops.kernels = Intersect(Merge(std::move(ops.kernels)), parts);
      ops.copies = Intersect(Merge(std::move(ops.copies)), parts);
      ops.comm = Intersect(Merge(std::move(ops.comm)), parts);
    }
    first = window->start_ns();
    last = window->end_ns();
  }
  if (devices.empty() || bins == 0) return out;
  if (bins > kMaxTimelineCells / devices.size()) {
    bins = std::max<size_t>(1, kMaxTimelineCells / devices.size());
    out.capped = true;
  }
  out.start_ns = first;
  out.end_ns = last;
  const uint64_t span = last - first;
  out.bin_ns = std::max<uint64_t>(1, CeilDiv(span, bins));
  out.bins = span == 0 ? 1 : static_cast<size_t>(CeilDiv(span, out.bin_ns));

  for (auto& [id, ops] : devices) {
    std::vector<Interval> compute = Merge(std::move(ops.kernels));
    std::vector<Interval> copy = Merge(std::move(ops.copies));
    std::vector<Interval> comm_merged = Merge(std::move(ops.comm));
    std::vector<Interval> busy = Unite(Unite(compute, copy), comm_merged);
    std::vector<uint64_t> c(out.bins, 0), m(out.bins, 0), b(out.bins, 0), x(out.bins, 0);
    SpreadOverBins(compute, first, out.bin_ns, &c);
    SpreadOverBins(copy, first, out.bin_ns, &m);
    SpreadOverBins(busy, first, out.bin_ns, &b);
    SpreadOverBins(comm_merged, first, out.bin_ns, &x);
    DeviceBins d;
    d.device = id;
    d.compute_ns = Measure(compute);
    d.copy_ns = Measure(copy);
    d.busy_ns = Measure(busy);
    d.comm_ns = Measure(comm_merged);
    for (size_t i = 0; i < out.bins; ++i) {
      uint64_t bin_start = first + i * out.bin_ns;  // i < bins: at most `last`
      uint64_t len = std::min(out.bin_ns, last - bin_start);
      // A zero-length span (only instants) is one bin of nothing: all idle.
      double denom = len ? static_cast<double>(len) : 1.0;
      d.compute.push_back(static_cast<double>(c[i]) / denom);
      d.copy.push_back(static_cast<double>(m[i]) / denom);
      d.idle.push_back(1.0 - static_cast<double>(b[i]) / denom);
      d.comm.push_back(static_cast<double>(x[i]) / denom);
    }
    out.devices.push_back(std::move(d));
  }
  return out;
}

}  // namespace cutrace::analysis
