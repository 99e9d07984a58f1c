// Summaries of streamed trace files: see stream_summary.h.
#include "analysis/stream_summary.h"

#include <algorithm>
#include <limits>

#include "collector/trace_loader.h"
#include "collector/trace_pass.h"

namespace cutrace::analysis {

StatusOr<std::unique_ptr<StreamedTrace>> StreamedTrace::Open(const std::string& path) {
  StatusOr<std::unique_ptr<FileBytes>> file = FileBytes::Open(path);
  if (!file.ok()) return file.status();
  std::unique_ptr<StreamedTrace> t(new StreamedTrace());
  t->file_ = std::move(file).value();
  t->bytes_ = t->file_->bytes();
  Status s = t->Init(path);
  if (!s.ok()) return s;
  return t;
}

StatusOr<std::unique_ptr<StreamedTrace>> StreamedTrace::FromBytes(std::string_view bytes,
                                                                  std::string name) {
  std::unique_ptr<StreamedTrace> t(new StreamedTrace());
  t->bytes_ = bytes;
  Status s = t->Init(std::move(name));
  if (!s.ok()) return s;
  return t;
}

Status StreamedTrace::Init(std::string name) {
  StatusOr<std::unique_ptr<TracePass>> pass = TracePass::Start(bytes_, std::move(name), &info_);
  if (!pass.ok()) return pass.status();
  // Until a summary reads the file, info_.read tells what the framing shows.
  std::vector<uint64_t> hints = PacketStartHints(bytes_, &info_.read);
  future_min_.assign(hints.size() + 1, std::numeric_limits<uint64_t>::max());
  for (size_t i = hints.size(); i-- > 0;) future_min_[i] = std::min(hints[i], future_min_[i + 1]);
  return Status::Ok();
}

namespace {

// Records straight from the decoder into the engine, a chunk at a time.
class EngineSink final : public RecordSink {
 public:
  explicit EngineSink(ReportEngine* engine) : engine_(engine) {}
  void Kernels(std::span<const KernelRecord> r) override {
    engine_->OnKernels(r);
    events += r.size();
  }
  void Memcpys(std::span<const MemcpyRecord> r) override {
    engine_->OnMemcpys(r);
    events += r.size();
  }
  void Memsets(std::span<const MemsetRecord> r) override {
    engine_->OnMemsets(r);
    events += r.size();
  }
  void Ranges(std::span<const RangeRecord> r) override {
    engine_->OnRanges(r);
    events += r.size();
  }
  void ApiCalls(std::span<const ApiRecord> r) override {
    engine_->OnApiCalls(r);
    events += r.size();
  }
  void Syncs(std::span<const SyncRecord> r) override {
    engine_->OnSyncs(r);
    events += r.size();
  }
  void EndKind(int kind) override { engine_->EndKind(kind); }
  uint64_t events = 0;

 private:
  ReportEngine* engine_;
};

// A batch broke halfway through the fast path (never in a file cutrace
// wrote): load the files and compute the same report the plain way.
StatusOr<SummaryReport> SummarizeLoaded(std::span<StreamedTrace* const> traces,
                                        const SummaryOptions& options) {
  std::vector<TraceData> loaded;
  loaded.reserve(traces.size());
  for (StreamedTrace* t : traces) {
    StatusOr<TraceData> data = LoadTraceFromBytes(t->bytes(), t->info().path);
    if (!data.ok()) return data.status();
    loaded.push_back(std::move(data).value());
  }
  std::vector<const TraceData*> set;
  for (const TraceData& t : loaded) set.push_back(&t);
  SummaryReport report = ComputeSummary(set, options);
  for (size_t i = 0; i < traces.size(); ++i) {
    loaded[i].records.clear();
    traces[i]->info() = std::move(loaded[i]);
  }
  return report;
}

}  // namespace

StatusOr<SummaryReport> SummarizeStreams(std::span<StreamedTrace* const> traces,
                                         const SummaryOptions& options, StreamStats* stats) {
  struct Reading {
    StreamedTrace* trace;
    std::unique_ptr<TracePass> pass;
    bool done = false;
    // The earliest start any packet after the ones handled can hold.
    uint64_t future() const {
      if (done) return std::numeric_limits<uint64_t>::max();
      const std::vector<uint64_t>& m = trace->future_min();
      const size_t next = static_cast<size_t>(pass->packet_index()) + 1;
      return next < m.size() ? m[next] : std::numeric_limits<uint64_t>::max();
    }
  };
  std::vector<Reading> reading;
  for (StreamedTrace* t : traces) {
    StatusOr<std::unique_ptr<TracePass>> pass =
        TracePass::Start(t->bytes(), t->info().path, &t->info());
    if (!pass.ok()) return pass.status();
    (*pass)->set_fields(WireFields::kReports);
    reading.push_back({t, std::move(pass).value()});
  }
  ReportEngine engine(SummaryParts(), GapOptions{0, options.top_gaps});
  EngineSink sink(&engine);
  RecordBatch batch;
  StreamStats local;
  for (;;) {
    // Advance the file whose packets still to come start earliest: it is
    // the one holding the others back.
    size_t best = reading.size();
    for (size_t i = 0; i < reading.size(); ++i)
      if (!reading[i].done && (best == reading.size() || reading[i].future() < reading[best].future()))
        best = i;
    if (best == reading.size()) break;
    Reading& r = reading[best];
    batch.clear();
    engine.Begin(best, r.trace->info());
    switch (r.pass->NextToSink(&sink, &batch)) {
      case TracePass::Step::kSink: ++local.batches; break;
      case TracePass::Step::kBatch:
        engine.Add(best, r.trace->info(), batch);
        local.events += batch.size();
        ++local.batches;
        break;
      case TracePass::Step::kEnd:
        r.pass->Finish();
        r.done = true;
        break;
      case TracePass::Step::kBroken:
        return SummarizeLoaded(traces, options);
    }
    uint64_t limit = std::numeric_limits<uint64_t>::max();
    for (const Reading& other : reading) limit = std::min(limit, other.future());
    engine.Release(limit);
  }
  std::vector<const TraceData*> infos;
  for (StreamedTrace* t : traces) infos.push_back(&t->info());
  SummaryReport report = SummaryFromEngine(engine, infos, options);
  local.peak_held = engine.peak_held();
  local.events += sink.events;
  if (stats) *stats = local;
  return report;
}

}  // namespace cutrace::analysis
