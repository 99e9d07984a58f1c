// A SummaryReport as text, every figure the streamed and the loaded
// summaries must agree on (analysis_stream_summary_test.cc,
// analysis_stream_hints_test.cc): two reports are the same when their dumps are.
#pragma once

#include <string>

#include "analysis/summary.h"

namespace cutrace::analysis {

inline std::string Dump(const SummaryReport& s) {
  std::string out;
  auto line = [&](auto... parts) {
    ((out += std::to_string(parts), out += ' '), ...);
    out += '\n';
  };
  for (const TraceOverview& o : s.traces) {
    out += o.path + '\n';
    line(o.kernels, o.memcpys, o.memsets, o.ranges, o.api_calls, o.syncs, o.first_ns, o.last_ns);
  }
  for (const KernelStats& k : s.kernels.kernels) {
    out += k.name + ' ';
    line(k.count, k.total_ns, k.min_ns, k.max_ns, k.p50_ns, k.p99_ns, k.stddev_ns, k.pct);
  }
  for (const CopyStats& c : s.copies.copies) {
    out += c.kind + ' ';
    line(c.count, c.bytes, c.total_ns, c.pageable_count);
  }
  for (size_t d = 0; d < s.timeline.devices.size(); ++d) {
    const DeviceOverlap& o = s.timeline.devices[d];
    line(o.device, o.first_ns, o.last_ns, o.busy_ns, o.compute_ns, o.copy_ns, o.overlap_ns, o.ops,
         s.timeline.gaps[d].gap_count, s.timeline.gaps[d].idle_ns);
    for (const Gap& g : s.timeline.gaps[d].gaps) {
      out += s.timeline.Label(g.before_label) + ' ' + s.timeline.Label(g.after_label) + ' ' +
             GapCauseName(g.cause) + ' ';
      line(g.start_ns, g.end_ns);
    }
  }
  for (const NvtxRow& r : s.nvtx.ranges) {
    out += r.domain + ' ' + r.name + ' ';
    line(r.depth, r.count, r.cpu_total_ns, r.gpu_total_ns, r.gpu_ops, r.gpu_ranges);
  }
  for (const ApiStats& a : s.api.api_calls) {
    out += a.name + ' ';
    line(a.count, a.total_ns, a.min_ns, a.max_ns, a.errors);
  }
  for (const KernelImbalance& k : s.imbalance) {
    out += k.name + ' ' + k.slowest_path + ' ';
    line(k.slowest_ns, k.median_ns);
  }
  return out;
}

}  // namespace cutrace::analysis
