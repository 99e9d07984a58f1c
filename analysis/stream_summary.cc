// Summaries of streamed trace files: see stream_summary.h.
#include "analysis/stream_summary.h"

#include <algorithm>
#include <limits>
#include <string>

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
  void Kernels(std::span<const KernelRecord> r) override { Feed(&ReportEngine::OnKernels, r); }
  void Memcpys(std::span<const MemcpyRecord> r) override { Feed(&ReportEngine::OnMemcpys, r); }
  void Memsets(std::span<const MemsetRecord> r) override { Feed(&ReportEngine::OnMemsets, r); }
  void Ranges(std::span<const RangeRecord> r) override { Feed(&ReportEngine::OnRanges, r); }
  void ApiCalls(std::span<const ApiRecord> r) override { Feed(&ReportEngine::OnApiCalls, r); }
  void Syncs(std::span<const SyncRecord> r) override { Feed(&ReportEngine::OnSyncs, r); }
  void EndKind(RecordKind kind) override { engine_->EndKind(kind); }
  uint64_t events = 0;

 private:
  // A chunk of one kind into the engine, counted.
  template <class R>
  void Feed(void (ReportEngine::*on)(std::span<const R>), std::span<const R> r) {
    (engine_->*on)(r);
    events += r.size();
  }

  ReportEngine* engine_;
};

// A batch broke halfway through the fast path (never in a file cutrace
// wrote): load the files and feed the engine the plain way.
StatusOr<std::unique_ptr<ReportEngine>> StreamLoaded(std::span<StreamedTrace* const> traces,
                                                     const ReportParts& parts,
                                                     const GapOptions& gaps,
                                                     std::shared_ptr<const Window> window,
                                                     std::shared_ptr<const Window> second) {
  auto engine = std::make_unique<ReportEngine>(parts, gaps, window);
  engine->AddSweep(second);
  for (size_t i = 0; i < traces.size(); ++i) {
    StatusOr<TraceData> data = LoadTraceFromBytes(traces[i]->bytes(), traces[i]->info().path);
    if (!data.ok()) return data.status();
    RecordBatch records = std::move(data->records);
    data->records.clear();
    traces[i]->info() = std::move(data).value();
    engine->Add(i, traces[i]->info(), records);
    engine->AddSummaries(i, traces[i]->info());
  }
  engine->Finish();
  return engine;
}

}  // namespace

StatusOr<std::unique_ptr<ReportEngine>> StreamTraces(std::span<StreamedTrace* const> traces,
                                                     const ReportParts& parts,
                                                     const GapOptions& gaps, StreamStats* stats,
                                                     std::shared_ptr<const Window> window,
                                                     std::shared_ptr<const Window> second) {
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
    // Occupancy reads the launch configuration, which kReports skips.
    (*pass)->set_fields(parts.occupancy ? WireFields::kAll : WireFields::kReports);
    reading.push_back({t, std::move(pass).value()});
  }
  auto engine = std::make_unique<ReportEngine>(parts, gaps, window);
  engine->AddSweep(second);
  EngineSink sink(engine.get());
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
    engine->Begin(best, r.trace->info());
    switch (r.pass->NextToSink(&sink, &batch)) {
      case TracePass::Step::kSink: ++local.batches; break;
      case TracePass::Step::kBatch:
        engine->Add(best, r.trace->info(), batch);
        local.events += batch.size();
        ++local.batches;
        break;
      case TracePass::Step::kEnd:
        r.pass->Finish();
        r.done = true;
        break;
      case TracePass::Step::kBroken:
        return StreamLoaded(traces, parts, gaps, window, second);
    }
    // A batch that says it starts later than it does (EventBatch
    // min_start_ns) had events released ahead of it: the order is broken.
    if (engine->late_events())
      return Status::Error(r.trace->info().path + ": packet " +
                           std::to_string(r.pass->packet_index()) +
                           " holds events earlier than its batch's min_start_ns; the trace is corrupt");
    uint64_t limit = std::numeric_limits<uint64_t>::max();
    for (const Reading& other : reading) limit = std::min(limit, other.future());
    engine->Release(limit);
  }
  // Summary-mode aggregates need no time order: the pass has read them all.
  for (size_t i = 0; i < traces.size(); ++i) engine->AddSummaries(i, traces[i]->info());
  engine->Finish();
  local.peak_held = engine->peak_held();
  local.events += sink.events;
  if (stats) *stats = local;
  return engine;
}

StatusOr<CorrelationNames> FindKernelNames(const StreamedTrace& trace,
                                           const std::unordered_set<uint64_t>& wanted) {
  class Sink final : public RecordSink {
   public:
    Sink(const std::unordered_set<uint64_t>& wanted, CorrelationNames* out)
        : wanted_(wanted), out_(out) {}
    void Kernels(std::span<const KernelRecord> r) override {
      for (const KernelRecord& k : r)
        if (k.correlation_id && wanted_.count(k.correlation_id))
          out_->emplace(k.correlation_id, k.name_id);
    }
    void Memcpys(std::span<const MemcpyRecord>) override {}
    void Memsets(std::span<const MemsetRecord>) override {}
    void Ranges(std::span<const RangeRecord>) override {}
    void ApiCalls(std::span<const ApiRecord>) override {}
    void Syncs(std::span<const SyncRecord>) override {}
    void EndKind(RecordKind) override {}

   private:
    const std::unordered_set<uint64_t>& wanted_;
    CorrelationNames* out_;
  };
  CorrelationNames names;
  if (wanted.empty()) return names;
  TraceData info;
  StatusOr<std::unique_ptr<TracePass>> pass = TracePass::Start(trace.bytes(), trace.info().path, &info);
  if (!pass.ok()) return pass.status();
  Sink sink(wanted, &names);
  RecordBatch batch;
  for (;;) {
    batch.clear();
    const TracePass::Step step = (*pass)->NextToSink(&sink, &batch);
    if (step == TracePass::Step::kEnd) break;
    if (step == TracePass::Step::kBatch || step == TracePass::Step::kBroken)
      sink.Kernels(batch.kernels);  // a broken batch's partial records may repeat: first wins
    if (step == TracePass::Step::kBroken) break;
  }
  return names;
}

StatusOr<SummaryReport> SummarizeStreams(std::span<StreamedTrace* const> traces,
                                         const SummaryOptions& options, StreamStats* stats) {
  StatusOr<std::unique_ptr<ReportEngine>> engine =
      StreamTraces(traces, SummaryParts(), GapOptions{0, options.top_gaps}, stats);
  if (!engine.ok()) return engine.status();
  std::vector<const TraceData*> infos;
  for (StreamedTrace* t : traces) infos.push_back(&t->info());
  return SummaryFromEngine(**engine, infos, options);
}

}  // namespace cutrace::analysis
