// The summary report (summary.h) of trace files that are never loaded: each
// file is mapped and read packet by packet (collector/trace_pass.h), every
// batch goes into one ReportEngine (report_engine.h) and is dropped, and the
// time-ordered reports release events as soon as no packet still to come can
// hold an earlier one (collector PacketStartHints()). Memory is bounded by
// distinct names and by the disorder between packets, not by events; several
// files are read side by side, always advancing the one whose next packet
// starts earliest, so their aggregate is one timeline as in ComputeSummary().
//
// The result is ComputeSummary() of the same files loaded with LoadTrace()
// (tests/unit/analysis_stream_summary_test.cc compares them).
//
// Not thread-safe; one StreamedTrace per file, used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "analysis/kernel_metrics.h"
#include "analysis/region.h"
#include "analysis/summary.h"
#include "collector/status.h"
#include "collector/trace_data.h"
#include "collector/trace_reader.h"

namespace cutrace::analysis {

class StreamedTrace {
 public:
  // Maps the file, checks its header and reads the start hints (a framing
  // pass). Errors are LoadTrace()'s. info() then holds the header and the
  // read report of the framing (truncation); a summary fills the rest.
  static StatusOr<std::unique_ptr<StreamedTrace>> Open(const std::string& path);
  // The same over bytes that outlive it.
  static StatusOr<std::unique_ptr<StreamedTrace>> FromBytes(std::string_view bytes,
                                                           std::string name);

  // Header, devices, strings, statistics, end, warnings and read report, as
  // LoadTrace() gives them, but no records; complete after a summary.
  const TraceData& info() const { return info_; }
  TraceData& info() { return info_; }
  std::string_view bytes() const { return bytes_; }
  // Per packet: earliest start of its events (trace_pass.h), and the
  // smallest of those from each packet on (suffix minima; one past the end
  // holds UINT64_MAX).
  const std::vector<uint64_t>& future_min() const { return future_min_; }
  // The earliest start of any event of the file, from those hints:
  // UINT64_MAX when it has none, 0 when some packet's is unknown.
  uint64_t start_hint() const { return future_min_.empty() ? UINT64_MAX : future_min_[0]; }

 private:
  StreamedTrace() = default;
  Status Init(std::string name);

  std::unique_ptr<FileBytes> file_;
  std::string_view bytes_;
  TraceData info_;
  std::vector<uint64_t> future_min_;
};

// What streaming cost, for benchmarks.
struct StreamStats {
  uint64_t events = 0;      // records decoded
  uint64_t batches = 0;
  size_t peak_held = 0;     // most events held for time order at once
};

// One pass of `traces` through a new engine computing `parts`: the files'
// packets in time order (each file is the engine's file of its index in
// `traces`), then Finish(). Every report command is such a pass. A batch
// that breaks halfway through the fast path (never in a file cutrace wrote)
// makes the pass start again over the loaded files. Fills each trace's
// info(); errors are the file's (it changed since it was opened).
// With `window` (analysis/region.h), the reports cover the window only;
// `second` adds a device sweep over another window (ReportEngine::AddSweep()).
StatusOr<std::unique_ptr<ReportEngine>> StreamTraces(std::span<StreamedTrace* const> traces,
                                                     const ReportParts& parts,
                                                     const GapOptions& gaps = {},
                                                     StreamStats* stats = nullptr,
                                                     std::shared_ptr<const Window> window = nullptr,
                                                     std::shared_ptr<const Window> second = nullptr);

// The window of `spec` over `traces` (analysis/region.h), from three passes
// that each decode one kind of record (analysis/region_stream.cc). Without
// an active spec, only the first pass runs: the steady-state candidate and
// the trace start. Errors: the file's, or why the spec leaves nothing.
// With `steady` and no active spec, when the first pass finds a
// steady-state candidate, *steady receives the window of
// SteadySpec(candidate) (or why it has none), its first pass taken from
// this one's (WindowResolver::ReplayRanges()) instead of read again.
// `first`: a resolver whose kept ranges stand in for the first pass.
StatusOr<Window> ResolveStreamedWindow(std::span<StreamedTrace* const> traces,
                                       const RegionSpec& spec,
                                       StatusOr<Window>* steady = nullptr,
                                       const WindowResolver* first = nullptr);

// The kernel name of each correlation id in `wanted` that a kernel record of
// the file has (the first such record), in one pass that keeps nothing else:
// the join of kernel-scope counter samples (kernel_metrics.h).
StatusOr<CorrelationNames> FindKernelNames(const StreamedTrace& trace,
                                           const std::unordered_set<uint64_t>& wanted);

// The summary of `traces` (each file's own for one, the aggregate for
// several), filling each one's info().
StatusOr<SummaryReport> SummarizeStreams(std::span<StreamedTrace* const> traces,
                                         const SummaryOptions& options = {},
                                         StreamStats* stats = nullptr);

}  // namespace cutrace::analysis
