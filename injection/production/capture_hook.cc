// CaptureHook (feature_hooks.h): an on-demand capture into a side file.
#include "injection/log.h"
#include "injection/production/feature_hooks.h"

namespace cutrace::injection {

bool CaptureHook::OnBatch(RecordBatch& batch, StringInterner& interner, int64_t) {
  if (capture_) static_cast<void>(capture_->Write(batch, interner));
  return false;
}

void CaptureHook::OnFinal(bool, const std::string&) {
  if (capture_) end_ = true;
}

void CaptureHook::AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner&, int64_t now) {
  const bool start = std::exchange(start_, false);
  const bool end = std::exchange(end_, false);
  if (start && !capture_) {
    HeaderInfo h = ctx_->header;
    h.chunk_reason = "capture";
    h.chunk_index = 0;
    h.previous_chunk.clear();
    for (int attempt = 0; attempt < 16 && !capture_; ++attempt) {
      auto created = SideTrace::Create(ctx_->SidePath("capture", ++captures_), h, ctx_->devices);
      if (created.ok()) capture_ = std::move(created).value();
    }
    if (!capture_) Log(LogLevel::kWarn, "cannot create a capture file beside %s", ctx_->path.c_str());
  }
  if (end && capture_) {
    EndInfo info;
    info.reason = "capture";
    info.end_anchor.trace_ns = now;
    static_cast<void>(capture_->Finish(ctx_->stats(**writer), info));
    Log(LogLevel::kInfo, "capture: wrote %s (%llu records)", capture_->path().c_str(),
        static_cast<unsigned long long>(capture_->records()));
    ctx_->AddSideFile(capture_->path());
    capture_.reset();
  }
}

}  // namespace cutrace::injection
