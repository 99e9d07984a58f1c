// FlightRecorderHook (feature_hooks.h): the ring and its dumps.
#include "injection/clock.h"
#include "injection/log.h"
#include "injection/production/feature_hooks.h"

namespace cutrace::injection {

bool FlightRecorderHook::OnBatch(RecordBatch& batch, StringInterner&, int64_t now) {
  ring_->Add(batch, now);
  ring_bytes_.store(ring_->bytes(), std::memory_order_relaxed);
  return false;
}

void FlightRecorderHook::AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner& interner, int64_t) {
  std::string reason;
  reason.swap(dump_reason_);
  if (!reason.empty()) Dump(reason, **writer, interner);
}

void FlightRecorderHook::OnFinal(bool abnormal, const std::string& dump_reason) {
  if (abnormal) dump_reason_ = dump_reason;
}

void FlightRecorderHook::Dump(const std::string& reason, TraceWriter& writer, StringInterner& interner) {
  HeaderInfo h = ctx_->header;
  h.chunk_reason = reason;
  h.chunk_index = 0;
  h.previous_chunk.clear();
  std::string path;
  std::unique_ptr<SideTrace> side;
  for (int attempt = 0; attempt < 16 && !side; ++attempt) {
    path = ctx_->SidePath("flight", ++dumps_);
    auto created = SideTrace::Create(path, h, ctx_->devices);
    if (created.ok()) side = std::move(created).value();
  }
  if (!side) {
    Log(LogLevel::kWarn, "cannot write the flight recorder's dump (%s)", path.c_str());
    return;
  }
  Status s = ring_->Dump(side.get(), interner);
  EndInfo end;
  end.reason = reason;
  end.end_anchor.trace_ns = ctx_->now();
  end.end_anchor.monotonic_ns = static_cast<int64_t>(MonotonicNs());
  end.end_anchor.realtime_ns = static_cast<int64_t>(RealtimeNs());
  if (s.ok()) s = side->Finish(ctx_->stats(writer), end);
  if (!s.ok()) {
    Log(LogLevel::kWarn, "flight recorder dump %s is incomplete: %s", path.c_str(), s.message().c_str());
  } else {
    Log(LogLevel::kInfo, "flight recorder: wrote %s (%llu records, %s)", path.c_str(),
        static_cast<unsigned long long>(side->records()), reason.c_str());
  }
  ctx_->AddSideFile(path);
}

}  // namespace cutrace::injection
