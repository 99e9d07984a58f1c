// Windows of streamed files (analysis/region.h): three passes over each
// file's packets, each decoding only the kinds it reads (TracePass
// set_kinds()), so a window costs a fraction of the report it restricts.
#include <algorithm>

#include "analysis/region.h"
#include "analysis/stream_summary.h"
#include "collector/trace_pass.h"

namespace cutrace::analysis {

namespace {

constexpr uint32_t Bit(RecordKind k) { return 1u << static_cast<uint32_t>(k); }

// One pass's records into the resolver.
class ResolverSink final : public RecordSink {
 public:
  ResolverSink(WindowResolver* r, size_t file, const TraceData* names, bool starts)
      : r_(r), file_(file), names_(names), starts_(starts) {}
  void Kernels(std::span<const KernelRecord> x) override { Ops(x); }
  void Memcpys(std::span<const MemcpyRecord> x) override { Ops(x); }
  void Memsets(std::span<const MemsetRecord> x) override { Ops(x); }
  void Ranges(std::span<const RangeRecord> x) override {
    for (const RangeRecord& r : x) r_->Range(file_, *names_, r);
  }
  void ApiCalls(std::span<const ApiRecord> x) override {
    if (calls_)
      r_->Apis(file_, *names_, x);
    else if (starts_)
      for (const ApiRecord& a : x) r_->SeeStart(a.start_ns);
  }
  void Syncs(std::span<const SyncRecord> x) override {
    if (starts_)
      for (const SyncRecord& s : x) r_->SeeStart(s.start_ns);
  }
  // WireFields::kTimes, which passes 2 and 3 alone ask for (RunPass()):
  // the calls' or the operations' columns.
  void Times(RecordKind kind, const TimesRun& run) override {
    if (kind != RecordKind::kApi) {
      if (ops_) r_->OpTimes(file_, run);
    } else if (calls_) {
      r_->ApiTimes(file_, *names_, run);
    }
  }
  void EndKind(RecordKind) override {}
  void Batch(const RecordBatch& b, uint32_t kinds) {
    if (kinds & Bit(RecordKind::kKernel)) Kernels(b.kernels);
    if (kinds & Bit(RecordKind::kMemcpy)) Memcpys(b.memcpys);
    if (kinds & Bit(RecordKind::kMemset)) Memsets(b.memsets);
    if (kinds & Bit(RecordKind::kRange)) Ranges(b.ranges);
    if (kinds & Bit(RecordKind::kApi)) ApiCalls(b.api_calls);
    if (kinds & Bit(RecordKind::kSync)) Syncs(b.syncs);
  }
  bool calls_ = false;  // pass 2: API calls go to Api()
  bool ops_ = false;    // pass 3: GPU operations go to Op()

 private:
  template <typename R>
  void Ops(std::span<const R> x) {
    if (ops_)
      r_->Ops(file_, x);
    else if (starts_)
      for (const R& o : x) r_->SeeStart(o.start_ns);
  }
  WindowResolver* r_;
  size_t file_;
  const TraceData* names_;
  bool starts_;
};

enum class Pass { kRanges, kCalls, kOps };

Status RunPass(const StreamedTrace& t, size_t file, WindowResolver* r, Pass pass) {
  TraceData names;  // strings, as the pass reads them
  StatusOr<std::unique_ptr<TracePass>> started = TracePass::Start(t.bytes(), t.info().path, &names);
  if (!started.ok()) return started.status();
  TracePass& p = **started;
  // The trace start from the packets' start hints, unless one does not say.
  const bool starts = pass == Pass::kRanges && t.start_hint() == 0;
  uint32_t kinds = 0;
  switch (pass) {
    case Pass::kRanges:
      kinds = starts ? kAllRecordKinds : Bit(RecordKind::kRange);
      break;
    case Pass::kCalls: kinds = Bit(RecordKind::kApi); break;
    case Pass::kOps:
      kinds = Bit(RecordKind::kKernel) | Bit(RecordKind::kMemcpy) | Bit(RecordKind::kMemset);
      break;
  }
  // Passes 2 and 3 read the calls' and operations' times, correlation ids
  // and (calls) names only, as columns.
  // A split merged file's calls as records: their threads say whose they are.
  const bool records = pass == Pass::kRanges || (pass == Pass::kCalls && r->split(file));
  p.set_fields(records ? WireFields::kReports : WireFields::kTimes);
  p.set_kinds(kinds);
  ResolverSink sink(r, file, &names, starts);
  sink.calls_ = pass == Pass::kCalls;
  sink.ops_ = pass == Pass::kOps;
  RecordBatch batch;
  for (;;) {
    batch.clear();
    switch (p.NextToSink(&sink, &batch)) {
      case TracePass::Step::kSink: break;
      case TracePass::Step::kBatch: sink.Batch(batch, kinds); break;
      case TracePass::Step::kEnd: return Status::Ok();
      case TracePass::Step::kBroken:
        return Status::Error(t.info().path + ": a batch is malformed halfway; cannot choose a window");
    }
  }
}

}  // namespace

StatusOr<Window> ResolveStreamedWindow(std::span<StreamedTrace* const> traces,
                                       const RegionSpec& spec, StatusOr<Window>* steady,
                                       const WindowResolver* first) {
  WindowResolver r(spec, traces.size());
  for (size_t f = 0; f < traces.size(); ++f) r.SetBandsOf(f, traces[f]->info().header);
  if (steady && !spec.active()) r.KeepRanges();
  if (first == nullptr || !r.ReplayRanges(*first)) {
    for (size_t f = 0; f < traces.size(); ++f) {
      if (traces[f]->start_hint() != 0) r.SeeStart(traces[f]->start_hint());
      Status s = RunPass(*traces[f], f, &r, Pass::kRanges);
      if (!s.ok()) return s;
    }
  }
  Status s = r.EndRanges();
  if (!s.ok()) return s;
  if (spec.active()) {
    for (size_t f = 0; f < traces.size(); ++f) {
      s = RunPass(*traces[f], f, &r, Pass::kCalls);
      if (!s.ok()) return s;
    }
    r.EndCalls();
    for (size_t f = 0; f < traces.size(); ++f) {
      s = RunPass(*traces[f], f, &r, Pass::kOps);
      if (!s.ok()) return s;
    }
  }
  Window w = r.Finish();
  if (spec.active() && w.parts.empty()) return Status::Error("the window holds no time of the trace");
  // The steady state's window from the ranges this pass kept.
  if (steady && !spec.active() && w.steady)
    *steady = ResolveStreamedWindow(traces, SteadySpec(*w.steady), nullptr, &r);
  return w;
}

}  // namespace cutrace::analysis
