// SummaryHook (feature_hooks.h): summary mode's aggregation, intervals and
// OpenMetrics file.
#include "collector/openmetrics.h"
#include "injection/log.h"
#include "injection/process_state.h"
#include "injection/production/feature_hooks.h"

namespace cutrace::injection {

SummaryHook::SummaryHook(HookContext* ctx, uint64_t interval_ns, std::string openmetrics_file)
    : ctx_(ctx),
      openmetrics_file_(std::move(openmetrics_file)),
      aggregator_(std::make_unique<SummaryAggregator>()),
      due_(static_cast<int64_t>(interval_ns)) {
  if (!openmetrics_file_.empty()) totals_ = std::make_unique<SummaryTotals>();
}

void SummaryHook::Begin(int64_t now) {
  due_.Restart(now);
  aggregator_->Begin(now);
}

bool SummaryHook::OnBatch(RecordBatch& batch, StringInterner&, int64_t) {
  aggregator_->Add(batch);
  aggregate_bytes_.store(aggregator_->memory_bytes(), std::memory_order_relaxed);
  return true;  // aggregated, not written
}

void SummaryHook::OnFinal(bool, const std::string&) { final_ = true; }

void SummaryHook::AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner& interner, int64_t now) {
  const bool asked = std::exchange(now_, false);
  const bool final_now = std::exchange(final_, false);
  if (asked || final_now || due_.Due(now)) {
    Emit(**writer, interner, now);
    due_.Restart(now);
  }
}

void SummaryHook::Emit(TraceWriter& writer, StringInterner& interner, int64_t now) {
  SummaryInfo s = aggregator_->Close(now);
  aggregate_bytes_.store(aggregator_->memory_bytes(), std::memory_order_relaxed);
  s.has_statistics = true;
  s.statistics = ctx_->stats(writer);
  static_cast<void>(writer.WriteSummary(s, interner));  // errors surface at Finalize
  static_cast<void>(writer.Flush());
  if (totals_) {
    auto name = [&](uint32_t id) {
      std::string raw = interner.Lookup(id);
      std::string demangled = Demangle(raw);
      return demangled.empty() ? raw : demangled;
    };
    totals_->Add(s, name, [&](uint32_t id) { return interner.Lookup(id); });
    WriteOpenMetrics(s.statistics);
  }
}

void SummaryHook::WriteOpenMetrics(const StatsInfo& stats) {
  MetricLabels labels = {{"host", ctx_->header.host}, {"pid", std::to_string(ctx_->pid)}};
  if (!ctx_->header.rank.empty()) labels.push_back({"rank", ctx_->header.rank});
  Status s = WriteFileAtomically(openmetrics_file_, RenderOpenMetrics(*totals_, labels, &stats));
  if (!s.ok()) LogOnce(Said().openmetrics_failed, LogLevel::kWarn, "CUTRACE_OPENMETRICS_FILE: %s", s.message().c_str());
}

}  // namespace cutrace::injection
