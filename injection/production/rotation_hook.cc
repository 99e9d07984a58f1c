// RotationHook (feature_hooks.h): the trace's chunks, per continuous-mode
// window or by size and age.
#include <unistd.h>

#include "injection/clock.h"
#include "injection/log.h"
#include "injection/production/feature_hooks.h"

namespace cutrace::injection {

void RotationHook::Decorate(HeaderInfo* h, const std::string& path, int64_t now) {
  series_ = std::make_unique<ChunkSeries>(path, *h, options_);
  *h = series_->FirstHeader();
  series_->AdoptFirst(now);
}

void RotationHook::AddDevice(const DeviceInfo& device) {
  if (series_) series_->AddDevice(device);
}

bool RotationHook::OnBatch(RecordBatch& batch, StringInterner&, int64_t) {
  if (!between_windows_) return false;
  // Delivered after its window closed (CUPTI flushed late): counted, not
  // written into a finished chunk.
  outside_window_.fetch_add(batch.size(), std::memory_order_relaxed);
  return true;
}

void RotationHook::OnFinal(bool, const std::string&) { final_ = true; }

void RotationHook::AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner& interner, int64_t now) {
  const bool open = std::exchange(open_, false);
  const bool close = std::exchange(close_, false);
  const bool final_now = std::exchange(final_, false);
  if (continuous_) {
    if (open && placeholder_ && !between_windows_) {
      // Capture ranges: chunk 0 held nothing (no kind was on); it goes, and
      // the first range is chunk 1.
      EndInfo end;
      end.reason = "capture-range: before the first range";
      end.end_anchor.trace_ns = now;
      static_cast<void>(series_->Finish(writer->get(), ctx_->stats(**writer), end));
      ::unlink(series_->current_path().c_str());
      between_windows_ = true;
      file_finished_.store(true);
    }
    placeholder_ = placeholder_ && !open;
    if (close && !between_windows_) {
      EndInfo end;
      end.reason = close_reason_;
      end.end_anchor.trace_ns = now;
      end.end_anchor.monotonic_ns = static_cast<int64_t>(MonotonicNs());
      end.end_anchor.realtime_ns = static_cast<int64_t>(RealtimeNs());
      static_cast<void>(series_->Finish(writer->get(), ctx_->stats(**writer), end));
      between_windows_ = true;
      file_finished_.store(true);
    }
    if (open && between_windows_) {
      auto next = series_->OpenNext(interner, open_reason_, now);
      if (next.ok()) {
        *writer = std::move(next).value();
        between_windows_ = false;
        file_finished_.store(false);
        if (ctx_->chunk_opened) ctx_->chunk_opened(series_->current_path());
      } else {
        Log(LogLevel::kWarn, "cannot start the next window's chunk: %s", next.status().message().c_str());
      }
    }
    return;
  }
  if (series_ && series_->options().rotates() && !final_now && series_->Due(**writer, now)) {
    EndInfo end;
    end.reason = "rotate";
    end.end_anchor.trace_ns = now;
    end.end_anchor.monotonic_ns = static_cast<int64_t>(MonotonicNs());
    end.end_anchor.realtime_ns = static_cast<int64_t>(RealtimeNs());
    static_cast<void>(series_->Finish(writer->get(), ctx_->stats(**writer), end));
    const bool by_size = series_->options().max_file_bytes != 0 &&
                         (*writer)->bytes_written() >= series_->options().max_file_bytes;
    auto next = series_->OpenNext(interner, by_size ? "size" : "time", now);
    if (next.ok()) {
      *writer = std::move(next).value();
    } else {
      Log(LogLevel::kWarn, "cannot rotate the trace: %s; tracing stops", next.status().message().c_str());
    }
  }
}

}  // namespace cutrace::injection
